"""C5 (paper 002 Sec. 4.1-4.3, eq. 13-20, Figure 10): its scenario prediction holds for each measured
stencil configuration, under two readings of the paper, each its own record naming its reading:

- "C5" (eq. 13-19 as stated): scenario 1 predicts a tie (eq. 14), held where the measured speedup
  t_CC/t_TC lies within 1 +- the noise band, missed where its 95% interval lies on one side of 1
  outside it; scenarios 2-4 predict the side of 1 of eq. 13's modelled speedup, held where the
  interval lies on that side and the speedup outside the band ("level" within it);
- "C5 summary" (paper 002's summary of Sec. 4.1: in scenarios 1-2, memory-bound on CUDA cores,
  "tensor cores yield no benefit or even degrade"): scenarios 1-2 predict tensor cores not faster,
  missed only where the speedup lies above the band and its interval above 1; scenarios 3-4 as in C5.

The noise band is twice the measured run-to-run noise: the root mean square over the precision's
configurations of the standard deviation of log(t_CC/t_TC) over repetitions. A side predicted by a
modelled speedup within the model's own uncertainty of 1 is "no prediction", not a miss; that
uncertainty is the gap between the spec's bandwidth B, which the model takes, and the best DRAM
bandwidth measured (SCALE on CUDA cores beyond the L2, median over repetitions): 1 - best/B.

A reading's verdict is the worst of its configurations' (verdicts.worst; no predictions aside):
held (SUPPORTED), within the band of 1 for a predicted side (LEVEL), inconclusive (the interval
straddles 1, the speedup outside the band), missed (CONTRADICTED). The estimate is the fraction of the predictions that held; NO DATA without pairs or
with one repetition only.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from membound.analysis.claims.verdicts import CONTRADICTED, INCONCLUSIVE, LEVEL, NO_DATA, SUPPORTED, worst

HELD_VERDICT = {"yes": SUPPORTED, "level": LEVEL, "inconclusive": INCONCLUSIVE, "no": CONTRADICTED}
TC_FASTER, CC_FASTER, EQUAL, NOT_FASTER = "tensor cores faster", "CUDA cores faster", "equal", "tensor cores not faster"
NONE = "no prediction"
READINGS = {
    "C5": ("eq. 13-19 as stated: scenario 1 a tie within run-to-run noise (eq. 14), scenarios 2-4 the side of 1 "
           "of eq. 13's modelled speedup"),
    "C5 summary": ("paper 002's summary: tensor cores not faster in scenarios 1-2 (memory-bound on CUDA cores), "
                   "scenarios 3-4 the side of 1 of eq. 13's modelled speedup"),
}
CASE_COLUMNS = ["problem", "depth", "sparsity", "scenario", "speedup_model", "speedup", "ci_low", "ci_high", "reps",
                "prediction", "held"]


def noise_band(pairs: pd.DataFrame) -> tuple[float, float]:
    """(band, noise): the run-to-run noise of the classification's pairs (classification.pairs, one
    precision), the root mean square over configurations with two or more repetitions of the standard
    deviation of log(t_CC/t_TC), and the band, twice that; NaNs without such configurations."""
    keys = ["problem", "depth", "sparsity"]
    sd = pairs.groupby(keys)["speedup"].agg(lambda s: np.log(s).std(ddof=1)).dropna() if len(pairs) else pd.Series()
    noise = float(np.sqrt((sd**2).mean())) if len(sd) else math.nan
    return 2 * noise, noise


def model_uncertainty(p: pd.DataFrame, gpu: dict) -> float:
    """1 - the best DRAM bandwidth of CUDA-core SCALE beyond the L2 (algorithm pairs `p`, median over
    repetitions) over the spec's B: how far the model's bandwidth is from the measured one (0 where
    `p` has no such SCALE pair)."""
    s = p[(p["kernel"] == "scale") & (p["working_set_MB"] > gpu["l2_MB"])]
    best = s.groupby("problem")["cc_dram_TBs"].median().max() if len(s) else math.nan
    return max(0.0, 1 - best / gpu["memory_bandwidth_TBs"]) if math.isfinite(best) else 0.0


def predict(scenario: int, speedup_model: float, uncertainty: float, reading: str) -> str:
    """A configuration's prediction under `reading` (a key of READINGS)."""
    if scenario in (1, 2) and reading == "C5 summary":
        return NOT_FASTER
    if scenario == 1:
        return EQUAL
    if abs(speedup_model - 1) <= uncertainty:
        return NONE
    return TC_FASTER if speedup_model > 1 else CC_FASTER


def side_of_1(speedup: float, ci_low: float, ci_high: float, band: float) -> str:
    """Where a measured speedup lies: 'level' where the estimate is within 1 +- `band` (a difference
    run-to-run noise makes), else 'above' or 'below' where its whole interval lies on that side of 1,
    else 'inconclusive'."""
    if abs(speedup - 1) <= band:
        return "level"
    return "above" if ci_low > 1 else "below" if ci_high < 1 else "inconclusive"


