"""The claims tables (report.claims_table, python -m membound.analysis.claims) and docs/claims.md's
measured section: generated from the claims that the committed reference raw rows give."""

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml

from membound.analysis import claims, wqi
from membound.analysis.claims import __main__ as cli
from membound.analysis.claims import report
from membound.counters import ncu
from membound.run import config

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "claims.md"


@cache
def reference_claims(gpu: str) -> dict:
    """claims.json of the committed reference run of `gpu`, as rule claims writes it (scripts/claims.py);
    computed once per test session (tests/test_claims_coverage.py resamples it)."""
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    raw = REPO / "results" / "reference" / gpu / "raw"
    bench = sorted(p for family in ("scale", "spmv", "stencil", "gemv") for p in raw.glob(f"{family}*.csv"))
    counters = sorted(raw / "counters" / f"{family}.csv" for family in ("scale", "spmv", "stencil", "gemv"))  # as the rule
    result = claims.check(wqi.read_rows(bench), config.load_gpu(gpu), cfg["stencil"]["kernels"], cfg["claims"]["margin"],
                          cfg["claims"]["dram_fraction"], ncu.read_rows(counters),
                          cfg["precisions"])
    return json.loads(report.to_json(result))


@pytest.mark.slow
def test_docs_measured_section_is_what_the_committed_reference_runs_give():
    results = [reference_claims(gpu) for gpu in ("h100", "h200")]
    text = DOCS.read_text()
    assert text == report.with_measured(text, results), \
        "docs/claims.md is stale: python -m membound.analysis.claims --docs docs/claims.md <h100, h200 claims.json>"


def result(claim_list, surrogate=True):
    return {"claims": claim_list, "precisions": ["fp64", "fp32"], "surrogate": surrogate, "device_spec": "GPU X",
            "measured": {"commit": ["0123456789abcdef"], "repetitions": 3}}


def record(cid, precision, verdict="SUPPORTED", **numbers):
    return {"id": cid, "precision": precision, "verdict": verdict, "on_these_timings": verdict, "estimate": 1.5,
            "ci_low": 1.2, "ci_high": 1.9, "summary": "a long summary; with every list", "numbers": numbers}


def test_claims_table_is_one_short_row_per_claim_with_c3s_factors_under_it():
    effect = {"ratio": "t_TC/t_twin", "estimate": 0.99, "ci_low": 0.98, "ci_high": 1.0, "verdict": "LEVEL"}
    fmt = {"ratio": "t_twin/t_CC", "estimate": 0.8, "ci_low": 0.7, "ci_high": 0.9, "verdict": "CONTRADICTED"}
    c3 = dict(larger_than_L2=10, cuda_core_faster_on=2, surrogate=True, tensor_core_effect=effect, format_effect=fmt)
    table = report.claims_table(result([record("C3", "fp64", "CONTRADICTED", **c3), record("C3", "fp32", **c3),
                                        record("C4", "fp64", tensor_cores_faster=["2d49pt"])]))
    lines = table.splitlines()
    assert len(lines) == 2 + 4 and "surrogate matrices" in lines[2] and "**CONTRADICTED**, 1.5 [1.2, 1.9]" in lines[2]
    assert "tensor-core effect" in lines[3] and "LEVEL, 0.99 [0.98, 1]" in lines[3]
    assert "format effect" in lines[4] and "below 1, 0.8 [0.7, 0.9]" in lines[4]
    assert "tensor cores faster on 2d49pt" in lines[5]
    assert "a long summary" not in table
    assert report.title(result([])) == "GPU X (0123456, 3 repetitions)"


def test_with_measured_replaces_only_the_marked_lines():
    text = f"# Doc\n\nbefore\n\n{report.BEGIN} a b -->\nold table\n{report.END}\n\nafter\n"
    new = report.with_measured(text, [result([record("C4", "fp64", tensor_cores_faster=[])])])
    assert new.startswith("# Doc\n\nbefore\n\n") and new.endswith(f"{report.END}\n\nafter\n")
    assert "old table" not in new and "GPU X (0123456, 3 repetitions):" in new
    assert report.with_measured(new, [result([record("C4", "fp64", tensor_cores_faster=[])])]) == new
    with pytest.raises(SystemExit, match="no '<!-- measured"):
        report.with_measured("# no markers\n", [])


def test_the_command_prints_the_tables_and_names_a_missing_file(tmp_path, capsys):
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(result([record("C4", "fp64", tensor_cores_faster=[])])))
    cli.main([str(path)])
    assert capsys.readouterr().out.startswith("GPU X (0123456, 3 repetitions):\n\n| claim")
    run = subprocess.run([sys.executable, "-m", "membound.analysis.claims", str(tmp_path / "none.json")],
                         capture_output=True, text=True)
    assert run.returncode == 1 and run.stderr.strip().splitlines() == [
        f"error: no {tmp_path / 'none.json'}: render it first (snakemake --profile profiles/reference all)"]


@pytest.mark.slow
def test_the_claims_do_not_depend_on_the_order_of_the_families_files():
    """The rule lists the families in the registry's order, this test's reference_claims in another."""
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    raw = REPO / "results" / "reference" / "h200" / "raw"
    bench = [p for family in ("gemv", "stencil", "spmv", "scale") for p in sorted(raw.glob(f"{family}*.csv"))]
    counters = sorted(raw / "counters" / f"{family}.csv" for family in ("scale", "spmv", "stencil", "gemv"))
    result = claims.check(wqi.read_rows(bench), config.load_gpu("h200"), cfg["stencil"]["kernels"], cfg["claims"]["margin"],
                          cfg["claims"]["dram_fraction"], ncu.read_rows(counters), cfg["precisions"])
    assert json.loads(report.to_json(result)) == reference_claims("h200")
