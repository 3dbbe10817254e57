"""tools/reference_numbers.py: the figures it derives from a reference run's raw rows (the tables of README.md
and docs/ built from them are held to the committed rows by tests/test_readme_tables.py)."""

import importlib.util
import json
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("reference_numbers", REPO / "tools" / "reference_numbers.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)


def test_job_seconds_sum_per_family_and_kind(tmp_path):
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    for name, s in (("bench_scale.tsv", 2.0), ("bench_scale.rep1.tsv", 3.0), ("counters_scale.tsv", 1.5)):
        (bench / name).write_text(f"s\th:m:s\n{s}\t0:00:0{int(s)}\n")
    jobs = tool.job_seconds(tmp_path)
    assert jobs.loc["scale", "bench"] == 5.0 and jobs.loc["scale", "counters"] == 1.5


def test_scenario4_sets_sparse_against_dense_where_the_spec_predicts_it(tmp_path):
    (tmp_path / "tables").mkdir()
    pd.DataFrame([{"problem": "3d27pt", "precision": "fp32", "depth": 3, "sparsity": "2:4", "scenario": 4},
                  {"problem": "2d9pt", "precision": "fp32", "depth": 2, "sparsity": "dense", "scenario": 4},
                  {"problem": "2d5pt", "precision": "fp16", "depth": 1, "sparsity": "2:4", "scenario": 2}]
                 ).to_csv(tmp_path / "tables" / "classification.csv", index=False)
    med = pd.Series({("3d27pt", "fp32", "tc_sparse", 3): 90.0, ("3d27pt", "fp32", "tc", 3): 100.0,
                     ("2d5pt", "fp16", "tc_sparse", 1): 300.0, ("2d5pt", "fp16", "tc", 1): 100.0,
                     ("2d9pt", "fp32", "tc_sparse", 2): 300.0, ("2d9pt", "fp32", "tc", 2): 100.0})
    assert tool.scenario4(tmp_path, med).to_dict() == {("3d27pt", "fp32", 3): 0.9}


def test_spmv_lines_set_ours_against_dasp_beyond_the_l2(tmp_path, monkeypatch):
    monkeypatch.setattr(tool, "dasp_figures", lambda gpu: {"big": 200.0, "small": 100.0})
    cases = [{"problem": "big", "larger_than_L2": True, "ratio": 0.8},
             {"problem": "small", "larger_than_L2": False, "ratio": 0.5}]
    (tmp_path / "claims.json").write_text(json.dumps({"claims": [{"id": "C3", "precision": "fp64", "cases": cases}]}))
    raw = tmp_path / "raw"
    raw.mkdir()
    pd.DataFrame([{"problem": m, "precision": "fp64", "impl": i, "value": v, "t_median_s": t}
                  for m, i, v, t in (("big", "dasp_tc", 300.0, 1.0), ("big", "dasp_tc_twin", 290.0, 1.05),
                                     ("small", "dasp_tc", 50.0, 2.0), ("small", "dasp_tc_twin", 50.0, 2.0))]
                 ).to_csv(raw / "spmv.csv", index=False)
    beyond, dasp, twin = tool.spmv_lines(tmp_path, raw, "h100")
    assert beyond.endswith("big 0.800")
    assert dasp.endswith("big 1.500, small 0.500 (in the L2); geomean beyond the L2 1.500 over 1")
    assert twin.startswith("twin speedup t_twin/t_TC: 1.000 (small) - 1.050 (big)")


def test_pair_lines_set_one_precision_against_another(tmp_path, monkeypatch):
    scale = pd.Series({(q, p, impl): v * (2.0 if p == "a" else 1.0) * (1.01 if impl == "tensor_core" else 1.0)
                       for q, v in (("n=2^20", 5.0), ("n=2^26", 100.0), ("n=2^28", 120.0), ("n=2^27 x12", 1.0))
                       for p in ("a", "b") for impl in ("cuda_core", "tensor_core")})
    scale.index.names = ["problem", "precision", "impl"]
    monkeypatch.setattr(tool, "medians", lambda raw, family: scale)
    monkeypatch.setattr(tool, "KERNELS", {"s1": {}, "s2": {}})
    (tmp_path / "figures").mkdir()
    pd.DataFrame([{"problem": m, "unit": "tensor_core", "impl": "dasp_tc", "larger_than_L2": big, "precision": p,
                   "value": v} for m, big, p, v in (("m1", True, "a", 1.1), ("m1", True, "b", 1.0),
                                                     ("m2", True, "a", 0.9), ("m2", True, "b", 1.0),
                                                     ("m3", False, "a", 9.0), ("m3", False, "b", 1.0),
                                                     ("m4", True, "a", 2.0))]).to_csv(tmp_path / "figures" / "fig7_spmv.csv")
    med = pd.Series({("s1", "a", "cc_naive", 1): 90.0, ("s1", "a", "cc_tb", 4): 95.0, ("s1", "b", "cc_naive", 1): 100.0,
                     ("s2", "a", "cc_tb", 2): 50.0, ("s2", "b", "cc_tb", 3): 50.0,
                     ("s1", "a", "tc", 2): 10.0, ("s1", "b", "tc_sparse", 2): 20.0,
                     ("s2", "a", "tc", 1): 30.0, ("s2", "b", "tc", 1): 30.0})
    med.index.names = ["problem", "precision", "impl", "depth"]
    lines = tool.pair_lines(tmp_path, tmp_path, med, "a", "b")
    assert "SCALE CUDA cores at n >= 2^26: 2.000-2.000 (n=2^26, n=2^28)" in lines[1]
    assert lines[2].endswith("in a: 1.010-1.010") and lines[3].endswith("in b: 1.010-1.010")
    assert lines[4].endswith(f"geomean {(1.1 * 0.9) ** 0.5:.3f} over 2 matrices")   # m3 fits, m4 has no b row
    assert lines[5].endswith(f"geomean {0.95 ** 0.5:.3f}, 0.950-1.000")   # the best of each unit's kernels
    assert lines[6].endswith(f"geomean {0.5 ** 0.5:.3f}, 0.500-1.000")
