"""Figure 2: the device's roofline (eq. 3) with its CUDA-core and tensor-core ceilings, the machine
balance of each (eq. 1) at the ridge, and every kernel's analytical intensity on the roof of its
unit, a panel per precision (its peaks and element size D; a precision without tensor cores has no
tensor-core ceiling, and says so). Analytical: from the GPU spec and the model only."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from membound.model import equations, peaks
from membound.model.analytical import kernel_intensities
from membound.model.precision import PRECISIONS
from membound.plots import style

WIDTHS, HEIGHT = (8.5,), 4.6
COLUMNS = ["precision", "item", "label", "unit", "intensity_FLOP_per_B", "GFLOPs", "peak_GFLOPs", "bandwidth_GBs",
           "machine_balance", "memory_bound", "note", "gpu", "source"]
MARKERS = "osDv^<>phX*Pd"


def data(config: Mapping, gpu: dict, precisions=("fp64",)) -> pd.DataFrame:
    """The plotted numbers, per precision: a 'ceiling' row per unit with a peak (at its ridge point:
    I = machine balance, GFLOP/s = peak) and a 'kernel' row per kernel (its I with the precision's D
    and the roofline's GFLOP/s there; a unit without a peak: the memory roof)."""
    return pd.concat([_one(config, gpu, p) for p in precisions], ignore_index=True)[COLUMNS]


def _one(config: Mapping, gpu: dict, precision: str) -> pd.DataFrame:
    p = peaks.at(gpu, precision)
    bw = p.bandwidth * 1e3
    units = {u: p.peak(u) * 1e3 for u in peaks.UNITS if p.peak(u)}
    rows = [{"item": "ceiling", "label": f"{precision} {style.UNIT_LABEL[unit]}", "unit": unit,
             "intensity_FLOP_per_B": p.balance(unit), "GFLOPs": peak} for unit, peak in units.items()]
    for label, i, unit in kernel_intensities(config, gpu, "tensor_core" in units, precision):
        top = units.get(unit, np.inf)
        rows.append({"item": "kernel", "label": label, "unit": unit, "intensity_FLOP_per_B": i,
                     "GFLOPs": equations.roofline(top, bw, i),
                     "memory_bound": equations.is_memory_bound(i, p.balance(unit)) if unit in units else None})
    out = pd.DataFrame(rows)
    return out.assign(precision=precision, peak_GFLOPs=out["unit"].map(units), bandwidth_GBs=bw,
                      machine_balance=out["unit"].map({u: p.balance(u) for u in units}), note=p.note,
                      gpu=gpu["name"], source="analytical")


def draw(axes, data: pd.DataFrame) -> None:
    """Draw Figure 2 (one precision) into the one panel of `axes`."""
    ax = axes[0]
    kernels = data[data["item"] == "kernel"]
    ceilings = data[data["item"] == "ceiling"]
    bw = data["bandwidth_GBs"].iloc[0]
    x = np.logspace(np.log10(kernels["intensity_FLOP_per_B"].min() / 3),
                    np.log10(max(data["intensity_FLOP_per_B"].max(), 1) * 3), 200)
    for _, c in ceilings.iterrows():
        ls = "-" if c["unit"] == "cuda_core" else "--"
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
    if note := data["note"].fillna("").iloc[0]:   # upper left, above the memory roof: the B labels are below
        ax.text(0.02, 0.97, f"{note}: no tensor-core ceiling" if "tensor" in note else note, transform=ax.transAxes,
                ha="left", va="top", fontsize=8, color="0.3")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)


def figure(data: pd.DataFrame, gpu: dict, caption: str, precisions=PRECISIONS):
    """Figure 2 of `data` (see `data`), a panel row per precision, with `caption` at its foot."""
    return style.facets(draw, WIDTHS, HEIGHT, data, f"Figure 2: rooflines of {gpu['name']} per precision", caption,
                        precisions, lambda p: f"{p}: not in this run's precisions")
