"""C4 (paper 000 Sec. 5.4, Figure 8): tensor-core stencils generally slower than CUDA-core temporal
blocking at equal depth. C4s is no claim of paper 000: the same statistic with the 2:4-sparse tensor
cores (the SPIDER/SparStencil role, mma.sp, fp32 and fp16 only) against CUDA-core temporal blocking,
where papers 002 (Sec. 4.3, eq. 20) and 004 (SparStencil) expect sparse tensor cores can win
(scenario 4, inside the sweet spot)."""

from __future__ import annotations

import pandas as pd

from membound.analysis.claims.verdicts import MIN_PROBLEMS, claim, estimate, interval_text, per_problem, sources
from membound.analysis.depths import span


SPARSE_ROLE = "SPIDER/SparStencil"      # the stencils' 2:4-sparse tensor-core role (kernels/stencil.py)


def by_depth(at_depth: dict, margin: float) -> dict:
    """C4's statistic at each depth of the sweep that both kernels ran (`at_depth`: depth -> its
    pairs, with `ratio` t_TC/t_CC), as {depth: estimate with verdict and stencils}."""
    return {int(depth): {**estimate(p, "ratio", 1.0, margin, "above"), "stencils": int(p["problem"].nunique())}
            for depth, p in sorted(at_depth.items()) if len(p)}


def depth_text(depths: dict) -> str:
    """The verdicts at each depth in a few words: 'SUPPORTED at every depth (1-4)', or, where they
    differ, 'DEPTH-DEPENDENT: SUPPORTED at 1-2, INCONCLUSIVE at 3-4'; depths with fewer than
    MIN_PROBLEMS stencils (no interval) apart: 'too few stencils at 5-8'."""
    verdicts, few = {}, [d for d, e in depths.items() if e["stencils"] < MIN_PROBLEMS]
    for depth, e in depths.items():
        if depth not in few:
            verdicts.setdefault(e["verdict"], []).append(depth)
    text = (f"{next(iter(verdicts))} at every depth ({span(depths.keys() - set(few))})" if len(verdicts) == 1 else
            "DEPTH-DEPENDENT: " + ", ".join(f"{v} at {span(d)}" for v, d in verdicts.items()) if verdicts else "")
    return "; ".join(t for t in (text, f"too few stencils at {span(few)}" if few else "") if t)


def stencils_generally(p: pd.DataFrame, margin: float, sparse: bool = False, at_depth: dict | None = None) -> dict:
    """C4: tensor-core stencils (ConvStencil role) generally slower than CUDA-core temporal blocking
    (EBISU role) at equal depth: the median of t_TC/t_CC over stencils above 1, at Table 3's depths
    (`p`) and at each depth of the sweep (`at_depth`: depth -> its pairs; `depth_dependent` where
    their verdicts differ). sparse: C4s, the pairs of the sparse role (pairs.pairs(...,
    tc_role=SPARSE_ROLE)) instead."""
    s = p[(p["kernel"] == "stencil") & p["equal_depth"]]
    est = estimate(s, "ratio", 1.0, margin, "above")
    depths = by_depth(at_depth or {}, margin)
    cases = per_problem(s, "ratio", 1.0, margin, "above").rename(columns={"estimate": "ratio", "n": "reps"})
    info = s.drop_duplicates("problem").set_index("problem")
    cases = cases.assign(depth=cases["problem"].map(info["depth_cc"]), I=cases["problem"].map(info["I"]),
                         bound=cases["problem"].map(info["bound"]))[
        ["problem", "depth", "I", "bound", "ratio", "ci_low", "ci_high", "reps", "verdict"]]
    unequal = sorted(set(p.loc[(p["kernel"] == "stencil") & ~p["equal_depth"], "problem"]))
    slower = list(cases.loc[cases["ratio"] < 1 - margin, "problem"])
    summary = (f"median t_TC/t_CC {interval_text(est)} over {len(cases)} stencils at Table 3's depths; tensor cores "
               f"faster by more than the margin on {', '.join(slower) or 'none'}"
               + (f"; {depth_text(depths)}: " + ", ".join(f"depth {d} {e['verdict']} {interval_text(e)}"
                                                          for d, e in depths.items()) if depths else ""))
    numbers = {"stencils": len(cases), "tensor_cores_faster": slower, "unequal_depth_excluded": unequal,
               "by_depth": depths, "depth_dependent": depth_text(depths).startswith("DEPTH-DEPENDENT")}
    if sparse:
        return claim("C4s", est, 1.0, "above", margin, s,
                     title="2:4-sparse tensor-core stencils against CUDA-core temporal blocking at equal depth "
                           "(not a claim of paper 000)",
                     where="C4's statistic on sparse tensor cores; papers 002 Sec. 4.3 and 004 expect them to win",
                     sources=sources(s), summary=summary, cases=cases,
                     numbers=numbers,
                     text="No claim of paper 000: C4's test (Figure 8, tensor cores generally underperform) on the 2:4-"
                          "sparse tensor cores, which papers 002 (Sec. 4.3, eq. 20: they widen the sweet spot) and 004 "
                          "(SparStencil) expect can beat CUDA cores in scenario 4. SUPPORTED here means the sparse "
                          "tensor cores are slower than temporal blocking, against those papers' expectation.",
                     test="median over stencils of t_TC/t_CC above 1, CUDA-core temporal blocking (EBISU role) "
                          "against 2:4-sparse tensor cores (SPIDER/SparStencil role, mma.sp) at equal temporal depth "
                          "and precision, at Table 3's depths and again at each depth of the sweep both ran; the "
                          "table gives each stencil at Table 3's depth")
    return claim("C4", est, 1.0, "above", margin, s,
                  title="Tensor-core stencils generally underperform CUDA-core temporal blocking at equal depth",
                  where="Sec. 5.4, Figure 8", sources=sources(s), summary=summary, cases=cases,
                  numbers=numbers,
                  text="Stencils: Figure 8 shows that equivalently optimized tensor core implementations generally "
                       "underperform their CUDA core counterparts.",
                  test="median over stencils of t_TC/t_CC above 1, CUDA-core temporal blocking (EBISU role) "
                       "against tensor cores (ConvStencil role) at equal temporal depth, at Table 3's depths and again "
                       "at each depth of the sweep both ran; the table gives each stencil at Table 3's depth")
