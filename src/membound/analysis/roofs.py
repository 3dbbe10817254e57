"""Each depth-1 stencil against its own roof: the copy of its arrays (analysis/bandwidth.py), the
instruction roof of the pipe its counted instructions fill first or its issue-slot roof, whichever is
lowest, and its share of that roof. A pipe's roof is the spec's peak (model/peaks.py) over the
kernel's own instructions per point and step, counted by ncu in the counter run of its case
(docs/counters.md):

- FP64 pipe: DADD + DMUL + DFMA thread instructions, P_cc(fp64) / 2 of them a second;
- FMA pipes: FP32 (FADD, FMUL, FFMA) and FP16 (HADD, HMUL, HFMA less the HFMA2.MMA register moves;
  a packed half2 instruction and an f16 -> f32 conversion count once each) thread instructions,
  P_cc(fp32) / 2 a second (Hopper issues both kinds to its FMA pipes; P_cc(fp16) / 4 is the same rate);
- tensor cores: the counted tensor FLOPs at the dense peak, a 2:4-sparse kernel's at the sparse one;
- issue slots: every warp instruction executed (loads, shared-memory accesses and address arithmetic
  too), at the spec's `issue_Ginst_s` a second; counted since 2026-12-05, NaN in older counter rows.

Where a kernel is under UNDER of its roof, `evidence` gives what the counters show: DRAM against the
copy, the busiest FP or tensor pipe against its peak and the issue slots used, where counted; with all of
them short of saturation what is left is latency (the warps' stalls), which these counters do not count.
A case without a counter run at depth 1 (the depth sweep's rows) has the copy for its roof and no pipe
columns."""

from __future__ import annotations

import numpy as np
import pandas as pd

from membound.model import peaks
from membound.model.precision import FORMATS, fmt
from membound.run import measure

# the format whose CUDA-core SASS ops are the FMA pipes' (FFMA): their roof is its CUDA-core peak
FMA_FORMAT = next(f.name for f in FORMATS.values() if "ffma" in f.cc_ops)

UNDER = 0.90
COLUMNS = ["copy_GStencil_s", "pipe", "pipe_GStencil_s", "issue_GStencil_s", "roof", "roof_GStencil_s",
           "share_of_roof", "evidence"]


def _instructions(c: pd.DataFrame) -> pd.DataFrame:
    """Per counter row: FP64-pipe and FMA-pipe thread instructions, tensor FLOPs, warp instructions (NaN:
    not counted)."""
    hfma = (c["hfma"].fillna(0) - 32 * c["hfma2_mma_inst"].fillna(0)).clip(lower=0)
    return pd.DataFrame({"FP64 pipe": c[["dadd", "dmul", "dfma"]].fillna(0).sum(axis=1),
                         "FMA pipes": c[["fadd", "fmul", "ffma", "hadd", "hmul"]].fillna(0).sum(axis=1) + hfma,
                         "tensor cores": c["flops_tensor"].fillna(0),
                         "issue slots": c["inst_executed"] if "inst_executed" in c else np.nan})


def pipe_roofs(frame: pd.DataFrame, gpu: dict, counters: pd.DataFrame, counted: pd.DataFrame) -> pd.DataFrame:
    """Per row of `frame` (bandwidth.table's), in GStencil/s: the lowest FP or tensor pipe roof and its
    pipe, and the issue-slot roof (NaN and '' without a depth-1 counter row of its case; issue NaN where
    warp instructions were not counted or the spec has no `issue_Ginst_s`)."""
    main = counters[counters["part"] == "main"].set_index("tag")
    items = counted.drop_duplicates("tag").set_index("tag")["work_items"]
    per_item = _instructions(main).div(items.reindex(main.index), axis=0)
    rate = {"FP64 pipe": 1e3 * peaks.at(gpu, "fp64").cuda_core / 2,        # G thread instructions a second
            "FMA pipes": 1e3 * peaks.at(gpu, FMA_FORMAT).cuda_core / 2}
    issue = gpu.get("issue_Ginst_s", np.nan)                                # G warp instructions a second
    out = []
    for r in frame.itertuples():
        tag = measure.launch_tag("stencil", r.impl, r.stencil, 1, r.precision)
        if tag not in per_item.index:
            out.append((np.nan, "", np.nan))
            continue
        counts = per_item.loc[tag]
        tc = peaks.at(gpu, r.precision).peak("tensor_core", "2:4" if r.impl == "tc_sparse" else "dense")
        rate["tensor cores"] = 1e3 * tc if tc else np.nan                   # GFLOP/s
        roofs = {p: rate[p] / counts[p] for p in rate if counts[p] > 0 and rate[p] > 0}
        pipe = min(roofs, key=roofs.get) if roofs else ""
        out.append((roofs.get(pipe, np.nan), pipe, issue / counts["issue slots"]))
    return pd.DataFrame(out, columns=["pipe_GStencil_s", "pipe", "issue_GStencil_s"], index=frame.index)


def table(frame: pd.DataFrame, gpu: dict, counters: pd.DataFrame | None, counted: pd.DataFrame | None) -> pd.DataFrame:
    """`frame` (bandwidth.table) with each row's roof (COLUMNS): the lowest of the copy, its FP or tensor
    pipes' roofs and its issue-slot roof."""
    d = frame["precision"].map(lambda p: fmt(p).bytes)
    out = frame.assign(copy_GStencil_s=frame["copy_GBs"] / (2 * d))
    none = pd.DataFrame({"pipe_GStencil_s": np.nan, "pipe": "", "issue_GStencil_s": np.nan}, index=frame.index)
    out = out.join(pipe_roofs(frame, gpu, counters, counted) if counters is not None and counted is not None else none)
    candidates = pd.DataFrame({"copy": out["copy_GStencil_s"], "pipe": out["pipe_GStencil_s"],
                               "issue slots": out["issue_GStencil_s"]})
    lowest = candidates.fillna(np.inf).idxmin(axis=1).where(candidates.notna().any(axis=1), "")
    out["roof"] = [out.at[i, "pipe"] if k == "pipe" else k for i, k in lowest.items()]
    out["roof_GStencil_s"] = candidates.min(axis=1)
    out["share_of_roof"] = out["GStencil_s"] / out["roof_GStencil_s"]
    out["evidence"] = [evidence(r) for r in out.itertuples()]
    return out[[*frame.columns, *COLUMNS]]


def evidence(r) -> str:
    """What the counters show for a row under UNDER of its roof ('' otherwise)."""
    if not r.share_of_roof < UNDER:
        return ""
    dram = f"DRAM at {r.GStencil_s / r.copy_GStencil_s:.2f} of the copy"
    if not r.pipe:
        return f"{dram}; no counter run of this case at depth 1, so no pipe roof"
    issue = (f"issue slots at {r.GStencil_s / r.issue_GStencil_s:.2f}: none saturated, so latency (the warps' "
             "stalls, not counted)" if r.issue_GStencil_s > 0 else
             "neither saturated; issue slots not counted in this run (docs/counters.md)")
    return f"{dram}, {r.pipe} at {r.GStencil_s / r.pipe_GStencil_s:.2f} of peak, {issue}"
