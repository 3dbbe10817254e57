"""Achieved roofline, a panel per precision: each measured kernel launch at its achieved intensity
against DRAM bytes and against L2 bytes, under the GPU's DRAM roof and the precision's CUDA-core and
tensor-core ceilings (config/gpus/<gpu>.yaml: memory_bandwidth_TBs, peak_TFLOPs.<precision>).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from membound.analysis.wqi import PACKED_INSTRUCTIONS  # noqa: E402
from membound.model import peaks  # noqa: E402
from membound.model.precision import PRECISIONS  # noqa: E402

MARKERS = {"scale": "o", "spmv": "s", "stencil": "^", "gemv": "D"}
COLOR = {"cuda_core": "C0", "tensor_core": "C3"}
SKIPPED = "not plotted: {n} fp16 row(s) whose W counts\nfp16 instructions, not FLOPs (docs/counters.md)"


def _panel(ax, measured: pd.DataFrame, p: peaks.Peaks, skipped: int) -> None:
    """One precision's roofs and measured points, and a note for what it does not show."""
    bw = p.bandwidth * 1e3                                      # GB/s
    x = np.logspace(-3, 3, 200)
    roofs = []
    for label, unit, ls in (("CUDA cores", "cuda_core", "-"), ("tensor cores", "tensor_core", "--")):
        if tflops := p.peak(unit):
            ax.plot(x, np.minimum(bw * x, tflops * 1e3), ls, color="0.3", lw=1)
            roofs.append(f"{label} {tflops:g}")
    for (kernel, unit), grp in measured.groupby(["kernel", "unit"]):
        ax.scatter(grp["I_ach"], grp["GFLOPs_ach"], marker=MARKERS.get(kernel, "D"), color=COLOR[unit])
        ax.scatter(grp["I_l2_ach"], grp["GFLOPs_ach"], marker=MARKERS.get(kernel, "D"), facecolors="none",
                   edgecolors=COLOR[unit])
    notes = [n for n in (p.note, "" if len(measured) else "not measured (no counter rows)",
                         SKIPPED.format(n=skipped) if skipped else "") if n]
    if notes:
        ax.text(0.03, 0.95, "\n".join(notes), transform=ax.transAxes, va="top", color="0.4", fontsize=7)
    kind = f" ({p.mma_type} on tensor cores)" if p.has_tensor_cores else ""
    ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOP/byte)", ylabel="GFLOP/s",
           title=f"{p.precision}{kind}\nroofs: {', '.join(roofs)} TFLOP/s")
    ax.grid(True, which="major", lw=0.3)


def legend_handles(measured: pd.DataFrame, roofs) -> list:
    """The line styles of the `roofs` drawn (units), then a filled (DRAM) and a hollow (L2) marker per kernel
    and unit measured."""
    out = [Line2D([], [], ls=ls, color="0.3", lw=1, label=f"{label} roof") for unit, label, ls in
           (("cuda_core", "CUDA-core", "-"), ("tensor_core", "tensor-core", "--")) if unit in roofs]
    for (kernel, unit), _ in measured.groupby(["kernel", "unit"]):
        for where, face in (("DRAM", COLOR[unit]), ("L2", "none")):
            out.append(Line2D([], [], marker=MARKERS.get(kernel, "D"), ls="none", mfc=face, mec=COLOR[unit],
                              label=f"{kernel} {unit} ({where} bytes)"))
    return out


def no_counters(main: pd.DataFrame, gpu: dict):
    """A small figure that says the run has no counters, and why (the rows' status, e.g. the cpu
    profile's "profiler none"), in place of empty panels."""
    why = sorted(set(main["status"]) - {"measured"})
    fig = plt.figure(figsize=(7, 1.3))
    fig.text(0.5, 0.62, f"Achieved roofline, {gpu['name']}: no counters", ha="center", fontsize=12)
    fig.text(0.5, 0.25, "; ".join(why) or "no counter rows in this run", ha="center", fontsize=8, color="0.3")
    return fig


def figure(wqi: pd.DataFrame, gpu: dict, precisions=PRECISIONS):
    """The roofline figure of the measured main rows of `wqi`, a panel per precision of `precisions`, and one
    legend right of them (the panels' upper left stays for notes); no_counters where none is measured."""
    main = wqi[wqi["part"] == "main"]
    measured = main["status"] == "measured"
    if not measured.any():
        return no_counters(main, gpu)
    fig, axes = plt.subplots(1, len(precisions), figsize=(6 * len(precisions) + 2.2, 4.8), squeeze=False)
    precision = main["precision"].fillna("fp64") if "precision" in main else pd.Series("fp64", main.index)
    roofs = set()
    for ax, name in zip(axes[0], precisions):
        here, p = precision == name, peaks.at(gpu, name)
        roofs |= {unit for unit in ("cuda_core", "tensor_core") if p.peak(unit)}
        _panel(ax, main[measured & here], p, int((here & (main["status"] == PACKED_INSTRUCTIONS)).sum()))
    fig.suptitle(f"Achieved roofline, {gpu['name']} (DRAM roof {gpu['memory_bandwidth_TBs']:g} TB/s)")
    fig.legend(handles=legend_handles(main[measured], roofs), loc="center right", fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0, 1 - 2.2 / fig.get_figwidth(), 1))
    return fig
