"""The paper's claims on synthetic raw rows: each claim passing, failing, N/A without tensor cores
and NO DATA, the surrogate label, and strict JSON."""

import json

import pandas as pd
import pytest

from membound import claims, config, measure
from membound.matrices.table2 import size_mb

H100 = config.load_gpu("h100")       # alpha = 67/34, eq. 23 bound 1.327; L2 50 MB; CUDA-core balance 10.1
CPU = config.load_gpu("cpu")         # no FP64 matrix unit
STENCILS = {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3},     # I = 15/8: memory-bound
            "2d49pt": {"shape": "box", "dims": 2, "radius": 3, "depth": 3}}     # I = 147/8: compute-bound
BIG = {"rows": 1_000_000, "cols": 1_000_000, "nnz": 5_000_000}    # 76 MB > the 50 MB L2
SMALL = {"rows": 1_000, "cols": 1_000, "nnz": 10_000}


def _row(kernel, impl, unit, role, problem, t, **kw):
    return {"kernel": kernel, "impl": impl, "unit": unit, "role": role, "problem": problem, "t_median_s": t,
            "source": "synthetic", "device": "GPU X", "host": "node1", "date": "2026-01-02T03:04:05Z", **kw}


def scale(n, t_cc, t_tc):
    return [_row("scale", "cuda_core", "cuda_core", "STREAM", f"n={n}", t_cc, n=n, work_items=n),
            _row("scale", "tensor_core", "tensor_core", "STREAM", f"n={n}", t_tc, n=n, work_items=n)]


def spmv(name, t_cc, t_tc, shape=SMALL, source="real"):
    kw = {**shape, "source": source, "code": "D1", "work_items": shape["nnz"]}
    return [_row("spmv", "cusparse_csr", "cuda_core", "cuSPARSE", name, t_cc, **kw),
            _row("spmv", "dasp_tc", "tensor_core", "DASP", name, t_tc, **kw)]


def stencil(name, t_cc, t_tc, depth=3, depth_tc=None):
    kw = {"n": 10_000, "domain": "100x100", "steps": 6, "work_items": 60_000}
    return [_row("stencil", "cc_naive", "cuda_core", "Brick", name, 10 * t_cc, depth=1, **kw),
            _row("stencil", "cc_tb", "cuda_core", "EBISU", name, t_cc, depth=depth, **kw),
            _row("stencil", "tc", "tensor_core", "ConvStencil", name, t_tc, depth=depth_tc or depth, **kw)]


def frame(*groups):
    return pd.DataFrame([r for g in groups for r in g]).reindex(columns=measure.ROW_COLUMNS)


def check(rows, gpu=H100, tolerance=0.05):
    result = claims.check(rows, gpu, STENCILS, tolerance)
    return result, {c["id"]: c for c in result["claims"]}


def test_every_claim_passes_on_cuda_core_friendly_times():
    rows = frame(scale(2**20, 1.0, 1.1), scale(2**24, 1.0, 1.05), spmv("big", 1.0, 1.2, BIG),
                 stencil("2d5pt", 1.0, 1.3))
    result, c = check(rows)
    assert [c[k]["verdict"] for k in ("C1", "C2", "C3", "C4")] == ["PASS"] * 4
    assert c["C1"]["numbers"]["eq23_bound"] == pytest.approx(2 - 2 / (1 + 67 / 34))
    assert c["C1"]["numbers"]["memory_bound_pairs"] == 4 and c["C1"]["numbers"]["exceeding"] == []
    assert c["C2"]["numbers"]["within_half_L2"]["sizes"] == 1 and c["C2"]["numbers"]["beyond_half_L2"]["sizes"] == 1
    assert c["C2"]["numbers"]["beyond_half_L2"]["geomean_tc_over_cc"] == pytest.approx(1.05)
    assert result["matrix_source"] == "real" and not result["surrogate"]


def test_c1_fails_above_eq23_and_names_the_pair():
    _, c = check(frame(scale(2**20, 1.0, 1.1), spmv("fast_tc", 1.5, 1.0)))
    assert c["C1"]["verdict"] == "FAIL" and c["C1"]["holds"] is False
    assert c["C1"]["numbers"]["exceeding"] == ["spmv fast_tc"]
    assert c["C1"]["numbers"]["max_speedup"] == pytest.approx(1.5)


def test_c1_leaves_compute_bound_pairs_to_a_separate_list():
    _, c = check(frame(scale(2**20, 1.0, 1.1), stencil("2d49pt", 2.0, 1.0)))
    assert c["C1"]["verdict"] == "PASS"       # 2x on a compute-bound stencil is outside eq. 23
    assert c["C1"]["numbers"]["compute_bound_not_covered"] == [{"pair": "stencil 2d49pt", "speedup": 2.0}]
    cases = c["C1"]["cases"].set_index("problem")
    assert cases.loc["2d49pt", "bound"] == "compute" and cases.loc["2d49pt", "within_bound"] is None


