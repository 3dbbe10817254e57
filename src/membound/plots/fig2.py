"""Figure 2: the device's roofline (eq. 3) with its CUDA-core and tensor-core FP64 ceilings, the
machine balance of each (eq. 1) at the ridge, and every kernel's analytical intensity on the roof
of its unit. Analytical: from the GPU spec and the model only."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from membound.model import equations
from membound.model.analytical import kernel_intensities
from membound.plots import style

WIDTHS, HEIGHT = (8.5,), 4.6
COLUMNS = ["item", "label", "unit", "intensity_FLOP_per_B", "GFLOPs", "peak_GFLOPs", "bandwidth_GBs",
           "machine_balance", "memory_bound", "gpu", "source"]
MARKERS = "osDv^<>phX*Pd"


def data(config: Mapping, gpu: dict) -> pd.DataFrame:
    """The plotted numbers: a 'ceiling' row per unit (at its ridge point: I = machine balance,
    GFLOP/s = peak) and a 'kernel' row per kernel (its I and the roofline's GFLOP/s there)."""
    bw = gpu["memory_bandwidth_TBs"] * 1e3
    peaks = {"cuda_core": gpu["fp64_vector_TFLOPs"] * 1e3}
    if gpu.get("fp64_matrix_TFLOPs"):
        peaks["tensor_core"] = gpu["fp64_matrix_TFLOPs"] * 1e3
    balance = {unit: equations.machine_balance(peak, bw) for unit, peak in peaks.items()}
    rows = [{"item": "ceiling", "label": f"FP64 {style.UNIT_LABEL[unit]}", "unit": unit,
             "intensity_FLOP_per_B": balance[unit], "GFLOPs": peak} for unit, peak in peaks.items()]
    for label, i, unit in kernel_intensities(config, gpu, tensor_cores="tensor_core" in peaks):
        rows.append({"item": "kernel", "label": label, "unit": unit, "intensity_FLOP_per_B": i,
                     "GFLOPs": equations.roofline(peaks[unit], bw, i), "memory_bound": equations.is_memory_bound(i, balance[unit])})
    out = pd.DataFrame(rows)
    return out.assign(peak_GFLOPs=out["unit"].map(peaks), machine_balance=out["unit"].map(balance), bandwidth_GBs=bw,
                      gpu=gpu["name"], source="analytical")[COLUMNS]


def draw(axes, data: pd.DataFrame) -> None:
    """Draw Figure 2 into the one panel of `axes`."""
    ax = axes[0]
    kernels = data[data["item"] == "kernel"]
    ceilings = data[data["item"] == "ceiling"]
    bw = data["bandwidth_GBs"].iloc[0]
    x = np.logspace(np.log10(kernels["intensity_FLOP_per_B"].min() / 3),
                    np.log10(max(data["intensity_FLOP_per_B"].max(), 1) * 3), 200)
    for (_, c), ls in zip(ceilings.iterrows(), ("-", "--")):
        ax.plot(x, np.minimum(bw * x, c["GFLOPs"]), ls, color=style.UNIT_COLOR[c["unit"]], lw=1.5,
                label=f"{c['label']} roof: {c['GFLOPs'] / 1e3:g} TFLOP/s, {bw / 1e3:g} TB/s")
        ax.axvline(c["machine_balance"], ls=":", lw=0.8, color=style.UNIT_COLOR[c["unit"]])
        ax.text(c["machine_balance"] * 1.08, 0.03, f"B = {c['machine_balance']:.2f} ({style.UNIT_LABEL[c['unit']]})",
                transform=ax.get_xaxis_transform(), rotation=90, fontsize=7, va="bottom")
    marker = dict(zip(kernels["label"].str.split().str[0].unique(), MARKERS))   # one per kernel, both units
    for _, k in kernels.iterrows():
        ax.plot(k["intensity_FLOP_per_B"], k["GFLOPs"], marker[k["label"].split()[0]], color=style.UNIT_COLOR[k["unit"]],
                ms=6, mfc="none", label=f"{k['label']} (I = {k['intensity_FLOP_per_B']:.3g})")
    ax.set(xscale="log", yscale="log", xlabel="operational intensity I (FLOP/byte)", ylabel="attainable GFLOP/s",
           ylim=(bw * x[0] / 2, data["GFLOPs"].max() * 3))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)


def figure(data: pd.DataFrame, gpu: dict, caption: str):
    """Figure 2 of `data` (see `data`) with `caption` at its foot."""
    title = (f"Figure 2: FP64 roofline of {gpu['name']}"
             + ("" if gpu.get("fp64_matrix_TFLOPs") else " (no FP64 matrix unit: no tensor-core ceiling)"))
    return style.single(draw, WIDTHS, HEIGHT, data, title, caption)
