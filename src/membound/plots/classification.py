"""Paper 002's Figure 10 on our GPU specs: every configuration of the grid (shape x dims x radius x
depth) at its CUDA-core intensity I_CU (eq. 8, x) and tensor-core intensity I_TC (eq. 11, y); the two
machine balances split the plane into the four scenarios of eq. 14-19. A filled marker is predicted
faster on tensor cores by eq. 13; the number beside it is the depth t. The measured configurations of
the run's GPU are ringed (by whether the prediction held) and labelled with their measured speedup
t_CC/t_TC."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from membound.analysis.classification import TC_FASTER
from membound.plots import style

TITLE = "Paper 002's classification (Figure 10): scenarios over shape x radius x depth"
MARKER = {"star": "o", "box": "s"}
SCENARIOS = {1: "1: memory-bound on both,\nequal (eq. 14)", 2: "2: TC compute-bound,\nTC slower (eq. 16)",
             3: "3: CC compute-bound only,\nTC faster (eq. 17)", 4: "4: compute-bound on both, TC faster\n"
                                                                   "iff alpha < S P_TC/P_CU (eq. 19)"}
HELD = {"yes": "tab:green", "no": "k", "other": "0.6"}   # ring colour by classification.held (other: level,
#                                                         inconclusive, n/a)
COLS, WIDTH, HEIGHT = 2, 11.0, 4.6


def _color(dims: int, radius: int):
    return f"C{(dims - 2) * 3 + radius - 1}"


def draw(ax, grid: pd.DataFrame, measured: pd.DataFrame) -> None:
    """One GPU spec and precision: the grid's points, the balances, the scenarios, the measured ones."""
    bcu, btc = grid["balance_CU"].iloc[0], grid["balance_TC"].iloc[0]
    xs, ys = [*grid["I_CU"], bcu], [*grid["I_TC"], btc]
    ax.axvline(bcu, color=style.UNIT_COLOR["cuda_core"], lw=0.8, ls=":")
    ax.axhline(btc, color=style.UNIT_COLOR["tensor_core"], lw=0.8, ls=":")
    for s, (x, y) in {1: (0.02, 0.02), 2: (0.02, 0.98), 3: (0.98, 0.02), 4: (0.98, 0.98)}.items():   # its corner
        ax.text(x, y, SCENARIOS[s], fontsize=6, color="0.4", transform=ax.transAxes,
                ha="left" if x < 0.5 else "right", va="bottom" if y < 0.5 else "top")
    for (shape, dims, radius), g in grid.groupby(["shape", "dims", "radius"]):
        faster = g["prediction"] == TC_FASTER
        for fill, part in ((True, g[faster]), (False, g[~faster])):
            ax.scatter(part["I_CU"], part["I_TC"], marker=MARKER[shape], s=18, color=_color(dims, radius),
                       facecolors=_color(dims, radius) if fill else "none", lw=0.8)
        for _, r in g.iterrows():
            ax.annotate(str(r["depth"]), (r["I_CU"], r["I_TC"]), textcoords="offset points", xytext=(2, 2),
                        fontsize=5, color=_color(dims, radius))
    for _, m in measured.iterrows():
        color = HELD.get(m["held"], HELD["other"])
        ax.scatter(m["I_CU"], m["I_TC"], s=110, facecolors="none", edgecolors=color, lw=1.2)
        ax.annotate(f"{m['speedup']:.2f}", (m["I_CU"], m["I_TC"]), textcoords="offset points", xytext=(5, -10),
                    fontsize=6, color=color)
    first = grid.iloc[0]
    ax.set(xscale="log", yscale="log", xlim=(min(xs) / 3, max(xs) * 3), ylim=(min(ys) / 3, max(ys) * 3), xlabel="I_CU = tK/D (FLOP/byte)",
           ylabel="I_TC = t (alpha/S) K/D (FLOP/byte)",
           title=f"{first['gpu']}, {first['precision']}{' 2:4-sparse TC' if first.get('sparsity') == '2:4' else ''}: "
                 f"B_CU = {bcu:.3g}, B_TC = {btc:.3g}")


def legend_handles(grid: pd.DataFrame) -> list:
    """Marker shapes, the colour of each (dims, radius), filled = tensor cores predicted faster, the ring."""
    out = [Line2D([], [], marker=m, color="0.3", mfc="none", ls="none", label=s) for s, m in MARKER.items()]
    out += [Line2D([], [], marker="o", color=_color(d, r), ls="none", label=f"{d}D r={r}")
            for d, r in grid[["dims", "radius"]].drop_duplicates().itertuples(index=False)]
    out += [Line2D([], [], marker="o", color="0.3", ls="none", label="tensor cores predicted faster (eq. 13)")]
    out += [Line2D([], [], marker="o", mfc="none", mec=c, ms=10, ls="none", label=f"measured, prediction held: {h} "
                   "(number: t_CC/t_TC)") for h, c in HELD.items()]
    return out


def figure(grid: pd.DataFrame, measured: pd.DataFrame, gpu_name: str, caption: str):
    """Figure 10 of every (spec, precision, sparsity: dense or 2:4 tensor cores) in `grid`; `measured`
    (classification.verdicts with the model's intensities) is ringed on the panels of GPU `gpu_name`."""
    grid = grid.assign(sparsity=grid["sparsity"] if "sparsity" in grid else "dense")
    measured = measured.assign(sparsity=measured["sparsity"] if "sparsity" in measured else "dense")
    groups = list(grid.groupby(["spec", "precision", "sparsity"], sort=False))
    rows = max(1, math.ceil(len(groups) / COLS))
    fig, axes = style.panels(rows, [WIDTH / COLS] * COLS, HEIGHT)
    for ax, ((_, p, sp), g) in zip(axes.flat, groups):
        here = g["gpu"].iloc[0] == gpu_name
        mine = measured[(measured["precision"] == p) & (measured["sparsity"] == sp)]
        draw(ax, g, mine if here else measured.iloc[:0])
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    inch = 1 / fig.get_figheight()     # title, legend (3 rows) and the first row's panel titles, from the top down
    if groups:
        fig.legend(handles=legend_handles(grid), loc="upper center", ncol=4, fontsize=7, frameon=False,
                   bbox_to_anchor=(0.5, 1 - 0.35 * inch))
    fig.suptitle(TITLE, y=1 - 0.1 * inch)
    style.footer(fig, caption)
    fig.subplots_adjust(top=1 - 1.4 * inch)
    return fig


def overlay(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The measured configurations that the model places (a finite I_CU and speedup)."""
    return verdicts[np.isfinite(verdicts["I_CU"].astype(float)) & np.isfinite(verdicts["speedup"].astype(float))]
