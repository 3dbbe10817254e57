"""Paper 002's Figure 10 on our GPU specs, in two figures. `figure`: the measured GPU, a panel per
precision and sparsity (dense or 2:4 tensor cores), each configuration of the grid (shape x dims x
radius x depth) at its CUDA-core intensity I_CU (eq. 8, x) and tensor-core intensity I_TC (eq. 11, y),
the two machine balances splitting the plane into the four scenarios of eq. 14-19, and each measured
configuration marked by its verdict (whether eq. 13's prediction held, classification.held).
`specs_figure`: the model-only maps of the other specs, a row each. A series' points are its depths
t = 1, 2, ... from the lower left (I grows with t); a filled point is predicted faster on tensor cores
by eq. 13. Every text is at least the size of the tick labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.lines import Line2D

from membound.analysis.classification import TC_FASTER
from membound.plots import style

TITLE = "Paper 002's classification (Figure 10) on the {gpu}: the measured configurations"
SPECS_TITLE = "Paper 002's classification (Figure 10), model only: the other GPU specs"
MARKER = {"star": "o", "box": "s"}
SCENARIOS = {1: "1: both\nmemory-bound", 2: "2: TC\ncompute-bound", 3: "3: CC\ncompute-bound",
             4: "4: both\ncompute-bound"}
# The verdict of a measured configuration (classification.HELD): marker, colour, legend label.
VERDICT = {"yes": ("o", "tab:green", "prediction held"), "no": ("X", "tab:red", "prediction failed"),
           "level": ("D", "tab:orange", "level (within the noise band of 1)"),
           "inconclusive": ("s", "0.45", "inconclusive"), "n/a": ("P", "0.7", "n/a (no prediction, or one repetition)")}
PANEL = (4.8, 4.2)          # inches, the measured GPU's panels (at 150 dpi: 2160 x 1500 px for 5)
SPEC_PANEL = (4.0, 3.6)     # the other specs': 3 specs x 5 panels in 3000 x 1860 px
SPECS_WIDTH = 19.5          # inches at most across their columns (7 with bf16: panels 2.8 in wide, 2925 px)


def _color(dims: int, radius: int):
    return f"C{(dims - 2) * 3 + radius - 1}"


def _with_sparsity(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(sparsity=frame["sparsity"] if "sparsity" in frame else "dense")


def _title(first, counts: str, spec: bool) -> str:
    sparse = " 2:4-sparse TC" if first.get("sparsity") == "2:4" else ""
    return f"{first['gpu'] + chr(10) if spec else ''}{first['precision']}{sparse}{counts}"


def _counts(measured: pd.DataFrame) -> str:
    """': held <yes>/<decided> (eq. 14), <yes>/<decided> (summary)': the measured configurations' `held`
    and `held_summary` (C5's two readings; n/a aside), '' where none is decided."""
    parts = []
    for column, name in (("held", "eq. 14"), ("held_summary", "summary")):
        decided = measured[column].isin(["yes", "no", "level", "inconclusive"]) if column in measured else []
        if any(decided):
            parts.append(f"{(measured[column] == 'yes').sum()}/{decided.sum()} ({name})")
    return ": held " + ", ".join(parts) if parts else ""


def draw(ax, grid: pd.DataFrame, measured: pd.DataFrame, muted: bool = False) -> None:
    """One GPU spec, precision and sparsity: the grid's series, the balances, the scenarios' labels and the
    measured configurations by verdict (`muted`: the grid in light colours under them, the spec's name
    in the figure's title, not the panel's)."""
    bcu, btc = grid["balance_CU"].iloc[0], grid["balance_TC"].iloc[0]
    xs, ys = [*grid["I_CU"], bcu], [*grid["I_TC"], btc]
    ax.axvline(bcu, color=style.UNIT_COLOR["cuda_core"], lw=1, ls=":")
    ax.axhline(btc, color=style.UNIT_COLOR["tensor_core"], lw=1, ls=":")
    for s, (x, y) in {1: (0.02, 0.02), 2: (0.02, 0.98), 3: (0.98, 0.02), 4: (0.98, 0.98)}.items():   # its corner
        ax.text(x, y, SCENARIOS[s], color="0.4", transform=ax.transAxes,
                ha="left" if x < 0.5 else "right", va="bottom" if y < 0.5 else "top")
    alpha = 0.35 if muted else 1
    for (shape, dims, radius), g in grid.groupby(["shape", "dims", "radius"]):
        g = g.sort_values("depth")
        color = _color(dims, radius)
        ax.plot(g["I_CU"], g["I_TC"], color=color, lw=0.6, alpha=alpha)
        faster = g["prediction"] == TC_FASTER
        for fill, part in ((True, g[faster]), (False, g[~faster])):
            ax.scatter(part["I_CU"], part["I_TC"], marker=MARKER[shape], s=16, color=color, alpha=alpha,
                       facecolors=color if fill else "none", lw=0.8)
    for held, m in measured.groupby("held"):
        marker, color, _ = VERDICT.get(held, VERDICT["n/a"])
        ax.scatter(m["I_CU"], m["I_TC"], marker=marker, s=60, color=color, edgecolors="k", lw=0.5, zorder=3)
    ax.set(xscale="log", yscale="log", xlim=(min(xs) / 3, max(xs) * 3), ylim=(min(ys) / 3, max(ys) * 3),
           xlabel="I_CU = tK/D (FLOP/byte)", ylabel="I_TC = t (alpha/S) K/D")
    ax.set_title(_title(grid.iloc[0], _counts(measured), spec=not muted) + f"\nB_CU = {bcu:.3g}, B_TC = {btc:.3g}")


def legend_handles(grid: pd.DataFrame, measured: bool) -> list:
    """Marker shapes, the colour of each (dims, radius), filled = tensor cores predicted faster, and
    (`measured`) each verdict's marker."""
    out = [Line2D([], [], marker=m, color="0.3", mfc="none", ls="none", label=s) for s, m in MARKER.items()]
    out += [Line2D([], [], marker="o", color=_color(d, r), ls="-", lw=0.6, label=f"{d}D r={r}")
            for d, r in grid[["dims", "radius"]].drop_duplicates().sort_values(["dims", "radius"]).itertuples(index=False)]
    out += [Line2D([], [], marker="o", color="0.3", ls="none", label="TC predicted faster (eq. 13)")]
    if measured:
        out += [Line2D([], [], marker=m, color=c, mec="k", mew=0.5, ms=8, ls="none", label=f"measured: {label}")
                for m, c, label in VERDICT.values()]
    return out


def _layout(groups, rows: int, cols: int, title: str, caption: str, handles, panel=PANEL):
    fig, axes = plt.subplots(rows, cols, figsize=(panel[0] * cols, panel[1] * rows + 1.6), squeeze=False)
    for ax in axes.flat[len(groups):]:
        ax.set_visible(False)
    fig.suptitle(title, y=1 - 0.05 / fig.get_figheight(), va="top")   # in inches from the top: any panel rows
    fig.legend(handles=handles, loc="upper center", ncol=min(len(handles), 7), frameon=False, fontsize="medium",
               bbox_to_anchor=(0.5, 1 - 0.35 / fig.get_figheight()))
    style.footer(fig, caption)
    fig.subplots_adjust(left=0.9 / fig.get_figwidth(), right=1 - 0.2 / fig.get_figwidth(),
                        top=1 - 1.5 / fig.get_figheight(), bottom=1.0 / fig.get_figheight(), hspace=0.5, wspace=0.35)
    return fig, axes


def figure(grid: pd.DataFrame, measured: pd.DataFrame, gpu_name: str, caption: str):
    """The measured GPU `gpu_name`: a panel per (precision, sparsity) of its spec in `grid`, `measured`
    (classification.verdicts with the model's intensities, overlay) marked by verdict; a GPU without
    tensor cores (no grid) gets one panel that says so."""
    grid, measured = _with_sparsity(grid), _with_sparsity(measured)
    groups = list(grid[grid["gpu"] == gpu_name].groupby(["precision", "sparsity"], sort=False))
    cols = min(3, max(len(groups), 1))
    fig, axes = _layout(groups, max(1, -(-len(groups) // cols)), cols, TITLE.format(gpu=gpu_name), caption,
                        legend_handles(grid, measured=True))
    for ax, ((p, sp), g) in zip(axes.flat, groups):
        draw(ax, g, measured[(measured["precision"] == p) & (measured["sparsity"] == sp)], muted=True)
    if not groups:
        axes[0, 0].set_axis_off()
        axes[0, 0].text(0.5, 0.5, f"{gpu_name}: no tensor cores, no classification", ha="center",
                        transform=axes[0, 0].transAxes)
    return fig


def specs_figure(grid: pd.DataFrame, gpu_name: str, caption: str):
    """The model-only maps of every spec in `grid` but `gpu_name`: a row per spec, a column per
    (precision, sparsity)."""
    grid = _with_sparsity(grid)
    others = grid[grid["gpu"] != gpu_name]
    columns = list(dict.fromkeys(zip(others["precision"], others["sparsity"])))
    specs = list(dict.fromkeys(others["gpu"]))
    shrink = min(1.0, SPECS_WIDTH / (SPEC_PANEL[0] * max(len(columns), 1)))   # many columns: narrower panels
    fig, axes = _layout([None] * len(specs) * len(columns), max(len(specs), 1), max(len(columns), 1),
                        SPECS_TITLE, caption, legend_handles(grid, measured=False),
                        (SPEC_PANEL[0] * shrink, SPEC_PANEL[1]))
    for row, spec in enumerate(specs):
        for col, (p, sp) in enumerate(columns):
            g = others[(others["gpu"] == spec) & (others["precision"] == p) & (others["sparsity"] == sp)]
            if g.empty:
                axes[row, col].set_visible(False)
            else:
                draw(axes[row, col], g, others.iloc[:0].assign(held=[]))
    return fig


def overlay(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The measured configurations that the model places (a finite I_CU and speedup)."""
    return verdicts[np.isfinite(verdicts["I_CU"].astype(float)) & np.isfinite(verdicts["speedup"].astype(float))]
