"""Figure 8: GStencil/s of each stencil on CUDA cores (the Brick and EBISU roles) and tensor cores
(the ConvStencil role, and the 2:4-sparse one where measured), a row of panels per precision (fp64,
fp32/TF32, fp16). Given the stencils' config (stencil.kernels), each bar is the implementation at the
stencil's role depth t, the equal depth at which claim C4 compares the units (Table 3's), and a black
line marks its value at its best depth of those measured (the fusion sweep) where that is another one; without
it, each bar is the implementation at its best depth. Where the original codes ran (docs/originals.md),
their bars (hatched) stand beside the in-house ones, as the paper's."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from matplotlib.lines import Line2D

from membound.analysis.depths import span
from membound.model import peaks
from membound.model.precision import PRECISIONS
from membound.originals.rows import is_original
from membound.plots import common, style

TITLE = {True: "Figure 8: stencils at C4's equal depth t (\u2014 best depth)",
         False: "Figure 8: stencils (t: the best temporal depth of those measured)"}


def title(data: pd.DataFrame) -> str:
    """The title of `data`'s bars: at C4's equal depth where any row is at a role depth, else the best depth."""
    return TITLE["at" in data and bool((data["at"] == "role depth").any())]
WIDTHS, HEIGHT = (8.0,), 4.2
COLUMNS = ["problem", "unit", "role", "impl", "depth", "at", "depths", "best_depth", "best_value", "label", "domain", "steps",
           "metric", "value", "t_median_s", *common.KEEP]
BEST = Line2D([], [], color="k", marker="_", ls="", markersize=9, mew=2, label="at its best depth (t: label)")


def data(raw: pd.DataFrame, gpu: dict, stencils: Mapping | None = None) -> pd.DataFrame:
    """The plotted numbers: one row per stencil (in the order of `raw`), precision and (unit, role), its
    implementation at the role depth of `stencils` (config stencil.kernels; where it has no row there,
    or without `stencils`, its best depth: `at` says which), the median over repetitions; `depths`: those measured,
    `best_depth` and `best_value`: the depth of the highest median and that median."""
    rows = common.medians(raw[raw["kernel"] == "stencil"], ["problem", "precision", "unit", "role", "impl", "depth"])
    keys = ["problem", "precision", "unit", "role", "impl"]
    rows = rows.assign(depth=rows["depth"].astype(int),
                       depths=rows.groupby(keys, sort=False)["depth"].transform(span))
    best = rows.loc[rows.groupby(keys, sort=False)["value"].idxmax()].set_index(keys)
    role = rows["problem"].map(lambda p: (stencils or {}).get(p, {}).get("depth"))
    at_role = rows[rows["depth"] == role].set_index(keys)
    shown = pd.concat([at_role.assign(at="role depth"),
                       best[~best.index.isin(at_role.index)].assign(at="best depth")]).reindex(best.index)
    shown = shown.assign(best_depth=best["depth"], best_value=best["value"]).reset_index()
    order = {name: i for i, name in enumerate(shown["problem"].unique())}
    out = shown.assign(gpu=gpu["name"], order=shown["problem"].map(order),
                       label=shown["role"] + " t=" + shown["depth"].astype(str))
    return common.by_precision_order(out, ["order", "unit", "role"])[COLUMNS]


def draw(axes, data: pd.DataFrame) -> None:
    """Draw Figure 8 (one precision) into the one panel of `axes`: the bars, each labelled with its
    depth (and its best depth), and a black line at the best depth's value where that is another."""
    ax = axes[0]
    x, drawn = style.grouped_bars(ax, data, "problem")
    marked = False
    for g, bars in drawn:
        for bar, d, v, bd, bv in zip(bars, g["depth"], g["value"], g["best_depth"], g["best_value"]):
            centre = bar.get_x() + bar.get_width() / 2
            if bd != d:
                ax.plot(centre, bv, "_", color="k", markersize=9, mew=2)
                marked = True
            ax.annotate(f"t={d}" + (f", best {bd}" if bd != d else ""),
                        (centre, max(v, bv)), xytext=(0, 3), textcoords="offset points", rotation=90, ha="center",
                        va="bottom", fontsize=7)
    domains = data.groupby("problem", sort=False)["domain"].agg(lambda d: " / ".join(d.unique()))
    ax.set_xticks(x, [f"{p}\n{domains[p]}" for p in x.index], fontsize=8)   # 10240x10240 fits its group
    ax.set(ylabel=data["metric"].iloc[0],
           xlabel=f"stencil (domain); depths measured: {', '.join(sorted(set(data['depths'].astype(str))))}")
    style.bar_yscale(ax, pd.concat([data["value"], data["best_value"]]))
    ax.margins(y=0.5)   # room for the labels "t=<depth>, best <t>" below the legend
    style.legend_above(ax, 2 if is_original(data).any() else 3, [BEST] if marked else [])


def figure(data: pd.DataFrame, gpu: dict, caption: str, precisions=PRECISIONS):
    """Figure 8 of `data` (see `data`), a row per precision, with `caption` at its foot."""
    return style.facets(draw, WIDTHS, HEIGHT, data, f"{title(data)} on {gpu['name']}", caption, precisions,
                        lambda p: peaks.no_rows(gpu, p, "stencil"))