HELD = {EQUAL: {"level": "yes", "above": "no", "below": "no"},
        NOT_FASTER: {"level": "yes", "below": "yes", "above": "no"},
        TC_FASTER: {"above": "yes", "below": "no", "level": "level"},
        CC_FASTER: {"below": "yes", "above": "no", "level": "level"}}


def held(prediction: str, speedup: float, ci_low: float, ci_high: float, band: float) -> str:
    """Whether a prediction held on the measured speedup t_CC/t_TC and its interval (`side_of_1`):
    yes, no, level (a side predicted, the speedup within the band), inconclusive; n/a without an
    interval or a prediction."""
    if prediction == NONE or not all(math.isfinite(v) for v in (speedup, ci_low, ci_high, band)):
        return "n/a"
    return HELD[prediction].get(side_of_1(speedup, ci_low, ci_high, band), "inconclusive")


def _reading(cid: str, table: pd.DataFrame, band: float, noise: float, uncertainty: float, margin: float,
             sources: list[str]) -> dict:
    measured = table[table["verdict"].isin(HELD_VERDICT.values())] if len(table) else table.iloc[:0]
    cases = measured.reindex(columns=CASE_COLUMNS).assign(
        prediction=[predict(s, m, uncertainty, cid) for s, m in zip(measured["scenario"], measured["speedup_model"])])
    cases["held"] = [held(*case, band) for case in zip(cases["prediction"], cases["speedup"], cases["ci_low"],
                                                       cases["ci_high"])]
    decided = cases[cases["held"].isin(HELD_VERDICT)]
    count = int((decided["held"] == "yes").sum())
    label = lambda r: f"{r.problem} t={r.depth} {r.sparsity}"           # noqa: E731
    failed, unpredicted = [label(r) for r in decided.itertuples() if r.held == "no"], int((cases["prediction"] == NONE).sum())
    text = f"held on {count}/{len(decided)}" + (f", {unpredicted} no prediction" if unpredicted else "")
    summary = (f"{text} (noise band +-{100 * band:.2g}%, model uncertainty {100 * uncertainty:.2g}%)"
               + (f"; not on {', '.join(failed)}" if failed else "") if len(decided) else
               "no configuration measured on both units in two or more repetitions")
    by_scenario = {f"scenario {s}": f"{int((g['held'] == 'yes').sum())}/{int(g['held'].isin(HELD_VERDICT).sum())}"
                   for s, g in cases.groupby("scenario")}
    verdict = worst(HELD_VERDICT[h] for h in decided["held"]) if len(decided) else NO_DATA
    return {"id": cid, "verdict": verdict, "on_these_timings": verdict,
            "estimate": count / len(decided) if len(decided) else math.nan, "ci_low": math.nan, "ci_high": math.nan,
            "n": len(decided), "problems": int(decided["problem"].nunique()), "margin": margin, "reference": 1.0,
            "side": "held", "estimate_text": text if len(decided) else "no data",
            "reference_text": "every prediction holds", "pairs": sorted(set(table.get("problem", []))),
            "reading": READINGS[cid],
            "title": f"Paper 002's scenario predictions hold, read as {READINGS[cid].split(':')[0]}",
            "where": "paper 002 Sec. 4.1-4.3, eq. 13-20, Figure 10" + (", summary of Sec. 4.1" if cid != "C5" else ""),
            "sources": sources, "summary": summary, "cases": cases,
            "numbers": {"configurations": len(decided), "held": count, "not_held": failed, "no_prediction": unpredicted,
                        "held_by_scenario": by_scenario, "noise_band": band, "run_to_run_noise": noise,
                        "model_uncertainty": uncertainty},
            "text": "Paper 002: the four scenarios of eq. 14-19 (and eq. 20 for sparse tensor cores) predict whether "
                    "tensor cores accelerate a stencil from its intensity and the hardware's peaks; its summary: "
                    "\"when the stencil computation is memory-bound on CUDA Cores, utilizing Tensor Cores yields no "
                    "benefit or even degrades performance\".",
            "test": f"per configuration (stencil, depth, dense or 2:4 tensor cores) the prediction read as "
                    f"{READINGS[cid]}, against the 95% interval of t_CC/t_TC over repetitions with the noise band; "
                    "a predicted side within the model's uncertainty of 1 is no prediction; the claim takes the "
                    "worst configuration's verdict"}


def scenarios_hold(table: pd.DataFrame, pairs: pd.DataFrame, p: pd.DataFrame, gpu: dict, margin: float,
                   sources: list[str]) -> list[dict]:
    """C5 under both readings on one precision's rows of the classification's verdict table
    (classification.verdicts), its pairs (classification.pairs: the noise band) and the claims'
    algorithm pairs `p` (SCALE: the model's uncertainty), measured on stencil rows of `sources`."""
    band, noise = noise_band(pairs)
    uncertainty = model_uncertainty(p, gpu)
    return [_reading(cid, table, band, noise, uncertainty, margin, sources) for cid in READINGS]
