"""C1 (paper 000 Sec. 4.2-4.3, eq. 23): the tensor-core speedup over the CUDA-core twin stays below
2 - 2/(1 + alpha) on the twin pairs that are DRAM-bound in practice; the others are listed with
the reason."""

from __future__ import annotations

import math

import pandas as pd

from membound.analysis.claims.verdicts import (CONTRADICTED, NO_DATA, claim, estimate, interval_text, per_problem,
                                               sources)
from membound.model import equations, peaks
from membound.run import measure

TWIN_DRAM = 0.02                     # a twin's DRAM bytes within 2% of its sibling's (issue 15's criterion)


def twin_counters(p: pd.DataFrame, counters: pd.DataFrame | None) -> pd.DataFrame:
    """Per twin pair, from the counter rows (ncu.COLUMNS, main kernels) of the same problem: the
    twin's DRAM bytes over its sibling's and the twin's achieved I (FLOPs / DRAM bytes); NaN where
    not measured."""
    out = pd.DataFrame({"twin_dram_ratio": math.nan, "I_achieved": math.nan}, index=p.index)
    if counters is None or counters.empty:
        return out
    main = counters[counters["part"] == "main"].drop_duplicates("tag").set_index("tag")
    tag = lambda impl, depth: [measure.launch_tag(*case) for case in
                               zip(p["kernel"], impl, p["problem"], depth, p["precision"])]
    twin, sibling = main.reindex(tag(p["cc_impl"], p["depth_cc"])), main.reindex(tag(p["tc_impl"], p["depth_tc"]))
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
    est = estimate(used, "speedup", bound, margin, "below")
    each = per_problem(used, "speedup", bound, margin, "below")
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
    speed = per_problem(p, "speedup", bound, margin, "below").drop(columns=["problems"])
    cases = cases.merge(speed.rename(columns={"estimate": "speedup", "n": "reps"}), on=["kernel", "problem"])
    cases.loc[cases["excluded"] != "", "verdict"] = ""
    numbers = {"alpha": alpha, "eq23_bound": bound, "balance_cc": balance, "dram_fraction": dram_fraction,
               "twin_pairs": int(len(cases)), "deciding_pairs": int((cases["excluded"] == "").sum()),
               "max_speedup": float(each["estimate"].max()) if len(each) else math.nan,
               "exceeding": list(each.loc[each["verdict"] == CONTRADICTED, "problem"]),
               "excluded": {f"{k} {q}": why for k, q, why in zip(cases["kernel"], cases["problem"], cases["excluded"]) if why},
               "missing_twins": missing, "twin_dram_tolerance": TWIN_DRAM,
               "above_eq22_beyond_margin": _above_eq22(cases, margin),
               "twin_traffic_measured": int(cases["twin_dram_ratio"].notna().sum()),
               "deciding_kernels": sorted(set(used["kernel"])),
               "undecided_kernels": sorted(set(cases["kernel"]) - set(used["kernel"]))}
    summary = (f"median speedup over the CUDA-core twin {interval_text(est)} over {numbers['deciding_pairs']} "
               f"DRAM-bound twin pairs of {', '.join(numbers['deciding_kernels'])} (max {numbers['max_speedup']:.3g})"
               if len(used) else "no twin pair is DRAM-bound beyond the L2")
    if numbers["undecided_kernels"]:
        summary += f"; no {', '.join(numbers['undecided_kernels'])} pair decides it"
    summary += (f"; eq. 23 bound {bound:.3f} (alpha = {alpha:.3g})" if tensor else f"; bound undefined: {peak.note}")
    summary += f"; {len(cases) - numbers['deciding_pairs']} twin pairs excluded (reasons listed)"
    if missing:
        summary += f"; no twin for {', '.join(missing)}"
    record = claim("C1", est, bound, "below", margin, used,
                    title="The tensor-core speedup over the CUDA-core twin stays below eq. 23's bound",
                    where="Sec. 4.2-4.3, eq. 23", sources=sources(p), summary=summary, numbers=numbers, cases=cases,
                    text="Tensor Core Upper Bound: For memory-bound kernel, we have T_cmp -> T_mem: "
                         "Speedup < 1 + (alpha - 1)/(1 + alpha) = 2 - 2/(1 + alpha). Example: FP64 Nvidia GPUs "
                         "(with alpha = 2): Speedup < 1.33. [...] performance differences beyond that would require "
                         "memory access optimizations.",
                    test="median speedup t_twin/t_TC of the tensor-core kernels over their CUDA-core twins (the same "
                         "data layout, memory accesses and launch shape, FMAs for MMAs) below 2 - 2/(1 + alpha), "
                         f"alpha = P_TC/P_CC of the spec, on the pairs with a working set larger than the L2 whose twin reaches at least "
                         f"{100 * dram_fraction:g}% of the spec's DRAM bandwidth (analytical Q / time; "
                         f"claims.dram_fraction) and, where counters were measured, moves its sibling's DRAM bytes "
                         f"to within {100 * TWIN_DRAM:g}%; any such pair's interval beyond the bound contradicts it")
    if not tensor:
        record["on_these_timings"] = NO_DATA
    return record