def test_unequal_depths_are_excluded_from_c1_and_c4():
    _, c = check(frame(stencil("2d5pt", 2.0, 1.0, depth=3, depth_tc=1)))
    assert c["C1"]["verdict"] == c["C4"]["verdict"] == "NO DATA"
    assert c["C1"]["numbers"]["unequal_depth_excluded"] == ["stencil 2d5pt"]
    assert c["C4"]["numbers"]["unequal_depth_excluded"] == ["2d5pt"]


def test_c2_fails_when_one_side_of_half_the_l2_is_faster_on_tensor_cores():
    _, c = check(frame(scale(2**20, 1.0, 1.2), scale(2**21, 1.0, 1.0), scale(2**24, 1.0, 0.8)))
    n = c["C2"]["numbers"]
    assert c["C2"]["verdict"] == "FAIL"
    assert n["within_half_L2"]["holds"] is True and n["within_half_L2"]["sizes"] == 2   # ratio 1 counts as "as fast"
    assert n["beyond_half_L2"]["holds"] is False and n["beyond_half_L2"]["geomean_tc_over_cc"] == pytest.approx(0.8)


def test_c3_uses_table2_size_against_the_l2():
    rows = frame(spmv("big", 1.0, 0.9, BIG), spmv("small", 1.0, 0.5))
    _, c = check(rows)
    assert c["C3"]["verdict"] == "FAIL"
    assert c["C3"]["numbers"]["larger_than_L2"] == 1 and c["C3"]["numbers"]["fitting_in_L2"] == 1
    cases = c["C3"]["cases"].set_index("problem")
    assert cases.loc["big", "size_MB"] == pytest.approx(size_mb(**BIG))
    _, c = check(frame(spmv("small", 1.0, 0.5)))
    assert c["C3"]["verdict"] == "NO DATA"


def test_c4_match_is_within_the_tolerance():
    _, c = check(frame(stencil("2d5pt", 1.0, 0.97), stencil("2d49pt", 1.0, 1.5)))
    assert c["C4"]["verdict"] == "PASS" and c["C4"]["numbers"]["matching_or_faster"] == 2
    _, c = check(frame(stencil("2d5pt", 1.0, 0.9), stencil("2d49pt", 1.0, 1.5)))
    assert c["C4"]["verdict"] == "FAIL" and c["C4"]["numbers"]["failing"] == ["2d5pt"]
    _, c = check(frame(stencil("2d5pt", 1.0, 0.9)), tolerance=0.2)
    assert c["C4"]["verdict"] == "PASS"


def test_without_tensor_cores_every_verdict_is_not_applicable_and_says_why():
    rows = frame(scale(2**10, 1.0, 7.0), scale(2**20, 1.0, 7.0), spmv("big", 1.0, 9.0, BIG), stencil("2d5pt", 1.0, 0.5))
    result, c = check(rows, gpu=CPU)
    assert {x["verdict"] for x in c.values()} == {"N/A"}
    assert c["C1"]["holds"] is None and c["C2"]["holds"] is True and c["C4"]["holds"] is False
    md = claims.markdown(result)
    assert "NO TENSOR CORES" in md and "PASS" not in md and "FAIL" not in md


def test_surrogate_matrices_are_labelled_in_json_and_on_top_of_the_markdown():
    result, c = check(frame(scale(2**20, 1.0, 1.1), spmv("big", 1.0, 1.2, BIG, source="surrogate")))
    assert result["surrogate"] and result["matrix_source"] == "surrogate"
    assert c["C3"]["sources"] == ["surrogate"] and "surrogate" in c["C1"]["sources"]
    md = claims.markdown(result)
    assert "SURROGATE MATRICES" in md.split("| claim")[0]


def test_json_is_strict_and_complete():
    result, _ = check(frame(scale(2**20, 1.0, 1.1)), gpu=CPU)
    data = json.loads(claims.to_json(result))
    assert [c["id"] for c in data["claims"]] == ["C1", "C2", "C3", "C4"]
    c1 = data["claims"][0]
    assert set(c1) >= {"id", "text", "verdict", "holds", "numbers", "cases", "sources"}
    assert c1["numbers"]["alpha"] is None and c1["cases"][0]["problem"] == "n=1048576"
    assert data["measured"] == {"device": ["GPU X"], "host": ["node1"], "slurm_jobs": [],
                                "date_first": "2026-01-02T03:04:05Z", "date_last": "2026-01-02T03:04:05Z"}
    assert data["matrix_source"] == "none"


def test_write_gives_both_files(tmp_path):
    result, _ = check(frame(scale(2**20, 1.0, 1.1)))
    claims.write(result, tmp_path / "claims.json", tmp_path / "claims.md")
    assert json.loads((tmp_path / "claims.json").read_text())["device_spec"] == H100["name"]
    assert (tmp_path / "claims.md").read_text().startswith("# Claims of paper 000 checked on NVIDIA H100")


def test_two_rows_for_one_side_of_a_pair_is_an_error():
    with pytest.raises(ValueError, match="more than one tensor_core row for scale n=1024"):
        check(frame(scale(1024, 1.0, 1.0), scale(1024, 1.0, 1.0)[1:]))
