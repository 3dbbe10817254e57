"""The look shared by the paper's figures: colours and names of the two units, grouped bars, legends
that cover no data, the panel grid (a row per precision where a figure facets by it) and the
caption footer."""

from __future__ import annotations

import math
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from membound.model.precision import PRECISIONS  # noqa: E402
from membound.originals.rows import ORIGINAL, is_original  # noqa: E402

UNIT_LABEL = {"cuda_core": "CUDA cores", "tensor_core": "tensor cores"}
UNIT_COLOR = {"cuda_core": "C0", "tensor_core": "C3"}
UNIT_CMAP = {"cuda_core": "Blues", "tensor_core": "Reds"}

plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "legend.fontsize": 8, "axes.grid": True,
                     "grid.linewidth": 0.3, "axes.axisbelow": True})


def series_label(unit: str, role: str, impl: str) -> str:
    """Legend label of one (unit, role) series: the implementation that ran and the paper's baseline whose
    role it plays (membound's own kernels, not the published codes, except where the impl is a library);
    for an original code's rows (docs/originals.md), the code itself."""
    if impl.endswith(ORIGINAL):
        return f"{UNIT_LABEL[unit]}: {impl} (the original {role})"
    return f"{UNIT_LABEL[unit]}: {impl} ({role} role)"


def times(speedup: float) -> str:
    """A speedup as '1.23x' ('n/a' when it is NaN, e.g. without tensor-core rows)."""
    return "n/a" if math.isnan(speedup) else f"{speedup:.2f}x"


def interval(estimate: float, low: float, high: float) -> str:
    """An estimate and its 95% interval as '0.995x [0.992, 0.998]', three significant digits as in
    claims.md ('n/a' when the estimate is NaN)."""
    return "n/a" if math.isnan(estimate) else f"{estimate:.3g}x [{low:.3g}, {high:.3g}]"


def shades(pairs) -> dict:
    """A colour per (unit, role, ...) key: shades of the unit's colour map, darkest first."""
    out = {}
    for unit in UNIT_CMAP:
        mine = [p for p in pairs if p[0] == unit]
        cmap = plt.get_cmap(UNIT_CMAP[unit])
        out.update({p: cmap(x) for p, x in zip(mine, np.linspace(0.8, 0.45, max(len(mine), 2)))})
    return out


def grouped_bars(ax, data: pd.DataFrame, key: str):
    """A bar per row of `data` (column `value`): one group per `key` value along x, in order of
    appearance, one bar per (unit, role) series in each group, an original code's (hatched) after
    the in-house one of its role. Returns the group positions (a Series indexed by `key`) and, per
    series, its rows and its bars."""
    x = pd.Series(np.arange(data[key].nunique()), index=data[key].unique())
    series = list(data.groupby(["unit", "role", is_original(data).rename("original")]))
    colors = shades([triple for triple, _ in series])
    width = 0.8 / len(series)
    drawn = []
    for k, ((unit, role, original), g) in enumerate(series):
        bars = ax.bar(x[g[key]] + (k - (len(series) - 1) / 2) * width, g["value"], width,
                      color=colors[(unit, role, original)], hatch="///" if original else None,
                      label=series_label(unit, role, "/".join(g["impl"].unique())))
        drawn.append((g, bars))
    ax.set_xlim(-0.6, len(x) - 0.4)
    ax.grid(axis="x", visible=False)
    return x, drawn


def bar_yscale(ax, values) -> None:
    """Log scale for bars whose heights span more than a factor 30, else linear from 0."""
    v = pd.Series(values)
    v = v[v > 0]
    if len(v) and v.max() / v.min() > 30:
        ax.set_yscale("log")


