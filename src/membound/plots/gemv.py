"""The GEMV panel (paper 000 eq. 6-7; no figure of the paper), a row per precision: bandwidth
against the matrix's size (D n^2 bytes, D the precision's element size) on CUDA cores and tensor
cores, with the geometric-mean speedup of CUDA cores over tensor cores (t_TC / t_CC) for matrices
that fit in the L2 and those larger."""

from __future__ import annotations

import pandas as pd

from membound.model import peaks
from membound.model.equations import MB
from membound.model.peaks import ELEMENT_BYTES
from membound.model.precision import PRECISIONS
from membound.plots import common, style

TITLE = "GEMV (y = A x, A n x n)"
WIDTHS, HEIGHT = (7.5,), 4.2
COLUMNS = ["n", "matrix_MB", "unit", "role", "impl", "metric", "value", "t_median_s", "l2_MB", "larger_than_L2",
           "speedup", "geomean_speedup", *common.KEEP]


def data(raw: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """The plotted numbers: one row per size, precision and unit (GB/s), with the per-size speedup
    and the geometric mean of its side of the L2 in its precision; medians over repetitions."""
    rows = common.medians(raw[raw["kernel"] == "gemv"], ["rows", "cols", "precision", "unit", "role", "impl"])
    out = rows.assign(n=rows["rows"].astype(int), l2_MB=gpu["l2_MB"], gpu=gpu["name"],
                      matrix_MB=rows["precision"].map(ELEMENT_BYTES) * rows["rows"] * rows["cols"] / MB)
    out = common.with_speedups(out.assign(larger_than_L2=out["matrix_MB"] > out["l2_MB"]), "n", "larger_than_L2")
    return common.by_precision_order(out, ["unit", "n"])[COLUMNS]


def draw(axes, data: pd.DataFrame) -> None:
    """Draw the GEMV panel (one precision) into the one panel of `axes`."""
    if data.empty:
        axes[0].text(0.5, 0.5, "no GEMV rows", ha="center", transform=axes[0].transAxes)
        return
    style.size_sweep(axes[0], data, "matrix_MB", "larger_than_L2", data["l2_MB"].iloc[0],
                     "matrix A (D n^2 bytes), MB", ("A", "L2"))


def figure(data: pd.DataFrame, gpu: dict, caption: str, precisions=PRECISIONS):
    """The GEMV panel of `data` (see `data`), a row per precision, with `caption` at its foot."""
    return style.facets(draw, WIDTHS, HEIGHT, data, f"{TITLE} on {gpu['name']}", caption, precisions,
                        lambda p: peaks.no_rows(gpu, p, "GEMV"))
