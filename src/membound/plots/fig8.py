"""Figure 8: GStencil/s of each stencil on CUDA cores (the Brick and EBISU roles) and tensor cores
(the ConvStencil role), each implementation at its best temporal depth t of those measured (the
fusion sweep), its bar labelled with it, a row of panels per precision (fp64, fp32/TF32, fp16); where
the original codes ran (docs/originals.md), their bars (hatched) beside the in-house ones, as the paper's."""

from __future__ import annotations

import pandas as pd

from membound.analysis.depths import span
from membound.model import peaks
from membound.model.precision import PRECISIONS
from membound.originals.rows import is_original
from membound.plots import common, style

TITLE = "Figure 8: stencils (t: the best temporal depth of those measured)"
WIDTHS, HEIGHT = (8.0,), 4.2
COLUMNS = ["problem", "unit", "role", "impl", "depth", "depths", "label", "domain", "steps", "metric",
           "value", "t_median_s", *common.KEEP]


def data(raw: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """The plotted numbers: one row per stencil (in the order of `raw`), precision and (unit, role), its
    implementation at the depth of the highest median over repetitions; `depths`: those measured."""
    rows = common.medians(raw[raw["kernel"] == "stencil"], ["problem", "precision", "unit", "role", "impl", "depth"])
    keys = ["problem", "precision", "unit", "role", "impl"]
    rows = rows.assign(depth=rows["depth"].astype(int),
                       depths=rows.groupby(keys, sort=False)["depth"].transform(span))
    best = rows.loc[rows.groupby(keys, sort=False)["value"].idxmax()]
    order = {name: i for i, name in enumerate(best["problem"].unique())}
    out = best.assign(gpu=gpu["name"], order=best["problem"].map(order),
                      label=best["role"] + " t=" + best["depth"].astype(str))
    return common.by_precision_order(out, ["order", "unit", "role"])[COLUMNS]


def draw(axes, data: pd.DataFrame) -> None:
    """Draw Figure 8 (one precision) into the one panel of `axes`."""
    ax = axes[0]
    x, drawn = style.grouped_bars(ax, data, "problem")
    for g, bars in drawn:
        ax.bar_label(bars, [f"t={d}" + (f" of {ds}" if str(ds) != str(d) else "") for d, ds in zip(g["depth"], g["depths"])],
                     fontsize=7, rotation=90, padding=2)
    domains = data.groupby("problem", sort=False)["domain"].agg(lambda d: " / ".join(d.unique()))
    ax.set_xticks(x, [f"{p}\n{domains[p]}" for p in x.index], fontsize=8)   # 10240x10240 fits its group
    ax.set(ylabel=data["metric"].iloc[0], xlabel="stencil (domain)")
    style.bar_yscale(ax, data["value"])
    ax.margins(y=0.3)   # room for the labels "t=<best> of <depths>"
    style.legend_above(ax, 2 if is_original(data).any() else 3)   # the original codes' series: more of them


def figure(data: pd.DataFrame, gpu: dict, caption: str, precisions=PRECISIONS):
    """Figure 8 of `data` (see `data`), a row per precision, with `caption` at its foot."""
    return style.facets(draw, WIDTHS, HEIGHT, data, f"{TITLE} on {gpu['name']}", caption, precisions,
                        lambda p: peaks.no_rows(gpu, p, "stencil"))
