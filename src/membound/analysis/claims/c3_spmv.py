"""C3 (paper 000 Sec. 5.4, Figure 7): cuSPARSE beats the tensor-core SpMV on matrices larger than
the L2."""

from __future__ import annotations

import pandas as pd

from membound.analysis.claims.verdicts import claim, estimate, interval_text, per_problem, sources


def spmv_l2(p: pd.DataFrame, gpu: dict, margin: float) -> dict:
    """C3: cuSPARSE beats the tensor-core SpMV on matrices larger than the L2 (t_TC/t_CC > 1)."""
    s = p[p["kernel"] == "spmv"]
    larger, fitting = s[s["size_MB"] > gpu["l2_MB"]], s[s["size_MB"] <= gpu["l2_MB"]]
    est = estimate(larger, "ratio", 1.0, margin, "above")
    each = per_problem(larger, "ratio", 1.0, margin, "above")
    fit = estimate(fitting, "ratio", 1.0, margin, "above")
    numbers = {"l2_MB": gpu["l2_MB"], "larger_than_L2": int(larger["problem"].nunique()),
               "cuda_core_faster_on": int((each["estimate"] > 1).sum()),
               "fitting_in_L2": int(fitting["problem"].nunique()), "fitting": fit}
    summary = (f"t_TC/t_CC {interval_text(est)} over {numbers['larger_than_L2']} matrices larger than the {gpu['l2_MB']:g} MB L2 "
               f"(cuSPARSE faster on {numbers['cuda_core_faster_on']}); {interval_text(fit)} over the "
               f"{numbers['fitting_in_L2']} that fit")
    cases = per_problem(s, "ratio", 1.0, margin, "above").rename(columns={"estimate": "ratio", "n": "reps"})
    info = s.drop_duplicates("problem").set_index("problem")
    cases = cases.assign(code=cases["problem"].map(info["code"]), source=cases["problem"].map(info["source"]),
                         size_MB=cases["problem"].map(info["size_MB"]))
    cases = cases.assign(larger_than_L2=cases["size_MB"] > gpu["l2_MB"])[
        ["code", "problem", "source", "size_MB", "larger_than_L2", "ratio", "ci_low", "ci_high", "reps", "verdict"]]
    return claim("C3", est, 1.0, "above", margin, larger,
                  title="cuSPARSE beats the tensor-core SpMV on matrices larger than the L2",
                  where="Sec. 5.4, Figure 7", sources=sources(s), summary=summary, numbers=numbers, cases=cases,
                  text="SpMV: Figure 7 demonstrates that for datasets exceeding the L2 cache size, cuSPARSE "
                       "(CUDA core) outperforms DASP (tensor core) on average.",
                  test="geometric mean of t_TC/t_CC above 1 over the matrices whose Table 2 size (CSR arrays + x, y) "
                       "exceeds the L2")
