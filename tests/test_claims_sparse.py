"""C4's sparse arm (C4s) and C5 (paper 002's scenario prediction per measured configuration) on
synthetic rows: each verdict can come out either way, fp64 has no sparse tensor cores."""

import pandas as pd
import pytest

from membound.analysis import claims, classification
from membound.run import config, measure

H100 = config.load_gpu("h100")
STENCILS = {"2d49pt": {"shape": "box", "dims": 2, "radius": 3, "depth": 3},    # fp32 2:4: scenario 3, TC faster
            "2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3}}    # fp32 2:4: scenario 1, equal
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
    c = check(rows({"2d49pt": speedup, "2d5pt": speedup}))
    assert c["C4s"]["verdict"] == verdict and c["C4s"]["problems"] == 2
    assert c["C4s"]["estimate"] == pytest.approx(1 / speedup, rel=1e-2)
    assert c["C4"]["verdict"] == "NO DATA"                  # no dense tensor-core rows: C4 is the dense arm only


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
    ({"2d49pt": 1.01, "2d5pt": 1.0}, "LEVEL", []),                         # predicted faster, within the margin
])
def test_c5_takes_the_worst_configuration(speedups, verdict, failed):
    c = check(rows(speedups))["C5"]
    assert c["verdict"] == verdict and c["numbers"]["not_held"] == failed


def test_c5_without_repetitions_is_no_data():
    assert check(rows({"2d49pt": 1.5}, reps=1))["C5"]["verdict"] == "NO DATA"
