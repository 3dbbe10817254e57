"""Paper 002's Figure 11 on this GPU: each stencil's fusion sweep on the roofline, CUDA cores and
tensor cores, every marker labelled with its depth t: hollow at the model's I (eq. 8, 11-12), filled
at the counters' I, both at the measured GStencil/s times that executed work per point and step;
dotted, the measured roof: the copy of the stencil's arrays in the same run."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from membound.analysis.classification import peaks
from membound.plots import style

TITLE = "Fusion sweep (paper 002 Figure 11): the number at each marker is the depth t"
MARKER = {"cuda_core": "o", "tensor_core": "s"}
PANEL_WIDTH, HEIGHT = 2.75, 3.3    # inches: a row per precision, a column per stencil (6 x 4: 2475 x ~2200 px);
MIN_COLS = 3                       # at least: the width of the legend's one line


def draw(ax, data: pd.DataFrame, gpu: dict) -> None:
    """One stencil's sweep (rows of one problem and precision) under the GPU's roofs."""
    first = data.iloc[0]
    bw = gpu["memory_bandwidth_TBs"] * 1e3
    cu, tc = peaks(gpu, first["precision"])      # None: no roof of that unit in this precision
    i = pd.concat([data["I_model"], data["I_ach"]]).dropna()
    x = np.logspace(math.log10(i.min() / 2), math.log10(i.max() * 2), 100)
    for unit, peak, ls in (("cuda_core", cu, "-"), ("tensor_core", tc, "--")):
        if peak:
            ax.plot(x, np.minimum(bw * x, peak * 1e3), ls, color=style.UNIT_COLOR[unit], lw=0.8)
    copy = data["copy_GBs"].dropna()
    if len(copy):
        ax.plot(x, np.minimum(copy.iloc[0] * x, (cu or math.inf) * 1e3), ":", color="0.3", lw=0.8)
    for unit, g in data.groupby("unit"):
        color, marker = style.UNIT_COLOR[unit], MARKER[unit]
        ax.plot(g["I_model"], g["GFLOPs_model"], marker=marker, mfc="none", color=color, lw=0.6, ms=5)
        ax.plot(g["I_ach"], g["GFLOPs_ach"], marker=marker, color=color, ls="none", ms=4)
        for _, r in g.iterrows():
            for col in ("model", "ach"):
                if pd.notna(r[f"I_{col}"]):
                    ax.annotate(str(int(r["depth"])), (r[f"I_{col}"], r[f"GFLOPs_{col}"]), textcoords="offset points",
                                xytext=(3, 2), fontsize=6, color=color)
    ax.set(xscale="log", yscale="log", title=f"{first['problem']} ({first['shape']} {first['dims']}D r={first['radius']}, "
                                               f"{first['precision']})")
    ax.tick_params(labelsize=7)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_minor_formatter(NullFormatter())


def legend_handles() -> list:
    """The legend of the figure: units, model and counters, roofs."""
    out = [Line2D([], [], color=style.UNIT_COLOR[u], marker=MARKER[u], ls="none", label=style.UNIT_LABEL[u])
           for u in MARKER]
    out += [Line2D([], [], color="0.3", marker="o", mfc="none", ls="-", lw=0.6, label="model I (paper 002 eq. 8, 11-12)"),
            Line2D([], [], color="0.3", marker="o", ls="none", label="counters' I (DRAM bytes)"),
            Line2D([], [], color="0.3", ls="-", lw=0.8, label="CUDA-core roof"),
            Line2D([], [], color="0.3", ls="--", lw=0.8, label="tensor-core roof"),
            Line2D([], [], color="0.3", ls=":", lw=0.8, label="copy of the arrays (measured)")]
    return out


def figure(data: pd.DataFrame, gpu: dict, caption: str):
    """The sweep of every stencil in `data` (fusion.table), a panel each: a row per precision, a column
    per stencil, with `caption` at its foot."""
    problems, precisions = (list(data[c].unique()) for c in ("problem", "precision"))
    fig, axes = style.panels(max(1, len(precisions)), [PANEL_WIDTH] * max(MIN_COLS, len(problems)), HEIGHT)
    for ax in axes.flat:
        ax.set_visible(False)
    for (problem, precision), g in data.groupby(["problem", "precision"], sort=False):
        ax = axes[precisions.index(precision)][problems.index(problem)]
        ax.set_visible(True)
        draw(ax, g, gpu)
    if data.empty:
        axes[0][0].set_visible(True)
        axes[0][0].text(0.5, 0.5, "no stencil rows", ha="center", transform=axes[0][0].transAxes)
    for ax in axes[-1]:
        ax.set_xlabel("I (FLOP/byte)", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("GFLOP/s executed", fontsize=8)
    inch = 1 / fig.get_figheight()     # title, legend and the first row's panel titles, from the top down
    fig.legend(handles=legend_handles(), loc="upper center", ncol=7, fontsize=7, frameon=False,
               bbox_to_anchor=(0.5, 1 - 0.4 * inch))
    fig.suptitle(f"{TITLE} on {gpu['name']}", y=1 - 0.1 * inch)
    style.footer(fig, caption)
    fig.subplots_adjust(top=1 - 1.05 * inch)
    return fig
