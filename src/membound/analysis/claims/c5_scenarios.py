"""C5 (paper 002 Sec. 4.1-4.3, eq. 13-20, Figure 10): its scenario prediction holds for each measured
stencil configuration: the side of 1 of the modelled speedup P_TC,actual / P_CU,actual, from the spec's
peaks and bandwidth alone (dense tensor cores, and the 2:4-sparse ones with their own peak and the S of
the 2:4 transform), against the measured speedup t_CC/t_TC of CUDA-core temporal blocking and the
tensor-core kernel at equal depth and precision, with its bootstrap interval (the verdict table of
analysis/classification.py, every depth of the fusion sweep).

The verdict is the worst of the configurations' (verdicts.worst): SUPPORTED where every prediction
held, CONTRADICTED where one did not (the interval on the other side of 1), LEVEL or INCONCLUSIVE
where the worst interval lies within the margin of 1 or straddles it; NO DATA without pairs or with
one repetition only. The estimate is the fraction of configurations whose prediction held.
"""

from __future__ import annotations

import math

import pandas as pd

from membound.analysis.claims.verdicts import CONTRADICTED, INCONCLUSIVE, LEVEL, NO_DATA, SUPPORTED, worst

HELD_VERDICT = {"yes": SUPPORTED, "level": LEVEL, "inconclusive": INCONCLUSIVE, "no": CONTRADICTED}
CASE_COLUMNS = ["problem", "depth", "sparsity", "scenario", "speedup_model", "prediction", "speedup", "ci_low",
                "ci_high", "reps", "held"]


def scenarios_hold(table: pd.DataFrame, margin: float, sources: list[str]) -> dict:
    """C5 on one precision's rows of the classification's verdict table (classification.verdicts),
    measured on stencil rows of `sources` (their `source` labels, e.g. synthetic)."""
    decided = table[table["held"].isin(HELD_VERDICT)] if len(table) else table
    verdict = worst(HELD_VERDICT[h] for h in decided["held"]) if len(decided) else NO_DATA
    held = int((decided["held"] == "yes").sum()) if len(decided) else 0
    frac = held / len(decided) if len(decided) else math.nan
    failed = [f"{r.problem} t={r.depth} {r.sparsity}" for r in decided.itertuples() if r.held == "no"]
    summary = (f"the prediction held on {held} of {len(decided)} measured configurations"
               + (f"; not on {', '.join(failed)}" if failed else "") if len(decided) else
               "no configuration measured on both units in two or more repetitions")
    cases = table.reindex(columns=CASE_COLUMNS) if len(table) else pd.DataFrame(columns=CASE_COLUMNS)
    return {"id": "C5", "verdict": verdict, "on_these_timings": verdict, "estimate": frac, "ci_low": math.nan,
            "ci_high": math.nan, "n": len(decided), "problems": int(decided["problem"].nunique()) if len(decided) else 0,
            "margin": margin, "reference": 1.0, "side": "held",
            "estimate_text": f"held on {held}/{len(decided)}" if len(decided) else "no data",
            "reference_text": "every prediction holds", "pairs": sorted(set(table.get("problem", []))),
            "title": "Paper 002's scenario prediction (tensor cores faster, slower or equal) holds for each measured "
                     "configuration", "where": "paper 002 Sec. 4.1-4.3, eq. 13-20, Figure 10", "sources": sources,
            "summary": summary, "cases": cases, "numbers": {"configurations": len(decided), "held": held,
                                                              "not_held": failed},
            "text": "Paper 002: the four scenarios of eq. 14-19 (and eq. 20 for sparse tensor cores) predict whether "
                    "tensor cores accelerate a stencil from its intensity and the hardware's peaks.",
            "test": "per configuration (stencil, depth, dense or 2:4 tensor cores) the side of 1 of eq. 13's "
                    "modelled speedup from the spec, against the bootstrap 95% interval of t_CC/t_TC with the "
                    "claims' margin (classification.verdicts); the claim takes the worst configuration's verdict"}
