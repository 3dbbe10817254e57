"""C2 (paper 000 Sec. 5.4, Figure 6): tensor-core SCALE slower than CUDA-core SCALE, within and
beyond half the L2."""

from __future__ import annotations

import pandas as pd

from membound.analysis.claims.verdicts import claim, estimate, interval_text, per_problem, sources, worst


def scale_l2(p: pd.DataFrame, gpu: dict, margin: float) -> dict:
    """C2: tensor-core SCALE slower than CUDA-core SCALE (t_TC/t_CC > 1), within and beyond half the L2."""
    s = p[p["kernel"] == "scale"]
    half = gpu["l2_MB"] / 2
    parts = {"within_half_L2": s[s["size_MB"] <= half], "beyond_half_L2": s[s["size_MB"] > half]}
    sides = {key: {"sizes": part["problem"].nunique(), **estimate(part, "ratio", 1.0, margin, "above")}
             for key, part in parts.items()}
    est = {**estimate(s, "ratio", 1.0, margin, "above"), "verdict": worst(side["verdict"] for side in sides.values())}
    summary = "; ".join(f"{key.replace('_', ' ')}: median t_TC/t_CC {interval_text(side)} over {side['sizes']} sizes, "
                        f"{side['verdict']}" for key, side in sides.items())
    cases = per_problem(s, "ratio", 1.0, margin, "above").drop(columns=["kernel", "problems"])
    cases = cases.rename(columns={"estimate": "ratio", "n": "reps"})
    sizes = s.drop_duplicates("problem").set_index("problem")["size_MB"]
    cases.insert(1, "size_MB", cases["problem"].map(sizes))
    cases.insert(2, "within_half_L2", cases["size_MB"] <= half)
    return claim("C2", est, 1.0, "above", margin, s,
                  title="Tensor-core SCALE is slower than CUDA-core SCALE, within and beyond half the L2",
                  where="Sec. 5.4, Figure 6", sources=sources(s), summary=summary,
                  numbers={"half_L2_MB": half, **sides}, cases=cases,
                  text="SCALE: Figure 6 reveals consistent, though modest, performance degradation when using tensor "
                       "cores compared to CUDA cores. (Figure 6 reports the geometric mean for input sizes larger and "
                       "smaller than half of the L2 cache.)",
                  test=f"median over sizes of t_TC/t_CC above 1, separately for inputs (D n bytes) within half the L2 "
                       f"(<= {half:g} MB) and beyond it; the verdict is the worse of the two parts', the estimate "
                       "pools all sizes")
