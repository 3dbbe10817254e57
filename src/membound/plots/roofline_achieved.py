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

from membound.model import peaks  # noqa: E402
from membound.model.precision import PRECISIONS  # noqa: E402

MARKERS = {"scale": "o", "spmv": "s", "stencil": "^", "gemv": "D"}


def _panel(ax, measured: pd.DataFrame, p: peaks.Peaks) -> None:
    """One precision's roofs and measured points (a note where there are none)."""
    bw = p.bandwidth * 1e3                                      # GB/s
    x = np.logspace(-3, 3, 200)
    for label, unit, ls in (("CUDA cores", "cuda_core", "-"), ("tensor cores", "tensor_core", "--")):
        if tflops := p.peak(unit):
            ax.plot(x, np.minimum(bw * x, tflops * 1e3), ls, color="0.3", lw=1, label=f"{label} {tflops:g} TFLOP/s")
    for (kernel, unit), grp in measured.groupby(["kernel", "unit"]):
        color = "C0" if unit == "cuda_core" else "C3"
        ax.scatter(grp["I_ach"], grp["GFLOPs_ach"], marker=MARKERS.get(kernel, "D"), color=color,
                   label=f"{kernel} {unit} (DRAM)")
        ax.scatter(grp["I_l2_ach"], grp["GFLOPs_ach"], marker=MARKERS.get(kernel, "D"), facecolors="none",
                   edgecolors=color, label=f"{kernel} {unit} (L2)")
    notes = [n for n in (p.note, "" if len(measured) else "not measured (no counter rows)") if n]
    if notes:
        ax.text(0.03, 0.95, "; ".join(notes), transform=ax.transAxes, va="top", color="0.4", fontsize=8)
    ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOP/byte)", ylabel="GFLOP/s",
           title=f"{p.precision} ({p.mma_type} on tensor cores)" if p.has_tensor_cores else p.precision)
    ax.grid(True, which="major", lw=0.3)
    ax.legend(fontsize=6, loc="lower right")


def figure(wqi: pd.DataFrame, gpu: dict, precisions=PRECISIONS):
    """The roofline figure of the measured main rows of `wqi`, a panel per precision of `precisions`."""
    fig, axes = plt.subplots(1, len(precisions), figsize=(6 * len(precisions), 4.5), squeeze=False)
    measured = wqi[(wqi["status"] == "measured") & (wqi["part"] == "main")]
    precision = measured["precision"].fillna("fp64") if "precision" in measured else pd.Series("fp64", measured.index)
    for ax, name in zip(axes[0], precisions):
        _panel(ax, measured[precision == name], peaks.at(gpu, name))
    fig.suptitle(f"Achieved roofline, {gpu['name']} (DRAM roof {gpu['memory_bandwidth_TBs']:g} TB/s)")
    fig.tight_layout()
    return fig
