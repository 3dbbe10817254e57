"""tools/compare_gpu_runs.py (issue 25): a GPU held by two jobs at once is caught, rows without a time
are left out, and claims are matched per claim and precision."""

import importlib.util
import json
import os
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("compare_gpu_runs", REPO / "tools" / "compare_gpu_runs.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)

T0 = pd.Timestamp("2026-11-26T11:00:00Z")


def raw(run: Path, name: str, gpu: str, start_s: float, end_s: float):
    path = run / "raw" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    date = "" if start_s is None else (T0 + pd.Timedelta(seconds=start_s)).strftime("%Y-%m-%dT%H:%M:%SZ")
    pd.DataFrame({"value": [1.0], "date": [date], "device_uuid": [gpu]}).to_csv(path, index=False)
    os.utime(path, (T0.timestamp() + end_s,) * 2)


def claims(run: Path, rows):
    keys = ["id", "precision", "verdict", "estimate", "ci_low", "ci_high"]
    (run / "claims.json").write_text(json.dumps({"claims": [dict(zip(keys, r)) for r in rows]}))


def test_two_files_measured_at_once_on_one_gpu_are_caught(tmp_path):
    raw(tmp_path, "scale.csv", "GPU-a", 0, 10)
    raw(tmp_path, "spmv.csv", "GPU-b", 2, 12)          # at the same time, another GPU: fine
    raw(tmp_path, "gemv.csv", "GPU-a", 12, 20)         # after scale.csv, same GPU: fine
    raw(tmp_path, "counters/dgemm.rows.csv", "", None, 15)   # no time: left out, not a crash
    files = tool.raw_files(tmp_path)
    assert sorted(files["file"]) == ["raw/gemv.csv", "raw/scale.csv", "raw/spmv.csv"]
    assert tool.shared(files) == []
    raw(tmp_path, "stencil.csv", "GPU-b", 8, 30)       # starts while spmv.csv's job still runs on GPU-b
    assert tool.shared(tool.raw_files(tmp_path)) == [("raw/spmv.csv", "raw/stencil.csv", "GPU-b")]


def test_claims_are_matched_per_precision(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    claims(a, [("C1", "fp64", "SUPPORTED", 1.0, 0.99, 1.01), ("C1", "fp16", "SUPPORTED", 1.0, 0.98, 1.02),
               ("C5", "fp64", "CONTRADICTED", 0.6, None, None)])
    claims(b, [("C1", "fp64", "SUPPORTED", 1.2, 1.1, 1.3), ("C1", "fp16", "SUPPORTED", 1.0, 1.0, 1.01),
               ("C5", "fp64", "CONTRADICTED", 0.6, None, None)])
    both = tool.overlap(tool.claims(a), tool.claims(b))
    assert len(both) == 3                                  # not 3 x 3: one row per claim and precision
    assert both.loc[("C1", "fp64"), "overlap"] == False    # noqa: E712
    assert both.loc[("C1", "fp16"), "overlap"] == True     # noqa: E712
    assert both.loc[("C5", "fp64"), "overlap"] == ""       # no interval: neither
    assert list(both["disjoint"]) == [False, True, False]
