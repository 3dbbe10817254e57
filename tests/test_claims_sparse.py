"""C4's sparse arm (C4s) and C5 (paper 002's scenario prediction per measured configuration, under
both readings) on synthetic rows: each verdict can come out either way, fp64 has no sparse tensor
cores, the noise band and the model's uncertainty come from the measurements."""

import math

import numpy as np
import pandas as pd
import pytest

from membound.analysis import claims, classification
from membound.analysis.claims import c5_scenarios
from membound.run import config, measure

H100 = config.load_gpu("h100")
STENCILS = {"2d49pt": {"shape": "box", "dims": 2, "radius": 3, "depth": 3},    # fp32 2:4: scenario 3, TC faster
            "2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3},    # fp32 2:4: scenario 1, equal
            **{f"2d{4 * r + 1}pt": {"shape": "star", "dims": 2, "radius": r, "depth": 3} for r in (2, 3)},
            "2d25pt": {"shape": "box", "dims": 2, "radius": 2, "depth": 3}}
MARGIN = 0.02


def rows(speedups: dict, precision="fp32", reps=3, sparse=True):
    """cc_tb and the tensor-core row (tc_sparse, or dense tc) per stencil and repetition at the role
    depth, t_CC / t_TC = speedups[stencil] (times a tiny repetition jitter)."""
    out = []
    for name, s in speedups.items():
        depth = STENCILS[name]["depth"]
        kw = {"kernel": "stencil", "problem": name, "n": 10**8, "domain": "10000x10000", "steps": 12, "depth": depth,
              "work_items": 12 * 10**8, "source": "synthetic", "device": "GPU X", "host": "n1",
              "date": "2026-11-24T00:00:00Z", "precision": precision}
        for r in range(reps):
            t_cc = 1.0 + 0.001 * r
            out.append({**kw, "impl": "cc_tb", "unit": "cuda_core", "role": "EBISU", "t_median_s": t_cc, "rep": r,
                        "sparsity": "dense"})
            tc = ({"impl": "tc_sparse", "role": "SPIDER/SparStencil", "sparsity": "2:4"} if sparse else
                  {"impl": "tc", "role": "ConvStencil", "sparsity": "dense"})
            out.append({**kw, **tc, "unit": "tensor_core", "t_median_s": t_cc / s * (1 + 0.0005 * r), "rep": r})
    return pd.DataFrame(out).reindex(columns=measure.ROW_COLUMNS)


def check(frame, precision="fp32"):
    result = claims.check(frame, H100, STENCILS, MARGIN, 0.6)
    return {c["id"]: c for c in result["claims"] if c["precision"] == precision}


@pytest.mark.parametrize("speedup, verdict", [(0.7, "SUPPORTED"), (1.4, "CONTRADICTED"), (1.0, "LEVEL")])
def test_c4s_is_t_tc_over_t_cc_of_the_sparse_role(speedup, verdict):
    c = check(rows(dict.fromkeys(STENCILS, speedup)))
    assert c["C4s"]["verdict"] == verdict and c["C4s"]["problems"] == 5
    assert c["C4s"]["estimate"] == pytest.approx(1 / speedup, rel=1e-2)
    assert c["C4"]["verdict"] == "NO DATA"                  # no dense tensor-core rows: C4 is the dense arm only
    assert "not a claim of paper 000" in c["C4s"]["title"] and "papers 002" in c["C4s"]["where"]


def test_c4s_in_fp64_is_not_applicable():
    c = check(rows({"2d49pt": 0.7}, precision="fp64", sparse=False), "fp64")
    assert c["C4s"]["verdict"] == "N/A" and "no 2:4-sparse tensor cores in fp64" in c["C4s"]["summary"]


def test_c5_holds_where_the_measured_side_matches_the_spec_prediction():
    table = classification.verdicts(rows({"2d49pt": 1.5, "2d5pt": 1.0}), H100, STENCILS, MARGIN)
    pred = table.set_index("problem")["prediction"]
    assert pred["2d49pt"] == classification.TC_FASTER and pred["2d5pt"] == classification.EQUAL
    assert (table["sparsity"] == "2:4").all() and set(table["held"]) == {"yes"}
    c = check(rows({"2d49pt": 1.5, "2d5pt": 1.0}))["C5"]
    assert c["verdict"] == "SUPPORTED" and c["estimate"] == 1.0 and c["estimate_text"] == "held on 2/2"
    assert c["sources"] == ["synthetic"]           # claims.md's "Data:" line names what the stencil rows are


