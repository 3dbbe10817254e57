"""The paper's claims (paper 000 Sec. 4.2 and 5.4) checked on the measured raw rows, each in every
precision of the run (fp64, fp32, fp16: rows of one precision against that precision's peaks, element
size and eq. 23 bound) with a bootstrap confidence interval over problems and repetitions.

A pair is one problem timed on two sides in one repetition (`rep`; rows without it are rep 0):
- C2-C4 compare algorithms as the paper does: the CUDA-core baseline (role CC_ROLE) against the
  tensor-core implementation (role TC_ROLE);
- C1 compares each tensor-core implementation `<impl>` with its CUDA-core twin `<impl>_twin` (the
  same layout, memory accesses and launch shape, FMAs for MMAs), on the pairs that are memory-bound
  in practice: working set larger than the L2 and the twin's achieved DRAM bandwidth (analytical Q
  over its time) at least `dram_fraction` of the spec's; where counters were measured, the twin must
  also move its sibling's DRAM bytes to within TWIN_DRAM (else it is not a twin). The other pairs
  are listed with the reason.

Each claim's estimate is the geometric mean of its ratios (t_TC/t_CC, or the speedup t_CC/t_TC for
C1), over problems of the per-problem geometric mean over repetitions; the 95% interval is a
percentile bootstrap resampling problems, then each drawn problem's repetitions (seeded: the same
rows give the same interval). Against the claim's reference value r (1, or eq. 23's bound for C1),
with the relative `margin` (config claims.margin, docs/claims.md):
LEVEL where the whole interval lies in r(1 -+ margin); else SUPPORTED where it lies entirely on the
claim's side of r, CONTRADICTED entirely on the other side, INCONCLUSIVE where it straddles r.
N/A in a precision the device has no tensor cores for (the CPU profile emulates them:
`on_these_timings` still says what the timings give); NO DATA where no pair qualifies, with the reason
(a precision with no rows at all says so). A CONTRADICTED verdict is a finding, reported like a
SUPPORTED one, never an error.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from membound.families import FAMILIES
from membound.model import equations, peaks
from membound.model.analytical import analytical
from membound.model.equations import MB, size_mb
from membound.model.precision import PRECISIONS
from membound.run import measure, outputs

SUPPORTED, LEVEL, CONTRADICTED, INCONCLUSIVE = "SUPPORTED", "LEVEL", "CONTRADICTED", "INCONCLUSIVE"
NOT_APPLICABLE, NO_DATA = "N/A", "NO DATA"
WORSE = [SUPPORTED, LEVEL, INCONCLUSIVE, CONTRADICTED]   # a claim of several parts takes its worst part's
CC_ROLE = {f.name: f.cc_role for f in FAMILIES.values()}   # each kernel's CUDA-core side
TC_ROLE = {f.name: f.tc_role for f in FAMILIES.values()}   # and its tensor-core side
TWIN = "_twin"                       # the CUDA-core twin of tensor-core implementation <impl> is <impl>_twin
TWIN_DRAM = 0.02                     # a twin's DRAM bytes within 2% of its sibling's (issue 15's criterion)
RESAMPLES, SEED, LEVEL_95 = 4000, 20250325, 95.0
SURROGATE = ("**SURROGATE MATRICES.** The SpMV rows were measured on labelled surrogate stand-ins (the rows "
             "and nnz of each SuiteSparse matrix times spmv.surrogate_scale, a structure of its family), not "
             "the SuiteSparse data.")
PAIR_COLUMNS = ["kernel", "problem", "precision", "rep", "code", "source", "cc_impl", "tc_impl", "cc_role", "tc_role", "depth_cc",
                "depth_tc", "equal_depth", "size_MB", "working_set_MB", "I", "bound", "cc_dram_TBs", "t_cc_s",
                "t_tc_s", "speedup", "ratio"]
PAPER = 'Zhang et al., "Can Tensor Cores Benefit Memory-Bound Kernels? (NO!)", GPGPU \'25 (paper 000)'


# ------------------------------------------------------------------------------------ pairs


def _with_rep(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` with an integer `rep` column and a `precision` (rows written before repetitions, or
    precisions, existed are rep 0, fp64)."""
    rep = rows["rep"] if "rep" in rows else pd.Series(0, index=rows.index)
    precision = rows["precision"].astype(object).fillna("fp64") if "precision" in rows else "fp64"
    return rows.assign(rep=pd.to_numeric(rep, errors="coerce").fillna(0).astype(int), precision=precision)


