"""The unblocked stencils against the copy: every stencil implementation at depth 1 (each point read
and written once a step, 2 D bytes, D the element size), its share of B/(2D) (B the spec's bandwidth,
membound's yardstick for its CUDA-core kernels) and of the copy of the same arrays in the same run:
SCALE on CUDA cores at n = the stencil's points, in the same precision (SCALE times the stencils'
fields for this: families.stencil_fields). The copy is what the memory gives a kernel that moves those bytes in
launches of that size; a stencil at 1.0 of it moves its bytes as fast as a copy does. Where its
instructions cap it below the copy, its roof is that pipe's (analysis/roofs.py)."""

from __future__ import annotations

import pandas as pd

from membound.analysis import roofs
from membound.model.precision import fmt
from membound.originals.rows import split
from membound.run import outputs

COLUMNS = ["precision", "stencil", "domain", "impl", "unit", "role", "GStencil_s", "GBs", "share_of_B",
           "copy_GBs", "copy_launches", "copy_share_of_B", "share_of_copy"]


def copies(scale: pd.DataFrame) -> pd.DataFrame:
    """The copy by (precision, n): the median GB/s over repetitions of SCALE on CUDA cores (role
    STREAM, not its twin) and the launches a timed call of it had; where SCALE timed a size both ways,
    the stencils' way (calls of `steps` launches, the field copies) is taken."""
    cc = scale[(scale["unit"] == "cuda_core") & (scale["role"] == "STREAM")]
    launches = pd.to_numeric(cc["steps"], errors="coerce").fillna(1).astype("int64")
    med = cc.groupby(["precision", cc["n"].astype("int64"), launches.rename("launches")])["value"].median()
    med = med.reset_index().sort_values("launches")
    return med.drop_duplicates(["precision", "n"], keep="last").set_index(["precision", "n"])


def table(stencil: pd.DataFrame, scale: pd.DataFrame, bandwidth_TBs: float) -> pd.DataFrame:
    """One row per stencil, precision and implementation at depth 1 (medians over repetitions)."""
    ours = split(stencil)[0]
    ours = ours[pd.to_numeric(ours["depth"], errors="coerce") == 1]
    keys = ["precision", "problem", "domain", "impl", "unit", "role"]
    med = ours.groupby(keys, sort=False).agg(GStencil_s=("value", "median"), n=("n", "first")).reset_index()
    out = med.rename(columns={"problem": "stencil"})
    d = out["precision"].map(lambda p: fmt(p).bytes)
    out["GBs"] = out["GStencil_s"] * 2 * d
    out["share_of_B"] = out["GBs"] / (bandwidth_TBs * 1e3)
    copy = copies(scale).reindex(pd.MultiIndex.from_arrays([out["precision"], out["n"].astype("int64")]))
    out["copy_GBs"], out["copy_launches"] = copy["value"].to_numpy(), copy["launches"].to_numpy()
    out["copy_share_of_B"] = out["copy_GBs"] / (bandwidth_TBs * 1e3)
    out["share_of_copy"] = out["GBs"] / out["copy_GBs"]
    return out[COLUMNS]


def write(stencil: pd.DataFrame, scale: pd.DataFrame, gpu: dict, csv, md, counters=None, counted=None,
          why_not: str = "") -> None:
    """Write the table with each row's roof (analysis/roofs.py; `counters`, `counted`: the counter rows
    and the counter runs' own rows, None where no counters ran, `why_not` says why) as CSV and Markdown;
    the legend says where a copy was not measured."""
    frame = roofs.table(table(stencil, scale, gpu["memory_bandwidth_TBs"]), gpu, counters, counted)
    missing = sorted(set(frame.loc[frame["copy_GBs"].isna(), "domain"]))
    legend = ("Every stencil implementation at depth 1 (medians over repetitions). GBs: GStencil/s x 2D, the "
              "bytes of one read and one write a point and step (D the element size); share_of_B: of the spec's "
              f"B = {gpu['memory_bandwidth_TBs']} TB/s (membound's target for its CUDA-core kernels: 0.85, "
              "docs/kernels_stencil.md); "
              "copy_GBs: SCALE on CUDA cores over arrays of the stencil's points in the same precision, the same "
              "run, each timed call copy_launches launches (a stencil's call has `steps`; a copy timed launch by "
              "launch pays the gap before each launch too); share_of_copy: the stencil's GBs over "
              "the copy's. copy_GStencil_s: the copy over 2D; pipe: the pipe whose instruction roof, the spec's "
              "peak over the kernel's own instructions a point counted by ncu, is lowest (pipe_GStencil_s); roof: "
              "the lower of the two, share_of_roof the stencil's GStencil/s over it; evidence: what the counters "
              f"show where that share is below {roofs.UNDER} (docs/kernels_stencil.md, docs/counters.md)."
              + (f" Pipe roofs not measured ({why_not})." if counters is None else "")
              + (f" No SCALE row of the fields {', '.join(missing)} in this run: their copy columns are n/a (a run "
                 "before SCALE timed the stencils' fields, or a field shrunk to fit the GPU)." if missing else ""))
    outputs.write_table(frame, csv, md, f"The unblocked stencils against the copy on {gpu['name']}", legend)