@pytest.mark.parametrize("speedups, verdict, failed", [
    ({"2d49pt": 0.6, "2d5pt": 1.0}, "CONTRADICTED", ["2d49pt t=3 2:4"]),   # predicted faster, measured slower
    ({"2d49pt": 1.5, "2d5pt": 0.5}, "CONTRADICTED", ["2d5pt t=3 2:4"]),    # predicted equal, measured slower
    ({"2d49pt": 1.0, "2d5pt": 1.0}, "LEVEL", []),                          # predicted faster, within the noise band
    ({"2d49pt": 1.01, "2d5pt": 1.0}, "SUPPORTED", []),                     # 1% faster, 0.05% noise: faster
])
def test_c5_takes_the_worst_configuration(speedups, verdict, failed):
    c = check(rows(speedups))["C5"]
    assert c["verdict"] == verdict and c["numbers"]["not_held"] == failed


def test_c5_without_repetitions_is_no_data():
    assert check(rows({"2d49pt": 1.5}, reps=1))["C5"]["verdict"] == "NO DATA"


def test_c5_reads_a_scenario_1_slowdown_as_a_miss_of_the_tie_and_as_held_by_the_summary():
    """2d5pt (fp32 2:4) is scenario 1: eq. 14 predicts a tie, paper 002's summary 'no benefit or even
    degrade'. Tensor cores 30% slower miss the first reading and hold the second; each verdict names its reading."""
    c = check(rows({"2d5pt": 0.7}))
    strict, summary = c["C5"], c["C5 summary"]
    assert strict["verdict"] == "CONTRADICTED" and strict["numbers"]["not_held"] == ["2d5pt t=3 2:4"]
    assert summary["verdict"] == "SUPPORTED" and summary["estimate_text"] == "held on 1/1"
    assert "tie within run-to-run noise" in strict["reading"] and "not faster in scenarios 1-2" in summary["reading"]
    assert strict["title"] != summary["title"] and strict["numbers"]["held_by_scenario"] == {"scenario 1": "0/1"}
    assert check(rows({"2d5pt": 1.3}))["C5 summary"]["verdict"] == "CONTRADICTED"      # tensor cores faster: a miss


def test_c5_noise_band_is_twice_the_measured_run_to_run_noise():
    pairs = pd.DataFrame({"problem": ["a"] * 3 + ["b"] * 3, "depth": 1, "sparsity": "dense",
                          "speedup": np.exp([0.0, 0.01, -0.01, 0.5, 0.51, 0.49])})
    band, noise = c5_scenarios.noise_band(pairs)
    assert noise == pytest.approx(0.01) and band == pytest.approx(0.02)
    assert math.isnan(c5_scenarios.noise_band(pairs.iloc[[0, 3]])[0])        # one repetition each: no noise measured


def test_c5_predicts_nothing_within_the_models_uncertainty():
    assert c5_scenarios.predict(2, 0.95, 0.1, "C5") == c5_scenarios.NONE
    assert c5_scenarios.predict(2, 0.8, 0.1, "C5") == c5_scenarios.CC_FASTER
    assert c5_scenarios.predict(4, 1.2, 0.1, "C5") == c5_scenarios.TC_FASTER
    assert c5_scenarios.predict(1, 1.0, 0.1, "C5") == c5_scenarios.EQUAL
    assert c5_scenarios.predict(2, 0.95, 0.1, "C5 summary") == c5_scenarios.NOT_FASTER
    assert c5_scenarios.held(c5_scenarios.NONE, 0.5, 0.4, 0.6, 0.02) == "n/a"
    assert c5_scenarios.held(c5_scenarios.EQUAL, 1.01, 0.99, 1.03, 0.02) == "yes"
    assert c5_scenarios.held(c5_scenarios.EQUAL, 1.05, 0.98, 1.12, 0.02) == "inconclusive"
    assert c5_scenarios.held(c5_scenarios.CC_FASTER, 1.0, 0.99, 1.01, 0.02) == "level"


def test_c5_models_uncertainty_is_the_gap_to_the_best_measured_bandwidth():
    n = 2**28                                                      # 4 GiB of SCALE: beyond the L2
    scale = pd.DataFrame([{"kernel": "scale", "impl": impl, "unit": unit, "role": "STREAM", "problem": f"n={n}",
                           "n": n, "work_items": n, "t_median_s": 16 * n / (0.9 * 3.35e12), "rep": 0}
                          for impl, unit in (("cc", "cuda_core"), ("tc", "tensor_core"))]).reindex(columns=measure.ROW_COLUMNS)
    p = claims.pairs.pairs(scale, H100, STENCILS)
    assert c5_scenarios.model_uncertainty(p, H100) == pytest.approx(0.1)
    assert c5_scenarios.model_uncertainty(p.iloc[:0], H100) == 0.0
