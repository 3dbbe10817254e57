"""Figure 6: SCALE bandwidth against size on CUDA cores and tensor cores, with the geometric-mean
speedup of CUDA cores over tensor cores (t_TC / t_CC) and its 95% interval (claim C2's) for inputs
larger and smaller than half the L2 (the input array's 8n bytes against L2/2, i.e. the 16n-byte
working set against the L2). Twins and repetitions: see paired.paper_sides."""

from __future__ import annotations

import pandas as pd

from membound.model.equations import MB
from membound.plots import common, paired, style

TITLE = "Figure 6: SCALE (a = q b, FP64)"
WIDTHS, HEIGHT = (7.5,), 4.2
COLUMNS = ["n", "input_MB", "unit", "role", "impl", "metric", "value", "t_median_s", "half_L2_MB",
           "larger_than_half_L2", "speedup", "geomean_speedup", "ci_low", "ci_high", *common.KEEP]


def data(raw: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """The plotted numbers: one row per size and unit (GB/s), with the per-size speedup and the
    geometric mean of its side of L2/2."""
    rows = raw[raw["kernel"] == "scale"]
    out = rows.assign(n=rows["n"].astype(int), input_MB=8 * rows["n"] / MB, half_L2_MB=gpu["l2_MB"] / 2,
                      gpu=gpu["name"])
    out = out.assign(larger_than_half_L2=out["input_MB"] > out["half_L2_MB"])
    out = paired.with_intervals(out, gpu, "larger_than_half_L2")
    return out[COLUMNS].sort_values(["unit", "n"], ignore_index=True)


def draw(axes, data: pd.DataFrame) -> None:
    """Draw Figure 6 into the one panel of `axes`."""
    style.size_sweep(axes[0], data, "input_MB", "larger_than_half_L2", data["half_L2_MB"].iloc[0],
                     "input array a (8n bytes), MB", ("input", "L2/2"))


def figure(data: pd.DataFrame, gpu: dict, caption: str):
    """Figure 6 of `data` (see `data`) with `caption` at its foot."""
    return style.single(draw, WIDTHS, HEIGHT, data, f"{TITLE} on {gpu['name']}", caption)
