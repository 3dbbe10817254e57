"""rocprof (AMD): the counter input file and parsers for rocprof v1's CSV (one row per dispatch,
one column per counter) and rocprofv3's counter_collection.csv (one row per dispatch and counter),
both read by column name.

FLOPs per precision p (F64, F32, F16; paper 003 eq. 1 for F64, "a similar formula [...] for single
and mixed precision by substituting relevant counters for each datatype"; TRANS as rocprof-compute's
roofline counts it):
    VALU:  64 (ADD + MUL + TRANS)_p + 128 FMA_p           (wave64 instructions, an FMA is 2 FLOPs)
    MFMA:  512 MFMA_MOPS_p   (p also BF16; the counter steps once per 512 FLOPs in every type)
so CUDA-core (VALU) FLOPs sum the three precisions, tensor (MFMA) FLOPs the four types.
HBM bytes from the TCC to EA requests (rocprof-compute's roofline), 32 B and 64 B requests:
    read  = 32 RDREQ_32B + 64 (RDREQ - RDREQ_32B)
    write = 64 WRREQ_64B + 32 (WRREQ - WRREQ_64B)
named TCC_EA_* on MI200 (gfx90a) and TCC_EA0_* on MI300 (gfx94x).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from membound.counters.ncu import COLUMNS, CounterError
from membound.model.precision import FORMATS

# rocprof's datatype suffix of a precision: its MFMA's type (F64, F32, F16, BF16; precision.Format.mfma)
VALU = {p: [f"SQ_INSTS_VALU_{op}_{f.mfma.type.upper()}" for op in ("ADD", "MUL", "FMA", "TRANS")]
        for p, f in FORMATS.items() if f.cc_ops and f.mfma}
MFMA = [f"SQ_INSTS_VALU_MFMA_MOPS_{f.mfma.type.upper()}" for f in FORMATS.values() if f.mfma]
EA = ["RDREQ_sum", "RDREQ_32B_sum", "WRREQ_sum", "WRREQ_64B_sum"]


def ea_prefix(arch: str) -> str:
    """'TCC_EA0_' on MI300 (gfx94x), else 'TCC_EA_' (MI200, gfx90a)."""
    return "TCC_EA0_" if arch.startswith("gfx94") else "TCC_EA_"


def pmc_text(arch: str) -> str:
    """rocprof's counter input (v1 `-i` and rocprofv3 `-i` text form): one pass per `pmc:` line, four
    counters each (a VALU precision, the MFMA types, the EA requests)."""
    ea = [ea_prefix(arch) + c for c in EA]
    return "\n".join(f"pmc: {' '.join(group)}" for group in (*VALU.values(), MFMA, ea)) + "\n"


def _long_to_wide(frame: pd.DataFrame) -> pd.DataFrame:
    """rocprofv3 long rows (Counter_Name, Counter_Value) -> one row per dispatch."""
    keys = ["Dispatch_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp"]
    missing = [c for c in keys + ["Counter_Name", "Counter_Value"] if c not in frame.columns]
    if missing:
        raise CounterError(f"rocprofv3 CSV lacks columns {missing}; collect with rocprofv3 --output-format csv")
    wide = frame.pivot_table(index=keys, columns="Counter_Name", values="Counter_Value", aggfunc="sum")
    return wide.reset_index().rename(columns={"Dispatch_Id": "dispatch", "Kernel_Name": "kernel_name",
                                              "Start_Timestamp": "begin_ns", "End_Timestamp": "end_ns"})


def _v1(frame: pd.DataFrame) -> pd.DataFrame:
    if "KernelName" not in frame.columns or "Index" not in frame.columns:
        raise CounterError("rocprof v1 CSV lacks Index/KernelName columns")
    out = frame.rename(columns={"Index": "dispatch", "KernelName": "kernel_name", "BeginNs": "begin_ns",
                                "EndNs": "end_ns"})
    out["kernel_name"] = out["kernel_name"].str.replace(r"( \[clone \.kd\]|\.kd)$", "", regex=True)
    return out


def read_dispatches(paths) -> pd.DataFrame:
    """Counter values per dispatch from rocprof v1 or rocprofv3 CSVs (several passes merged by dispatch)."""
    frames = []
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        frame = pd.read_csv(path)
        frames.append(_long_to_wide(frame) if "Counter_Name" in frame.columns else _v1(frame))
    keys = ["dispatch", "kernel_name"]
    merged = frames[0]
    for frame in frames[1:]:
        new = [c for c in frame.columns if c not in merged.columns or c in keys]
        merged = merged.merge(frame[new], on=keys, how="outer")
    return merged


def achieved(dispatches: pd.DataFrame) -> pd.DataFrame:
    """FLOPs per precision and unit (module docstring), HBM bytes and time per dispatch; CounterError
    naming missing counters."""
    ea = next((p for p in ("TCC_EA0_", "TCC_EA_") if p + EA[0] in dispatches.columns), None)
    needed = [c for group in VALU.values() for c in group] + MFMA
    missing = [c for c in needed if c not in dispatches.columns] + ([] if ea else ["TCC_EA(0)_RDREQ_sum"])
    if missing:
        raise CounterError(f"rocprof output lacks counters {missing}; collect with the input of rocprof.pmc_text()")
    d = dispatches
    out = d[["dispatch", "kernel_name"]].copy()
    for p, (add, mul, fma, trans) in VALU.items():
        out[f"flops_valu_{p}"] = 64 * (d[add] + d[mul] + d[trans]) + 128 * d[fma]
    out["flops_cuda_core"] = out[[f"flops_valu_{p}" for p in VALU]].sum(axis=1)
    out["flops_tensor"] = 512 * d[MFMA].sum(axis=1)
    out["flops"] = out["flops_cuda_core"] + out["flops_tensor"]
    rd, rd32, wr, wr64 = (d[ea + c] for c in EA)
    out["dram_read"] = 32 * rd32 + 64 * (rd - rd32)
    out["dram_write"] = 64 * wr64 + 32 * (wr - wr64)
    out["dram_bytes"] = out["dram_read"] + out["dram_write"]
    out["time_s"] = (d["end_ns"] - d["begin_ns"]) / 1e9 if "begin_ns" in d.columns else float("nan")
    return out


def summarize(dispatches: pd.DataFrame) -> pd.DataFrame:
    """achieved() summed per kernel name, in ncu.COLUMNS (no launch tags: rocprof rows carry none)."""
    per = achieved(dispatches)
    grouped = per.groupby("kernel_name", sort=False).agg(
        launches=("dispatch", "size"), **{c: (c, "sum") for c in per.columns if c not in ("dispatch", "kernel_name")})
    grouped = grouped.reset_index().assign(profiler="rocprof", part="main",
                                           tensor_flops_from="512 x SQ_INSTS_VALU_MFMA_MOPS_{F64,F32,F16,BF16}")
    return grouped.reindex(columns=COLUMNS)
