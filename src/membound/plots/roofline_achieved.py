"""Achieved roofline: each measured kernel launch at its achieved intensity against DRAM bytes and
against L2 bytes, under the GPU's DRAM roof and its CUDA-core and tensor-core FP64 ceilings
(config/gpus/<gpu>.yaml: memory_bandwidth_TBs, fp64_vector_TFLOPs, fp64_matrix_TFLOPs).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

MARKERS = {"scale": "o", "spmv": "s", "stencil": "^"}


def figure(wqi: pd.DataFrame, gpu: dict):
    """The roofline figure of the measured main rows of `wqi` (a note where none was measured)."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bw = gpu["memory_bandwidth_TBs"] * 1e3                      # GB/s
    x = np.logspace(-3, 3, 200)
    ceilings = [("vector (CUDA cores)", gpu["fp64_vector_TFLOPs"], "-")]
    if gpu.get("fp64_matrix_TFLOPs"):
        ceilings.append(("matrix (tensor cores)", gpu["fp64_matrix_TFLOPs"], "--"))
    for label, tflops, ls in ceilings:
        ax.plot(x, np.minimum(bw * x, tflops * 1e3), ls, color="0.3", lw=1, label=f"FP64 {label} {tflops:g} TFLOP/s")
    measured = wqi[(wqi["status"] == "measured") & (wqi["part"] == "main")]
    for (kernel, unit), grp in measured.groupby(["kernel", "unit"]):
        color = "C0" if unit == "cuda_core" else "C3"
        ax.scatter(grp["I_ach"], grp["GFLOPs_ach"], marker=MARKERS.get(kernel, "D"), color=color,
                   label=f"{kernel} {unit} (DRAM)")
        ax.scatter(grp["I_l2_ach"], grp["GFLOPs_ach"], marker=MARKERS.get(kernel, "D"), facecolors="none",
                   edgecolors=color, label=f"{kernel} {unit} (L2)")
    if measured.empty:
        ax.text(0.03, 0.95, "not measured (no counter rows)", transform=ax.transAxes, va="top", color="0.4")
    ax.set(xscale="log", yscale="log", xlabel="arithmetic intensity (FLOP/byte)", ylabel="GFLOP/s",
           title=f"Achieved roofline, {gpu['name']} (DRAM roof {gpu['memory_bandwidth_TBs']:g} TB/s)")
    ax.grid(True, which="major", lw=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig

