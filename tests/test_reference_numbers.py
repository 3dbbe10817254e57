"""tools/reference_numbers.py against the README: every cell of the README's stencil, SCALE and GEMV
tables is what the tool derives from the committed raw rows of that GPU's reference run."""

import importlib.util
import json
import re
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("reference_numbers", REPO / "tools" / "reference_numbers.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)

TABLES = {"fp64:": "fp64", "fp32 / TF32:": "fp32", "fp16 (summed in fp32):": "fp16"}


def readme_stencil_cells() -> dict:
    """{(gpu, precision, stencil): cells} of the README's three stencil tables."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("### Stencils"):text.index("### SCALE, GEMV, SpMV")]
    out, precision, name = {}, None, None
    for line in section.splitlines():
        if line in TABLES:
            precision = TABLES[line]
        m = re.match(r"\| (?:(\w+) \(\d\))? ?\| (H\d00) \| (.*) \|$", line)
        if precision and m:
            name = m.group(1) or name
            out[(m.group(2).lower(), precision, name)] = m.group(3).split(" | ")
    return out


@pytest.mark.parametrize("gpu", ["h100", "h200"])
def test_readme_stencil_tables_are_the_committed_raw_rows(gpu):
    readme = {k[1:]: v for k, v in readme_stencil_cells().items() if k[0] == gpu}
    derived = tool.stencil_cells(tool.medians(REPO / "results" / "reference" / gpu / "raw", "stencil"), gpu)
    assert len(readme) == 18 and readme == derived


def readme_scale_and_gemv_cells() -> tuple[dict, dict]:
    """({(gpu, precision): cell} of the README's SCALE table, the same of its GEMV table)."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("### SCALE, GEMV, SpMV"):text.index("### Counters")]
    scale, gemv = {}, {}
    for line in section.splitlines():
        cells = line.strip("|").split(" | ") if re.match(r"\| fp(64|32|16) \|", line) else []
        if len(cells) == 3:
            scale.update({("h100", cells[0].strip()): cells[1], ("h200", cells[0].strip()): cells[2].strip()})
        elif len(cells) == 4:
            gemv.update({("h100", cells[0].strip()): cells[2], ("h200", cells[0].strip()): cells[3].strip()})
    return scale, gemv


@pytest.mark.parametrize("gpu", ["h100", "h200"])
def test_readme_scale_and_gemv_tables_are_the_committed_raw_rows(gpu):
    scale, gemv = readme_scale_and_gemv_cells()
    raw = REPO / "results" / "reference" / gpu / "raw"
    assert {p: c for (g, p), c in scale.items() if g == gpu} == tool.scale_cells(raw, gpu)
    assert {p: c for (g, p), c in gemv.items() if g == gpu} == tool.gemv_cells(raw)


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
