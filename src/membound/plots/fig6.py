"""Figure 6: SCALE bandwidth against size on CUDA cores and tensor cores, a row per precision, with
the median speedup of CUDA cores over tensor cores (t_TC / t_CC) and its 95% interval
(claim C2's) for inputs larger and smaller than half the L2 (the input array's D n bytes, D the
precision's element size, against L2/2, i.e. the 2 D n-byte working set against the L2). Twins and
repetitions: see paired.paper_sides."""

from __future__ import annotations

import pandas as pd

from membound.model import peaks
from membound.model.equations import MB
from membound.model.peaks import ELEMENT_BYTES
from membound.model.precision import PRECISIONS
from membound.plots import common, paired, style
from membound.run import measure

TITLE = "Figure 6: SCALE (a = q b)"


def title(data: pd.DataFrame) -> str:
    """The figure's title (the same for any data)."""
    return TITLE
WIDTHS, HEIGHT = (7.5,), 4.2
COLUMNS = ["n", "input_MB", "unit", "role", "impl", "metric", "value", "t_median_s", "half_L2_MB",
           "larger_than_half_L2", "speedup", "median_speedup", "ci_low", "ci_high", *common.KEEP]


def data(raw: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """The plotted numbers: one row per size, precision and unit (GB/s), with the per-size speedup
    and the median of its side of L2/2 in its precision."""
    rows = measure.sweep_rows(raw[raw["kernel"] == "scale"])
    out = rows.assign(n=rows["n"].astype(int), input_MB=rows["precision"].map(ELEMENT_BYTES) * rows["n"] / MB,
                      half_L2_MB=gpu["l2_MB"] / 2, gpu=gpu["name"])
    out = out.assign(larger_than_half_L2=out["input_MB"] > out["half_L2_MB"])
    out = paired.with_intervals(out, gpu, "larger_than_half_L2")
    return common.by_precision_order(out, ["unit", "n"])[COLUMNS]


def draw(axes, data: pd.DataFrame) -> None:
    """Draw Figure 6 (one precision) into the one panel of `axes`."""
    style.size_sweep(axes[0], data, "input_MB", "larger_than_half_L2", data["half_L2_MB"].iloc[0],
                     "input array a (D n bytes), MB", ("input", "L2/2"))


def figure(data: pd.DataFrame, gpu: dict, caption: str, precisions=PRECISIONS):
    """Figure 6 of `data` (see `data`), a row per precision, with `caption` at its foot."""
    return style.facets(draw, WIDTHS, HEIGHT, data, f"{TITLE} on {gpu['name']}", caption, precisions,
                        lambda p: peaks.no_rows(gpu, p, "SCALE"))
