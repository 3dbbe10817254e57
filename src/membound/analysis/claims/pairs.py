"""The claims' pairs: one problem timed on two sides in one repetition (`rep`; rows without it are
rep 0), algorithm pairs (the CUDA-core baseline role CC_ROLE against the tensor-core role TC_ROLE,
C2-C4) or twin pairs (each tensor-core impl `<impl>` against its CUDA-core twin `<impl>_twin`, C1)."""

from __future__ import annotations

import math

import pandas as pd

from membound.families import FAMILIES, analytical_row
from membound.model import equations, peaks
from membound.model.equations import MB, size_mb

CC_ROLE = {f.name: f.cc_role for f in FAMILIES.values()}   # each kernel's CUDA-core side
TC_ROLE = {f.name: f.tc_role for f in FAMILIES.values()}   # and its tensor-core side
TWIN = "_twin"                       # the CUDA-core twin of tensor-core implementation <impl> is <impl>_twin
PAIR_COLUMNS = ["kernel", "problem", "precision", "rep", "code", "source", "cc_impl", "tc_impl", "cc_role", "tc_role", "depth_cc",
                "depth_tc", "equal_depth", "size_MB", "working_set_MB", "I", "bound", "cc_dram_TBs", "t_cc_s",
                "t_tc_s", "speedup", "ratio"]


def with_rep(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` with an integer `rep` column and a `precision` (rows written before repetitions, or
    precisions, existed are rep 0, fp64)."""
    rep = rows["rep"] if "rep" in rows else pd.Series(0, index=rows.index)
    precision = rows["precision"].astype(object).fillna("fp64") if "precision" in rows else "fp64"
    return rows.assign(rep=pd.to_numeric(rep, errors="coerce").fillna(0).astype(int), precision=precision)


def _sides(rows: pd.DataFrame, twins: bool, tc_role: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The CUDA-core and tensor-core rows of the algorithm pairs (by role; `tc_role`: that tensor-core
    role instead of the family's, e.g. the stencils' sparse one), or of the twin pairs (`twins`: each
    twin row gets `sibling`, the tensor-core impl it is compared with)."""
    impl = rows["impl"].astype(str)
    twin = (rows["unit"] == "cuda_core") & impl.str.endswith(TWIN)
    if twins:
        cc = rows[twin].assign(sibling=impl[twin].str[: -len(TWIN)])
        return cc, rows[(rows["unit"] == "tensor_core") & impl.isin(set(cc["sibling"]))]
    cc = rows[(rows["unit"] == "cuda_core") & ~twin & (rows["role"] == rows["kernel"].map(CC_ROLE))]
    role = tc_role if tc_role else rows["kernel"].map(TC_ROLE)
    return cc, rows[(rows["unit"] == "tensor_core") & (rows["role"] == role)]


def _working_set_mb(row, d: int) -> float:
    """The bytes one launch touches at least once, MB, with elements of d bytes: SCALE a and b (2 d n),
    SpMV Table 2's size (CSR arrays, x and y), a stencil's two grids (2 d bytes per point)."""
    if row["kernel"] == "spmv":
        return size_mb(row["rows"], row["cols"], row["nnz"], d)
    return 2 * d * float(row["n"]) / MB


def pairs(rows: pd.DataFrame, gpu: dict, stencils, twins: bool = False, tc_role: str | None = None) -> pd.DataFrame:
    """One row per (kernel, problem, precision, rep) timed on both sides: median times, speedup
    t_CC/t_TC and ratio t_TC/t_CC, the CUDA-core row's analytical I, memory- or compute-bound by eq. 4
    against the precision's CUDA-core machine balance (eq. 1), both sides' temporal depth, size_MB
    (SCALE: the input array, D n bytes; SpMV: Table 2's size with D-byte values; stencils: n/a), the
    working set and the CUDA-core side's achieved DRAM bandwidth by the model's Q. `twins`: twin pairs
    (C1) instead of algorithm pairs; `tc_role`: the tensor-core side's role (default the family's)."""
    cc, tc = _sides(with_rep(rows), twins, tc_role)
    keys = ["kernel", "problem", "precision", "rep"]
    for side in (cc, tc):
        dup = side[side.duplicated(keys + (["impl"] if twins else []))]
        if not dup.empty:
            d = dup.iloc[0]
            raise ValueError(f"raw rows: more than one {d['unit']} row ({d['impl']}) for {d['kernel']} {d['problem']} "
                             f"rep {d['rep']}")
    on = keys + (["sibling"] if twins else [])
    tc = tc.assign(sibling=tc["impl"]) if twins else tc
    both = cc.merge(tc[on + ["impl", "role", "depth", "t_median_s"]], on=on, suffixes=("_cc", "_tc"))
    out = []
    for _, c in both.iterrows():
        row = c.rename({"t_median_s_cc": "t_median_s", "depth_cc": "depth", "impl_cc": "impl"})
        a = analytical_row(row, gpu, stencils)
        p = peaks.at(gpu, c["precision"])
        d, balance = p.element_bytes, p.balance("cuda_core")
        out.append({
            "kernel": c["kernel"], "problem": c["problem"], "precision": c["precision"], "rep": c["rep"],
            "code": c["code"], "source": c["source"],
            "cc_impl": c["impl_cc"], "tc_impl": c["impl_tc"], "cc_role": c["role_cc"], "tc_role": c["role_tc"],
            "depth_cc": c["depth_cc"], "depth_tc": c["depth_tc"],
            "equal_depth": bool((pd.isna(c["depth_cc"]) and pd.isna(c["depth_tc"])) or c["depth_cc"] == c["depth_tc"]),
            "size_MB": (d * c["n"] / MB if c["kernel"] == "scale" else
                        size_mb(c["rows"], c["cols"], c["nnz"], d) if c["kernel"] == "spmv" else math.nan),
            "working_set_MB": _working_set_mb(c, d), "I": a["I"],
            "bound": "memory" if equations.is_memory_bound(a["I"], balance) else "compute",
            "cc_dram_TBs": a["Q"] / c["t_median_s_cc"] / 1e12,
            "t_cc_s": c["t_median_s_cc"], "t_tc_s": c["t_median_s_tc"],
            "speedup": c["t_median_s_cc"] / c["t_median_s_tc"], "ratio": c["t_median_s_tc"] / c["t_median_s_cc"],
        })
    return pd.DataFrame(out, columns=PAIR_COLUMNS)


def missing_twins(rows: pd.DataFrame) -> list[str]:
    """'<kernel> <impl>' of each tensor-core implementation in `rows` that has no <impl>_twin rows."""
    impls = set(rows["impl"].astype(str))
    tc = rows[rows["unit"] == "tensor_core"].drop_duplicates(["kernel", "impl"])
    return [f"{k} {i}" for k, i in zip(tc["kernel"], tc["impl"]) if f"{i}{TWIN}" not in impls]