def size_sweep(ax, data: pd.DataFrame, x: str, side: str, split: float, xlabel: str, split_label: str) -> None:
    """One line per (unit, role) of `value` against the size column `x` (MB, log2 axis), a dashed line
    at `split` MB and, either side of it (boolean column `side`), the CUDA-core speedup t_TC/t_CC of
    column median_speedup with its 95% interval (the claims', Figures 6 and 7) or geomean_speedup;
    `split_label` names the compared size and the split, e.g. ("input", "L2/2")."""
    for (unit, role), g in data.groupby(["unit", "role"]):
        ax.plot(g[x], g["value"], "o-", ms=3, color=UNIT_COLOR[unit],
                label=series_label(unit, role, "/".join(g["impl"].unique())))
    ax.axvline(split, color="0.3", ls="--", lw=1)
    ax.set(yscale="log", xlabel=xlabel, ylabel=data["metric"].iloc[0])
    ax.set_xscale("log", base=2)
    ax.set_ylim(top=data["value"].max() * 10)
    what, where = split_label
    stat = "median_speedup" if "median_speedup" in data else "geomean_speedup"
    for larger, (ha, sign) in {False: ("right", "≤"), True: ("left", ">")}.items():
        g = data[data[side] == larger]
        text = f"{what} {sign} {where} = {split:g} MB\nCUDA-core speedup t_TC/t_CC\n{stat.split('_')[0].upper()} " + (
            "n/a" if g.empty else interval(*g[[stat, "ci_low", "ci_high"]].iloc[0]) if "ci_low" in g
            else times(g[stat].iloc[0]))
        ax.text(split * (0.9 if ha == "right" else 1.1), data["value"].max() * 6, text, ha=ha, va="top", fontsize=8)
    legend_above(ax)


def legend_above(ax, ncol: int = 2, extra=()) -> None:
    """The legend of `ax` (and the `extra` handles) above its top edge, where it covers no data: in `ncol`
    columns, or fewer where that would come near the figure's edges (10% of room: text is wider in a
    saved PNG's dpi than on the canvas)."""
    handles = ax.get_legend_handles_labels()[0] + list(extra)
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    centre = (box.x0 + box.x1) / 2
    room = 2 * min(centre, fig.bbox.width - centre) * 0.9
    for n in range(ncol, 0, -1):
        legend = ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=n, frameon=False,
                           fontsize="small")
        if legend.get_window_extent(renderer).width <= room:
            return


def panels(nrows: int, widths, height: float):
    """A figure of `nrows` rows of panels of the given widths (inches); axes as a 2-D array."""
    return plt.subplots(nrows, len(widths), figsize=(sum(widths), height * nrows + 0.5), squeeze=False,
                        gridspec_kw={"width_ratios": widths})


def by_precision(data: pd.DataFrame, precisions) -> list[tuple[str, pd.DataFrame]]:
    """(precision, its rows of `data`) for every precision of `precisions`, then any other that
    `data` holds, in PRECISIONS order: a facet each, empty where the run has no such rows."""
    held = set(data["precision"]) if "precision" in data else set()
    order = [*precisions, *[p for p in PRECISIONS if p in held and p not in precisions]]
    return [(p, data[data["precision"] == p] if "precision" in data else data.iloc[:0]) for p in order]


def facets(draw, widths, height: float, data: pd.DataFrame, title: str, caption: str, precisions, missing):
    """A figure of one row of panels per precision (`by_precision`) that `draw(axes_row, rows)` fills,
    each row's first y label prefixed with its precision; a precision without rows gets, in each of
    its panels, the line `missing(precision)` instead."""
    facets = by_precision(data, precisions)
    fig, axes = panels(len(facets), widths, height)
    for row, (precision, part) in zip(axes, facets):
        if part.empty:
            for ax in row:
                ax.text(0.5, 0.5, missing(precision), transform=ax.transAxes, ha="center", va="center", wrap=True)
                ax.set(xticks=[], yticks=[])
        else:
            draw(row, part)
        row[0].set_ylabel(f"{precision}: {row[0].get_ylabel()}".rstrip(": "))
    fig.suptitle(title)
    footer(fig, caption)
    return fig


def single(draw, widths, height: float, data, title: str, caption: str):
    """A figure of one row of panels (`widths`, `height`) that `draw(axes_row, data)` fills, under
    `title`, with `caption` at its foot."""
    fig, axes = panels(1, widths, height)
    draw(axes[0], data)
    fig.suptitle(title)
    footer(fig, caption)
    return fig


def footer(fig, caption: str) -> None:
    """Write `caption` (its lines wrapped) at the foot of `fig` and lay the panels out above it (and
    below the title)."""
    width = int(fig.get_figwidth() * 17)
    lines = [wrapped for line in caption.splitlines() for wrapped in textwrap.wrap(line, width)]
    fig.text(0.01, 0.01, "\n".join(lines), fontsize=7, color="0.25", va="bottom")
    top = 1 - (0.3 / fig.get_figheight() if fig.get_suptitle() else 0)
    fig.tight_layout(rect=(0, (0.16 * len(lines) + 0.1) / fig.get_figheight(), 1, top))
