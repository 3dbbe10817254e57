"""C4 (paper 000 Sec. 5.4, Figure 8): tensor-core stencils generally slower than CUDA-core temporal
blocking at equal depth. C4s is no claim of paper 000: the same statistic with the 2:4-sparse tensor
cores (the SPIDER/SparStencil role, mma.sp, fp32 and fp16 only) against CUDA-core temporal blocking,
where papers 002 (Sec. 4.3, eq. 20) and 004 (SparStencil) expect sparse tensor cores can win
(scenario 4, inside the sweet spot)."""

from __future__ import annotations

import pandas as pd

from membound.analysis.claims.verdicts import claim, estimate, interval_text, per_problem, sources


SPARSE_ROLE = "SPIDER/SparStencil"      # the stencils' 2:4-sparse tensor-core role (kernels/stencil.py)


def stencils_generally(p: pd.DataFrame, margin: float, sparse: bool = False) -> dict:
    """C4: tensor-core stencils (ConvStencil role) generally slower than CUDA-core temporal blocking
    (EBISU role) at equal depth: the geometric mean of t_TC/t_CC over stencils above 1. sparse: C4s,
    the pairs `p` of the sparse role (pairs.pairs(..., tc_role=SPARSE_ROLE)) instead."""
    s = p[(p["kernel"] == "stencil") & p["equal_depth"]]
    est = estimate(s, "ratio", 1.0, margin, "above")
    cases = per_problem(s, "ratio", 1.0, margin, "above").rename(columns={"estimate": "ratio", "n": "reps"})
    info = s.drop_duplicates("problem").set_index("problem")
    cases = cases.assign(depth=cases["problem"].map(info["depth_cc"]), I=cases["problem"].map(info["I"]),
                         bound=cases["problem"].map(info["bound"]))[
        ["problem", "depth", "I", "bound", "ratio", "ci_low", "ci_high", "reps", "verdict"]]
    unequal = sorted(set(p.loc[(p["kernel"] == "stencil") & ~p["equal_depth"], "problem"]))
    slower = list(cases.loc[cases["ratio"] < 1 - margin, "problem"])
    summary = (f"t_TC/t_CC {interval_text(est)} over {len(cases)} stencils at equal depth; tensor cores faster by more than the "
               f"margin on {', '.join(slower) or 'none'}")
    if sparse:
        return claim("C4s", est, 1.0, "above", margin, s,
                     title="2:4-sparse tensor-core stencils against CUDA-core temporal blocking at equal depth "
                           "(not a claim of paper 000)",
                     where="C4's statistic on sparse tensor cores; papers 002 Sec. 4.3 and 004 expect them to win",
                     sources=sources(s), summary=summary, cases=cases,
                     numbers={"stencils": len(cases), "tensor_cores_faster": slower, "unequal_depth_excluded": unequal},
                     text="No claim of paper 000: C4's test (Figure 8, tensor cores generally underperform) on the 2:4-"
                          "sparse tensor cores, which papers 002 (Sec. 4.3, eq. 20: they widen the sweet spot) and 004 "
                          "(SparStencil) expect can beat CUDA cores in scenario 4. SUPPORTED here means the sparse "
                          "tensor cores are slower than temporal blocking, against those papers' expectation.",
                     test="geometric mean over stencils of t_TC/t_CC above 1, CUDA-core temporal blocking (EBISU role) "
                          "against 2:4-sparse tensor cores (SPIDER/SparStencil role, mma.sp) at equal temporal depth "
                          "and precision; the table gives each stencil")
    return claim("C4", est, 1.0, "above", margin, s,
                  title="Tensor-core stencils generally underperform CUDA-core temporal blocking at equal depth",
                  where="Sec. 5.4, Figure 8", sources=sources(s), summary=summary, cases=cases,
                  numbers={"stencils": len(cases), "tensor_cores_faster": slower, "unequal_depth_excluded": unequal},
                  text="Stencils: Figure 8 shows that equivalently optimized tensor core implementations generally "
                       "underperform their CUDA core counterparts.",
                  test="geometric mean over stencils of t_TC/t_CC above 1, CUDA-core temporal blocking (EBISU role) "
                       "against tensor cores (ConvStencil role) at equal temporal depth; the table gives each stencil")
