"""Figure 8: GStencil/s of each stencil on CUDA cores (the Brick and EBISU roles) and tensor cores
(the ConvStencil role), each bar labelled with its temporal blocking depth t; where the original
codes ran (docs/originals.md), their bars (hatched) beside the in-house ones, as the paper's."""

from __future__ import annotations

import pandas as pd

from membound.originals.rows import is_original
from membound.plots import common, style
from membound.run.measure import with_later_columns

TITLE = "Figure 8: FP64 stencils (t: temporal blocking depth)"
WIDTHS, HEIGHT = (8.0,), 4.2
COLUMNS = ["problem", "unit", "role", "impl", "depth", "label", "domain", "steps", "metric", "value", "t_median_s",
           *common.KEEP]


def data(raw: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """The plotted numbers: one row per stencil (in the order of `raw`), precision and (unit, role),
    the median over repetitions (rows from before the precision axis: fp64)."""
    raw = with_later_columns(raw)
    rows = common.medians(raw[raw["kernel"] == "stencil"], ["problem", "precision", "unit", "role", "impl", "depth"])
    order = {name: i for i, name in enumerate(rows["problem"].unique())}
    out = rows.assign(depth=rows["depth"].astype(int), gpu=gpu["name"], order=rows["problem"].map(order),
                      label=rows["role"] + " t=" + rows["depth"].astype(int).astype(str))
    return out.sort_values(["order", "unit", "role"])[COLUMNS].reset_index(drop=True)


def draw(axes, data: pd.DataFrame) -> None:
    """Draw Figure 8 into the one panel of `axes`."""
    ax = axes[0]
    x, drawn = style.grouped_bars(ax, data, "problem")
    for g, bars in drawn:
        ax.bar_label(bars, [f"t={d}" for d in g["depth"]], fontsize=7, rotation=90, padding=2)
    domains = data.groupby("problem", sort=False)["domain"].agg(lambda d: " / ".join(d.unique()))
    ax.set_xticks(x, [f"{p}\n{domains[p]}" for p in x.index])
    ax.set(ylabel=data["metric"].iloc[0], xlabel="stencil (domain)")
    style.bar_yscale(ax, data["value"])
    ax.margins(y=0.15)
    style.legend_above(ax, 2 if is_original(data).any() else 3)   # the original codes' series: more of them


def figure(data: pd.DataFrame, gpu: dict, caption: str):
    """Figure 8 of `data` (see `data`) with `caption` at its foot."""
    return style.single(draw, WIDTHS, HEIGHT, data,
                        f"{TITLE} on {gpu['name']}", caption)