def _sides(rows: pd.DataFrame, twins: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The CUDA-core and tensor-core rows of the algorithm pairs (by role), or of the twin pairs
    (`twins`: each twin row gets `sibling`, the tensor-core impl it is compared with)."""
    impl = rows["impl"].astype(str)
    twin = (rows["unit"] == "cuda_core") & impl.str.endswith(TWIN)
    if twins:
        cc = rows[twin].assign(sibling=impl[twin].str[: -len(TWIN)])
        return cc, rows[(rows["unit"] == "tensor_core") & impl.isin(set(cc["sibling"]))]
    cc = rows[(rows["unit"] == "cuda_core") & ~twin & (rows["role"] == rows["kernel"].map(CC_ROLE))]
    return cc, rows[(rows["unit"] == "tensor_core") & (rows["role"] == rows["kernel"].map(TC_ROLE))]


def _working_set_mb(row, d: int) -> float:
    """The bytes one launch touches at least once, MB, with elements of d bytes: SCALE a and b (2 d n),
    SpMV Table 2's size (CSR arrays, x and y), a stencil's two grids (2 d bytes per point)."""
    if row["kernel"] == "spmv":
        return size_mb(row["rows"], row["cols"], row["nnz"], d)
    return 2 * d * float(row["n"]) / MB


def pairs(rows: pd.DataFrame, gpu: dict, stencils, twins: bool = False) -> pd.DataFrame:
    """One row per (kernel, problem, precision, rep) timed on both sides: median times, speedup
    t_CC/t_TC and ratio t_TC/t_CC, the CUDA-core row's analytical I, memory- or compute-bound by eq. 4
    against the precision's CUDA-core machine balance (eq. 1), both sides' temporal depth, size_MB
    (SCALE: the input array, D n bytes; SpMV: Table 2's size with D-byte values; stencils: n/a), the
    working set and the CUDA-core side's achieved DRAM bandwidth by the model's Q. `twins`: twin pairs
    (C1) instead of algorithm pairs."""
    cc, tc = _sides(_with_rep(rows), twins)
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
        a = analytical(row, gpu, stencils)
        p = peaks.at(gpu, c["precision"])
        d, balance = p.element_bytes, p.balance("cuda_core")
        out.append({
            "kernel": c["kernel"], "problem": c["problem"], "precision": c["precision"], "rep": c["rep"], "code": c["code"],
            "source": c["source"],
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


# ------------------------------------------------------------------------------------ statistics


def interval(frame: pd.DataFrame, column: str, resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    """Geometric mean of `column` over the problems of `frame` (each problem's geometric mean over
    its repetitions) and its percentile-bootstrap 95% interval: resample problems with replacement,
    then each drawn problem's repetitions. NaNs where `frame` is empty."""
    logs = [np.log(g[column].to_numpy(float)) for _, g in frame.groupby(["kernel", "problem"], sort=False)]
    out = {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n": len(frame), "problems": len(logs)}
    if not logs:
        return out
    counts = np.array([len(x) for x in logs])
    table = np.zeros((len(logs), counts.max()))
    for i, x in enumerate(logs):
        table[i, : len(x)] = x
    out["estimate"] = float(np.exp(np.mean(table.sum(1) / counts)))
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, len(logs), (resamples, len(logs)))           # problems
    n = counts[drawn][..., None]
    picks = (rng.random((*drawn.shape, counts.max())) * n).astype(int)  # repetitions of each drawn problem
    used = np.arange(counts.max()) < n
    means = (np.where(used, table[drawn[..., None], picks], 0.0).sum(-1) / n[..., 0]).mean(-1)
    tail = (100 - LEVEL_95) / 2
    out["ci_low"], out["ci_high"] = (float(v) for v in np.exp(np.percentile(means, [tail, 100 - tail])))
    return out


def decide(ci_low: float, ci_high: float, reference: float, margin: float, side: str) -> str:
    """LEVEL, SUPPORTED, CONTRADICTED or INCONCLUSIVE of an interval against `reference` (see the
    module docstring); `side` is where the claim puts the value: 'above' or 'below' the reference.
    NO DATA for an empty interval."""
    if not (math.isfinite(ci_low) and math.isfinite(ci_high)):
        return NO_DATA
    if reference * (1 - margin) <= ci_low and ci_high <= reference * (1 + margin):
        return LEVEL
    above, below = ci_low > reference, ci_high < reference
    if above or below:
        return SUPPORTED if above == (side == "above") else CONTRADICTED
    return INCONCLUSIVE


def worst(verdicts) -> str:
    """The least favourable of several parts' verdicts (NO DATA parts aside; NO DATA if all are)."""
    known = [v for v in verdicts if v in WORSE]
    return max(known, key=WORSE.index) if known else NO_DATA


def _estimate(frame: pd.DataFrame, column: str, reference: float, margin: float, side: str) -> dict:
    """interval() of `frame[column]` with its verdict against `reference`."""
    est = interval(frame, column)
    return {**est, "verdict": decide(est["ci_low"], est["ci_high"], reference, margin, side)}


def _per_problem(frame: pd.DataFrame, column: str, reference: float, margin: float, side: str) -> pd.DataFrame:
    """One row per problem: its estimate, interval over repetitions, repetitions and verdict (no
    interval and no verdict from a single repetition)."""
    out = [{"kernel": k, "problem": q, **(_estimate(g, column, reference, margin, side) if len(g) > 1 else
                                          {**interval(g, column), "ci_low": math.nan, "ci_high": math.nan, "verdict": ""})}
           for (k, q), g in frame.groupby(["kernel", "problem"], sort=False)]
    return pd.DataFrame(out, columns=["kernel", "problem", "estimate", "ci_low", "ci_high", "n", "problems", "verdict"])


def _sources(frame: pd.DataFrame) -> list[str]:
    return sorted(set(frame["source"].dropna()))


def _labels(frame: pd.DataFrame) -> list[str]:
    return sorted({f"{k} {q}" for k, q in zip(frame["kernel"], frame["problem"])})


def interval_text(e: dict) -> str:
    """"estimate [ci_low, ci_high]" of a claim or part (3 significant digits), or "no data"."""
    known = e["estimate"] is not None and math.isfinite(e["estimate"])    # None: read back from claims.json
    return f"{e['estimate']:.3g} [{e['ci_low']:.3g}, {e['ci_high']:.3g}]" if known else "no data"


def _claim(cid: str, est: dict, reference: float, side: str, margin: float, used: pd.DataFrame, **fields) -> dict:
    """A claim's record: the fields every claim has (claims.json), then `fields`."""
    return {"id": cid, "verdict": est["verdict"], "on_these_timings": est["verdict"], "estimate": est["estimate"],
            "ci_low": est["ci_low"], "ci_high": est["ci_high"], "n": est["n"], "problems": est["problems"],
            "margin": margin, "reference": reference, "side": side, "pairs": _labels(used), **fields}


# ------------------------------------------------------------------------------------ the claims


def twin_counters(p: pd.DataFrame, counters: pd.DataFrame | None) -> pd.DataFrame:
    """Per twin pair, from the counter rows (ncu.COLUMNS, main kernels) of the same problem: the
    twin's DRAM bytes over its sibling's and the twin's achieved I (FLOPs / DRAM bytes); NaN where
    not measured."""
    out = pd.DataFrame({"twin_dram_ratio": math.nan, "I_achieved": math.nan}, index=p.index)
    if counters is None or counters.empty:
        return out
    main = counters[counters["part"] == "main"].drop_duplicates("tag").set_index("tag")
    tag = lambda impl: [measure.launch_tag(k, i, q, r) for k, i, q, r in zip(p["kernel"], impl, p["problem"], p["precision"])]
    twin, sibling = main.reindex(tag(p["cc_impl"])), main.reindex(tag(p["tc_impl"]))
    out["twin_dram_ratio"] = twin["dram_bytes"].to_numpy() / sibling["dram_bytes"].to_numpy()
    out["I_achieved"] = twin["flops"].to_numpy() / twin["dram_bytes"].to_numpy()
    return out


def _excluded(p: pd.DataFrame, gpu: dict, dram_fraction: float) -> pd.Series:
    """Why each twin pair does not test eq. 23 ('' where it does): unequal depth, DRAM bytes more
    than TWIN_DRAM from the sibling's (where measured), compute-bound by eq. 4, working set within
    the L2, or the twin's DRAM bandwidth (its problem's median over repetitions) below
    `dram_fraction` of the spec's B."""
    bw = gpu["memory_bandwidth_TBs"]
    dram = p.groupby(["kernel", "problem"])["cc_dram_TBs"].transform("median")
    return pd.Series([
        "unequal depth" if not same else
        f"not a twin: {100 * (r - 1):+.1f}% DRAM bytes of its sibling's" if abs(r - 1) > TWIN_DRAM else
        "compute-bound (eq. 4)" if bound == "compute" else
        f"fits in L2 ({ws:.3g} <= {gpu['l2_MB']:g} MB)" if ws <= gpu["l2_MB"] else
        f"not DRAM-bound: {100 * d / bw:.0f}% of B" if d < dram_fraction * bw else ""
        for same, r, bound, ws, d in zip(p["equal_depth"], p["twin_dram_ratio"], p["bound"], p["working_set_MB"], dram)],
        index=p.index, dtype=object)


def _above_eq22(cases: pd.DataFrame, margin: float) -> list[str]:
    """Deciding pairs whose interval lies above eq. 22's bound (with the achieved I where measured,
    else the analytical I) times 1 + margin: faster than arithmetic alone can make them."""
    bound = cases["eq22_bound_achieved_I"].fillna(cases["eq22_bound"])
    above = (cases["excluded"] == "") & (cases["ci_low"] > bound * (1 + margin))
    return [f"{k} {q}" for k, q in zip(cases.loc[above, "kernel"], cases.loc[above, "problem"])]


def speedup_bound(twins: pd.DataFrame, gpu: dict, margin: float, dram_fraction: float, missing: list[str],
                  counters: pd.DataFrame | None = None, precision: str = "fp64") -> dict:
    """C1: the tensor-core speedup over the CUDA-core twin (same traffic, FMAs for MMAs) stays below
    eq. 23's bound 2 - 2/(1 + alpha), alpha = P_TC/P_CC of `precision` (from the spec), on the
    `precision` pairs that are DRAM-bound in practice; `counters` (ncu rows, optional) check that
    each twin moves its sibling's bytes."""
    peak = peaks.at(gpu, precision)
    tensor, alpha, balance = math.isfinite(peak.alpha), peak.alpha, peak.balance("cuda_core")
    bound = equations.tc_upper_bound(alpha) if tensor else math.nan
    p = pd.concat([twins, twin_counters(twins, counters)], axis=1)
    p = p.assign(excluded=_excluded(p, gpu, dram_fraction))
    used = p[p["excluded"] == ""]
    est = _estimate(used, "speedup", bound, margin, "below")
    each = _per_problem(used, "speedup", bound, margin, "below")
    if (each["verdict"] == CONTRADICTED).any():
        est["verdict"] = CONTRADICTED              # one pair beyond the bound beyond noise contradicts it
    cases = (p.groupby(["kernel", "problem"], sort=False)
             .agg(tc_impl=("tc_impl", "first"), cc_impl=("cc_impl", "first"), working_set_MB=("working_set_MB", "first"),
                  I=("I", "first"), I_achieved=("I_achieved", "first"), cc_dram_TBs=("cc_dram_TBs", "median"),
                  twin_dram_ratio=("twin_dram_ratio", "first"), excluded=("excluded", "first"))
             .reset_index())
    eq22 = lambda col: [equations.tc_speedup_bound(alpha, balance, i) if tensor else math.nan for i in cases[col]]
    cases["eq22_bound"], cases["eq22_bound_achieved_I"] = eq22("I"), eq22("I_achieved")
    cases["eq23_bound"] = bound
    speed = _per_problem(p, "speedup", bound, margin, "below").drop(columns=["problems"])
    cases = cases.merge(speed.rename(columns={"estimate": "speedup", "n": "reps"}), on=["kernel", "problem"])
    cases.loc[cases["excluded"] != "", "verdict"] = ""
    numbers = {"alpha": alpha, "eq23_bound": bound, "balance_cc": balance, "dram_fraction": dram_fraction,
               "twin_pairs": int(len(cases)), "deciding_pairs": int((cases["excluded"] == "").sum()),
               "max_speedup": float(each["estimate"].max()) if len(each) else math.nan,
               "exceeding": list(each.loc[each["verdict"] == CONTRADICTED, "problem"]),
               "excluded": {f"{k} {q}": why for k, q, why in zip(cases["kernel"], cases["problem"], cases["excluded"]) if why},
               "missing_twins": missing, "twin_dram_tolerance": TWIN_DRAM,
               "above_eq22_beyond_margin": _above_eq22(cases, margin),
               "twin_traffic_measured": int(cases["twin_dram_ratio"].notna().sum())}
    summary = (f"speedup over the CUDA-core twin {interval_text(est)} over {numbers['deciding_pairs']} DRAM-bound twin pairs "
               f"(max {numbers['max_speedup']:.3g})" if len(used) else "no twin pair is DRAM-bound beyond the L2")
    summary += (f"; eq. 23 bound {bound:.3f} (alpha = {alpha:.3g})" if tensor else f"; bound undefined: {peak.note}")
    summary += f"; {len(cases) - numbers['deciding_pairs']} twin pairs excluded (reasons listed)"
    if missing:
        summary += f"; no twin for {', '.join(missing)}"
    record = _claim("C1", est, bound, "below", margin, used,
                    title="The tensor-core speedup over the CUDA-core twin stays below eq. 23's bound",
                    where="Sec. 4.2-4.3, eq. 23", sources=_sources(p), summary=summary, numbers=numbers, cases=cases,
                    text="Tensor Core Upper Bound: For memory-bound kernel, we have T_cmp -> T_mem: "
                         "Speedup < 1 + (alpha - 1)/(1 + alpha) = 2 - 2/(1 + alpha). Example: FP64 Nvidia GPUs "
                         "(with alpha = 2): Speedup < 1.33. [...] performance differences beyond that would require "
                         "memory access optimizations.",
                    test="speedup t_twin/t_TC of each tensor-core kernel over its CUDA-core twin (the same data layout, "
                         "memory accesses and launch shape, FMAs for MMAs) below 2 - 2/(1 + alpha), alpha = P_TC/P_CC "
                         f"of the spec, on the pairs with a working set larger than the L2 whose twin reaches at least "
                         f"{100 * dram_fraction:g}% of the spec's DRAM bandwidth (analytical Q / time; "
                         f"claims.dram_fraction) and, where counters were measured, moves its sibling's DRAM bytes "
                         f"to within {100 * TWIN_DRAM:g}%; any such pair's interval beyond the bound contradicts it")
    if not tensor:
        record["on_these_timings"] = NO_DATA
    return record


def scale_l2(p: pd.DataFrame, gpu: dict, margin: float) -> dict:
    """C2: tensor-core SCALE slower than CUDA-core SCALE (t_TC/t_CC > 1), within and beyond half the L2."""
    s = p[p["kernel"] == "scale"]
    half = gpu["l2_MB"] / 2
    parts = {"within_half_L2": s[s["size_MB"] <= half], "beyond_half_L2": s[s["size_MB"] > half]}
    sides = {key: {"sizes": part["problem"].nunique(), **_estimate(part, "ratio", 1.0, margin, "above")}
             for key, part in parts.items()}
    est = {**_estimate(s, "ratio", 1.0, margin, "above"), "verdict": worst(side["verdict"] for side in sides.values())}
    summary = "; ".join(f"{key.replace('_', ' ')}: t_TC/t_CC {interval_text(side)} over {side['sizes']} sizes, {side['verdict']}"
                        for key, side in sides.items())
    cases = _per_problem(s, "ratio", 1.0, margin, "above").drop(columns=["kernel", "problems"])
    cases = cases.rename(columns={"estimate": "ratio", "n": "reps"})
    sizes = s.drop_duplicates("problem").set_index("problem")["size_MB"]
    cases.insert(1, "size_MB", cases["problem"].map(sizes))
    cases.insert(2, "within_half_L2", cases["size_MB"] <= half)
    return _claim("C2", est, 1.0, "above", margin, s,
                  title="Tensor-core SCALE is slower than CUDA-core SCALE, within and beyond half the L2",
                  where="Sec. 5.4, Figure 6", sources=_sources(s), summary=summary,
                  numbers={"half_L2_MB": half, **sides}, cases=cases,
                  text="SCALE: Figure 6 reveals consistent, though modest, performance degradation when using tensor "
                       "cores compared to CUDA cores. (Figure 6 reports the geometric mean for input sizes larger and "
                       "smaller than half of the L2 cache.)",
                  test=f"geometric mean of t_TC/t_CC above 1, separately for inputs (D n bytes) within half the L2 "
                       f"(<= {half:g} MB) and beyond it; the verdict is the worse of the two parts', the estimate "
                       "pools all sizes")


def spmv_l2(p: pd.DataFrame, gpu: dict, margin: float) -> dict:
    """C3: cuSPARSE beats the tensor-core SpMV on matrices larger than the L2 (t_TC/t_CC > 1)."""
    s = p[p["kernel"] == "spmv"]
    larger, fitting = s[s["size_MB"] > gpu["l2_MB"]], s[s["size_MB"] <= gpu["l2_MB"]]
    est = _estimate(larger, "ratio", 1.0, margin, "above")
    each = _per_problem(larger, "ratio", 1.0, margin, "above")
    fit = _estimate(fitting, "ratio", 1.0, margin, "above")
    numbers = {"l2_MB": gpu["l2_MB"], "larger_than_L2": int(larger["problem"].nunique()),
               "cuda_core_faster_on": int((each["estimate"] > 1).sum()),
               "fitting_in_L2": int(fitting["problem"].nunique()), "fitting": fit}
    summary = (f"t_TC/t_CC {interval_text(est)} over {numbers['larger_than_L2']} matrices larger than the {gpu['l2_MB']:g} MB L2 "
               f"(cuSPARSE faster on {numbers['cuda_core_faster_on']}); {interval_text(fit)} over the "
               f"{numbers['fitting_in_L2']} that fit")
    cases = _per_problem(s, "ratio", 1.0, margin, "above").rename(columns={"estimate": "ratio", "n": "reps"})
    info = s.drop_duplicates("problem").set_index("problem")
    cases = cases.assign(code=cases["problem"].map(info["code"]), source=cases["problem"].map(info["source"]),
                         size_MB=cases["problem"].map(info["size_MB"]))
    cases = cases.assign(larger_than_L2=cases["size_MB"] > gpu["l2_MB"])[
        ["code", "problem", "source", "size_MB", "larger_than_L2", "ratio", "ci_low", "ci_high", "reps", "verdict"]]
    return _claim("C3", est, 1.0, "above", margin, larger,
                  title="cuSPARSE beats the tensor-core SpMV on matrices larger than the L2",
                  where="Sec. 5.4, Figure 7", sources=_sources(s), summary=summary, numbers=numbers, cases=cases,
                  text="SpMV: Figure 7 demonstrates that for datasets exceeding the L2 cache size, cuSPARSE "
                       "(CUDA core) outperforms DASP (tensor core) on average.",
                  test="geometric mean of t_TC/t_CC above 1 over the matrices whose Table 2 size (CSR arrays + x, y) "
                       "exceeds the L2")


def stencils_generally(p: pd.DataFrame, margin: float) -> dict:
    """C4: tensor-core stencils (ConvStencil role) generally slower than CUDA-core temporal blocking
    (EBISU role) at equal depth: the geometric mean of t_TC/t_CC over stencils above 1."""
    s = p[(p["kernel"] == "stencil") & p["equal_depth"]]
    est = _estimate(s, "ratio", 1.0, margin, "above")
    cases = _per_problem(s, "ratio", 1.0, margin, "above").rename(columns={"estimate": "ratio", "n": "reps"})
    info = s.drop_duplicates("problem").set_index("problem")
    cases = cases.assign(depth=cases["problem"].map(info["depth_cc"]), I=cases["problem"].map(info["I"]),
                         bound=cases["problem"].map(info["bound"]))[
        ["problem", "depth", "I", "bound", "ratio", "ci_low", "ci_high", "reps", "verdict"]]
    unequal = sorted(set(p.loc[(p["kernel"] == "stencil") & ~p["equal_depth"], "problem"]))
    slower = list(cases.loc[cases["ratio"] < 1 - margin, "problem"])
    summary = (f"t_TC/t_CC {interval_text(est)} over {len(cases)} stencils at equal depth; tensor cores faster by more than the "
               f"margin on {', '.join(slower) or 'none'}")
    return _claim("C4", est, 1.0, "above", margin, s,
                  title="Tensor-core stencils generally underperform CUDA-core temporal blocking at equal depth",
                  where="Sec. 5.4, Figure 8", sources=_sources(s), summary=summary, cases=cases,
                  numbers={"stencils": len(cases), "tensor_cores_faster": slower, "unequal_depth_excluded": unequal},
                  text="Stencils: Figure 8 shows that equivalently optimized tensor core implementations generally "
                       "underperform their CUDA core counterparts.",
                  test="geometric mean over stencils of t_TC/t_CC above 1, CUDA-core temporal blocking (EBISU role) "
                       "against tensor cores (ConvStencil role) at equal temporal depth; the table gives each stencil")


def missing_twins(rows: pd.DataFrame) -> list[str]:
    """'<kernel> <impl>' of each tensor-core implementation in `rows` that has no <impl>_twin rows."""
    impls = set(rows["impl"].astype(str))
    tc = rows[rows["unit"] == "tensor_core"].drop_duplicates(["kernel", "impl"])
    return [f"{k} {i}" for k, i in zip(tc["kernel"], tc["impl"]) if f"{i}{TWIN}" not in impls]


def slurm_jobs(rows: pd.DataFrame) -> list[int]:
    """The SLURM job ids that measured `rows`, ascending ([] where none ran under SLURM, or the rows
    predate the column)."""
    ids = pd.to_numeric(rows.get("slurm_job", pd.Series(dtype=float)), errors="coerce").dropna()
    return sorted({int(i) for i in ids})


def _in_precision(rows: pd.DataFrame, gpu: dict, stencils, margin: float, dram_fraction: float,
                  counters: pd.DataFrame | None, precision: str) -> list[dict]:
    """C1-C4 on the rows of one precision, each record naming it: NO DATA (and why) without rows,
    N/A where the device has no tensor cores in it."""
    p, twins = pairs(rows, gpu, stencils), pairs(rows, gpu, stencils, twins=True)
    claims = [speedup_bound(twins, gpu, margin, dram_fraction, missing_twins(rows), counters, precision),
              scale_l2(p, gpu, margin), spmv_l2(p, gpu, margin), stencils_generally(p, margin)]
    note = peaks.at(gpu, precision).note
    for c in claims:
        c["precision"] = precision
        if rows.empty:
            c["verdict"] = c["on_these_timings"] = NO_DATA
            c["summary"] = f"no {precision} rows in this run's raw results" + (f" ({note})" if note else "")
        elif not peaks.at(gpu, precision).has_tensor_cores:
            c["verdict"] = NOT_APPLICABLE
    return claims


def check(rows: pd.DataFrame, gpu: dict, stencils, margin: float, dram_fraction: float,
          counters: pd.DataFrame | None = None, precisions=PRECISIONS) -> dict:
    """Every claim in every precision of `precisions` on the raw `rows` (measure.ROW_COLUMNS,
    optionally `rep`) of device `gpu`, claim by claim (C1 fp64, C1 fp32, ..., C4 fp16); `stencils`
    is config["stencil"]["kernels"], `margin` config["claims"]["margin"] and `dram_fraction`
    config["claims"]["dram_fraction"]; `counters` the run's ncu rows, if measured."""
    rows = _with_rep(rows)
    per = [_in_precision(rows[rows["precision"] == p], gpu, stencils, margin, dram_fraction, counters, p)
           for p in precisions]
    claims = [c for part in zip(*per) for c in part]
    matrices = sorted(set(rows.loc[rows["kernel"] == "spmv", "source"].dropna()))
    return {"paper": PAPER, "device_spec": gpu["name"],
            "tensor_cores": any(peaks.at(gpu, p).has_tensor_cores for p in precisions),
            "no_tensor_cores": [p for p in precisions if not peaks.at(gpu, p).has_tensor_cores],
            "precisions": list(precisions),
            "measured": {"device": sorted(set(rows["device"].dropna().astype(str))),
                         "host": sorted(set(rows["host"].dropna().astype(str))),
                         "slurm_jobs": slurm_jobs(rows),
                         "date_first": str(rows["date"].min()), "date_last": str(rows["date"].max()),
                         **{col: sorted(set(rows.get(col, pd.Series(dtype=str)).dropna().astype(str)))
                            for col in ("membound", "commit")},
                         "precisions": sorted(set(rows["precision"])),
                         "repetitions": int(rows["rep"].nunique()) if len(rows) else 0},
            "statistics": {"interval": f"{LEVEL_95:g}% percentile bootstrap over problems and repetitions",
                           "resamples": RESAMPLES, "seed": SEED, "margin": margin, "dram_fraction": dram_fraction},
            "matrix_source": "/".join(matrices) or "none", "surrogate": "surrogate" in matrices,
            "claims": claims}


# ------------------------------------------------------------------------------------ output


def _plain(obj):
    """`obj` with numpy scalars as Python ones and NaN/inf as None (strict JSON)."""
    if isinstance(obj, pd.DataFrame):
        return [_plain(r) for r in obj.to_dict("records")]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def to_json(result: dict) -> str:
    """`result` (from check) as strict JSON."""
    return json.dumps(_plain(result), indent=2, allow_nan=False) + "\n"


def _banners(result: dict) -> str:
    out = []
    if result["surrogate"]:
        out.append(f"> {SURROGATE} C3 and any SpMV pairs of C1 say nothing about the paper's matrices.")
    if missing := result.get("no_tensor_cores", []):
        out.append(f"> **NO TENSOR CORES in {', '.join(missing)}.** {result['device_spec']} has no matrix unit in "
                   f"{'that precision' if len(missing) == 1 else 'these precisions'}: the tensor-core side is a numpy "
                   "emulation of the MMA tiles, so those verdicts are N/A (not a test of the paper). 'on these "
                   "timings' says what the same statistics give on the emulated ones.")
    return "\n>\n".join(out)


def markdown(result: dict) -> str:
    """The claims as Markdown: banners, a summary table (one row per claim and precision), then one
    section per claim and precision with its cases (a line where the precision has no rows)."""
    m, st = result["measured"], result["statistics"]
    head = (f"# Claims of paper 000 checked on {result['device_spec']}\n\n"
            f"Measured on {', '.join(m['device'])} ({', '.join(m['host'])}), {m['date_first']} to "
            f"{m['date_last']}, {m['repetitions']} repetition(s), membound {', '.join(m.get('membound', [])) or 'unrecorded'} at "
            f"commit {', '.join(m.get('commit', [])) or 'unrecorded'}; SpMV matrices: {result['matrix_source']}. "
            "Ratio = t_TC/t_CC and speedup = t_CC/t_TC of median times (ratio > 1: CUDA cores faster). Estimates are "
            f"geometric means with a {st['interval']} ({st['resamples']} resamples, seed {st['seed']}); LEVEL: the "
            f"interval lies within +-{100 * st['margin']:g}% of the reference (claims.margin). Each claim is checked "
            "in every precision of the run on that precision's rows, peaks and element size.\n\n")
    banners = _banners(result)
    summary = pd.DataFrame([{"claim": c["id"], "precision": c.get("precision", "fp64"), "paper": c["where"],
                             "what": c["title"], "verdict": c["verdict"], "on these timings": c["on_these_timings"],
                             "estimate [95% CI]": interval_text(c),
                             "reference": f"{c['side']} {c['reference']:.3g}" if c["reference"] is not None
                             and math.isfinite(c["reference"]) else "undefined",
                             "numbers": c["summary"]} for c in result["claims"]])
    if not result.get("no_tensor_cores", []):
        summary = summary.drop(columns="on these timings")
    parts = [head + (banners + "\n\n" if banners else "") + summary.to_markdown(index=False) + "\n"]
    for c in result["claims"]:
        title = f"{c['id']} {c.get('precision', 'fp64')} ({c['where']}): {c['title']}"
        if not c["pairs"] and c["verdict"] == NO_DATA and len(c["cases"]) == 0:
            parts.append(f"## {title}\n\n**{c['verdict']}**: {c['summary']}.\n")
            continue
        legend = (f"> {c['text']}\n\nChecked: {c['test']}. Data: {', '.join(c['sources']) or 'none'}.\n\n"
                  f"**{c['verdict']}**: {c['summary']}.")
        parts.append(outputs.markdown(c["cases"], title, legend, level=2))
    return "\n".join(parts)


def write(result: dict, json_path, md_path) -> None:
    """Write the claims as JSON and Markdown, each atomically."""
    outputs.write_text(to_json(result), json_path)
    outputs.write_text(markdown(result), md_path)
