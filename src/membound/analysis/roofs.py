"""Each depth-1 stencil against its own roof: the copy of its arrays (analysis/bandwidth.py) or the
instruction roof of the pipe its counted instructions fill first, whichever is lower, and its share of
that roof. A pipe's roof is the spec's peak (model/peaks.py) over the kernel's own instructions per
point and step, counted by ncu in the counter run of its case (docs/counters.md):

- FP64 pipe: DADD + DMUL + DFMA thread instructions, P_cc(fp64) / 2 of them a second;
- FMA pipes: FP32 (FADD, FMUL, FFMA) and FP16 (HADD, HMUL, HFMA less the HFMA2.MMA register moves;
  a packed half2 instruction and an f16 -> f32 conversion count once each) thread instructions,
  P_cc(fp32) / 2 a second (Hopper issues both kinds to its FMA pipes; P_cc(fp16) / 4 is the same rate);
- tensor cores: the counted tensor FLOPs at the dense peak, a 2:4-sparse kernel's at the sparse one.

Where a kernel is under UNDER of its roof, `evidence` gives what the counters show: DRAM against the
copy and the busiest pipe against its peak. A case without a counter run at depth 1 (the depth sweep's
rows) has the copy for its roof and no pipe columns."""

from __future__ import annotations

import numpy as np
import pandas as pd

from membound.model import peaks
from membound.model.precision import fmt
from membound.run import measure

UNDER = 0.90
COLUMNS = ["pipe", "pipe_GStencil_s", "copy_GStencil_s", "roof", "roof_GStencil_s", "share_of_roof", "evidence"]


def _instructions(c: pd.DataFrame) -> pd.DataFrame:
    """Per counter row: FP64-pipe and FMA-pipe thread instructions and tensor FLOPs."""
    hfma = (c["hfma"].fillna(0) - 32 * c["hfma2_mma_inst"].fillna(0)).clip(lower=0)
    return pd.DataFrame({"FP64 pipe": c[["dadd", "dmul", "dfma"]].fillna(0).sum(axis=1),
                         "FMA pipes": c[["fadd", "fmul", "ffma", "hadd", "hmul"]].fillna(0).sum(axis=1) + hfma,
                         "tensor cores": c["flops_tensor"].fillna(0)})


def pipe_roofs(frame: pd.DataFrame, gpu: dict, counters: pd.DataFrame, counted: pd.DataFrame) -> pd.DataFrame:
    """Per row of `frame` (bandwidth.table's), the lowest pipe roof in GStencil/s and its pipe (NaN
    and '' without a depth-1 counter row of its case)."""
    main = counters[counters["part"] == "main"].set_index("tag")
    items = counted.drop_duplicates("tag").set_index("tag")["work_items"]
    per_item = _instructions(main).div(items.reindex(main.index), axis=0)
    rate = {"FP64 pipe": peaks.at(gpu, "fp64").cuda_core / 2, "FMA pipes": peaks.at(gpu, "fp32").cuda_core / 2}
    out = []
    for r in frame.itertuples():
        tag = measure.launch_tag("stencil", r.impl, r.stencil, 1, r.precision)
        if tag not in per_item.index:
            out.append((np.nan, ""))
            continue
        sparsity = "2:4" if r.impl == "tc_sparse" else "dense"
        tc = peaks.at(gpu, r.precision).peak("tensor_core", sparsity)
        roofs = {p: 1e3 * (tc if p == "tensor cores" else rate[p]) / n     # T/s over per point: GStencil/s
                 for p, n in per_item.loc[tag].items() if n > 0 and (p != "tensor cores" or tc)}
        pipe = min(roofs, key=roofs.get) if roofs else ""
        out.append((roofs[pipe], pipe) if roofs else (np.nan, ""))
    return pd.DataFrame(out, columns=["pipe_GStencil_s", "pipe"], index=frame.index)


def table(frame: pd.DataFrame, gpu: dict, counters: pd.DataFrame | None, counted: pd.DataFrame | None) -> pd.DataFrame:
    """`frame` (bandwidth.table) with each row's roof (COLUMNS): the copy or its lowest pipe's roof."""
    d = frame["precision"].map(lambda p: fmt(p).bytes)
    out = frame.assign(copy_GStencil_s=frame["copy_GBs"] / (2 * d))
    pipes = (pipe_roofs(frame, gpu, counters, counted) if counters is not None and counted is not None
             else pd.DataFrame({"pipe_GStencil_s": np.nan, "pipe": ""}, index=frame.index))
    out = out.join(pipes)
    under_pipe = out["pipe_GStencil_s"] < out["copy_GStencil_s"].fillna(np.inf)
    out["roof"] = np.where(under_pipe, out["pipe"], np.where(out["copy_GStencil_s"].notna(), "copy", ""))
    out["roof_GStencil_s"] = np.where(under_pipe, out["pipe_GStencil_s"], out["copy_GStencil_s"])
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
    return (f"{dram}, {r.pipe} at {r.GStencil_s / r.pipe_GStencil_s:.2f} of peak: neither saturated; "
            "issue slots and stalls are not counted (docs/counters.md)")
