"""C3 (paper 000 Sec. 5.4, Figure 7): cuSPARSE beats the tensor-core SpMV on matrices larger than
the L2; decomposed where the tensor-core kernel has a CUDA-core twin (the same format and layout,
FMAs for MMAs) into the tensor-core effect t_TC/t_twin and the format effect t_twin/t_cuSPARSE,
whose product is the paper's statistic t_TC/t_cuSPARSE."""

from __future__ import annotations

import pandas as pd

from membound.analysis.claims.verdicts import claim, estimate, interval_text, per_problem, sources
from membound.run.measure import geomean

EFFECTS = {"tensor_core_effect": ("t_TC/t_twin", "t_tc_s", "t_twin_s"),
           "format_effect": ("t_twin/t_CC", "t_twin_s", "t_cc_s")}
KEYS = ["kernel", "problem", "precision", "rep", "tc_impl"]


def with_twins(p: pd.DataFrame, twins: pd.DataFrame | None) -> pd.DataFrame:
    """The algorithm pairs `p` of the repetitions whose tensor-core impl has a twin timed in the same
    repetition (pairs.pairs(..., twins=True)), with the twin's time and each effect's ratio."""
    if twins is None or twins.empty:
        return p.iloc[:0].assign(t_twin_s=[], **{name: [] for name in EFFECTS})
    both = p.merge(twins[KEYS + ["t_cc_s"]].rename(columns={"t_cc_s": "t_twin_s"}), on=KEYS)
    return both.assign(**{name: both[num] / both[den] for name, (_, num, den) in EFFECTS.items()})


def decomposition(p: pd.DataFrame, twins: pd.DataFrame | None, margin: float) -> dict:
    """Each effect's median, interval and verdict against 1 (above: CUDA cores faster) over the
    pairs `p` that have a twin; {} where none has."""
    both = with_twins(p, twins)
    return {name: {"ratio": label, **estimate(both, name, 1.0, margin, "above")}
            for name, (label, _, _) in EFFECTS.items()} if len(both) else {}


def spmv_l2(p: pd.DataFrame, gpu: dict, margin: float, twins: pd.DataFrame | None = None) -> dict:
    """C3: cuSPARSE beats the tensor-core SpMV on matrices larger than the L2 (t_TC/t_CC > 1), with
    its decomposition on the twin pairs `twins` (pairs.pairs(..., twins=True); none: no decomposition)."""
    s = p[p["kernel"] == "spmv"]
    larger, fitting = s[s["size_MB"] > gpu["l2_MB"]], s[s["size_MB"] <= gpu["l2_MB"]]
    est = estimate(larger, "ratio", 1.0, margin, "above")
    each = per_problem(larger, "ratio", 1.0, margin, "above")
    fit = estimate(fitting, "ratio", 1.0, margin, "above")
    parts = decomposition(larger, twins, margin)
    surrogate = "surrogate" in set(s["source"])
    numbers = {"l2_MB": gpu["l2_MB"], "larger_than_L2": int(larger["problem"].nunique()),
               "cuda_core_faster_on": int((each["estimate"] > 1).sum()),
               "fitting_in_L2": int(fitting["problem"].nunique()), "fitting": fit, "surrogate": surrogate, **parts}
    summary = (("on SURROGATE matrices: " if surrogate else "")
               + f"median t_TC/t_CC {interval_text(est)} over {numbers['larger_than_L2']} matrices larger than the "
               f"{gpu['l2_MB']:g} MB L2 (cuSPARSE faster on {numbers['cuda_core_faster_on']}); "
               + "".join(f"{name.replace('_', ' ')} {part['ratio']} {interval_text(part)} ({part['verdict']}); "
                         for name, part in parts.items())
               + f"{interval_text(fit)} over the {numbers['fitting_in_L2']} that fit")
    cases = per_problem(s, "ratio", 1.0, margin, "above").rename(columns={"estimate": "ratio", "n": "reps"})
    twinned = with_twins(s, twins).groupby("problem")
    info = s.drop_duplicates("problem").set_index("problem")
    cases = cases.assign(code=cases["problem"].map(info["code"]), source=cases["problem"].map(info["source"]),
                         size_MB=cases["problem"].map(info["size_MB"]),
                         **{label: cases["problem"].map(twinned[name].agg(geomean))
                            for name, (label, _, _) in EFFECTS.items()})
    cases = cases.assign(larger_than_L2=cases["size_MB"] > gpu["l2_MB"])[
        ["code", "problem", "source", "size_MB", "larger_than_L2", "ratio", "ci_low", "ci_high", "reps", "verdict",
         *(label for label, _, _ in EFFECTS.values())]]
    return claim("C3", est, 1.0, "above", margin, larger,
                  title="cuSPARSE beats the tensor-core SpMV on matrices larger than the L2"
                        + (" (surrogate matrices)" if surrogate else ""),
                  where="Sec. 5.4, Figure 7", sources=sources(s), summary=summary, numbers=numbers, cases=cases,
                  text="SpMV: Figure 7 demonstrates that for datasets exceeding the L2 cache size, cuSPARSE "
                       "(CUDA core) outperforms DASP (tensor core) on average.",
                  test="median of t_TC/t_CC above 1 over the matrices whose Table 2 size (CSR arrays + x, y) "
                       "exceeds the L2; decomposed on the same matrices and repetitions into the tensor-core effect "
                       "t_TC/t_twin (the MMAs against FMAs in the same format) and the format effect t_twin/t_CC "
                       "(the DASP-role format and layout on CUDA cores against cuSPARSE CSR), each with its interval")

