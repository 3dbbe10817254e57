"""The GEMV panel (paper 000 eq. 6-7; no figure of the paper): bandwidth against the matrix's size
on CUDA cores and tensor cores, with the geometric-mean speedup of CUDA cores over tensor cores
(t_TC / t_CC) for matrices that fit in the L2 and those larger."""

from __future__ import annotations

import pandas as pd

from membound.model.equations import MB
from membound.plots import common, style

TITLE = "GEMV (y = A x, FP64, A n x n)"
WIDTHS, HEIGHT = (7.5,), 4.2
COLUMNS = ["n", "matrix_MB", "unit", "role", "impl", "metric", "value", "t_median_s", "l2_MB", "larger_than_L2",
           "speedup", "geomean_speedup", *common.KEEP]


def data(raw: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """The plotted numbers: one row per size and unit (GB/s), with the per-size speedup and the
    geometric mean of its side of the L2; medians over repetitions."""
    rows = common.medians(raw[raw["kernel"] == "gemv"], ["rows", "cols", "unit", "role", "impl"])
    out = rows.assign(n=rows["rows"].astype(int), matrix_MB=8 * rows["rows"] * rows["cols"] / MB,
                      l2_MB=gpu["l2_MB"], gpu=gpu["name"])
    out = common.with_speedups(out.assign(larger_than_L2=out["matrix_MB"] > out["l2_MB"]), "n", "larger_than_L2")
    return out[COLUMNS].sort_values(["unit", "n"], ignore_index=True)


def draw(axes, data: pd.DataFrame) -> None:
    """Draw the GEMV panel into the one panel of `axes`."""
    if data.empty:
        axes[0].text(0.5, 0.5, "no GEMV rows", ha="center", transform=axes[0].transAxes)
        return
    style.size_sweep(axes[0], data, "matrix_MB", "larger_than_L2", data["l2_MB"].iloc[0],
                     "matrix A (8 n^2 bytes), MB", ("A", "L2"))


def figure(data: pd.DataFrame, gpu: dict, caption: str):
    """The GEMV panel of `data` (see `data`) with `caption` at its foot."""
    return style.single(draw, WIDTHS, HEIGHT, data, f"{TITLE} on {gpu['name']}", caption)
