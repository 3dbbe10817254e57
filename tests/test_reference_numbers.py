"""tools/reference_numbers.py against the README: every cell of the README's stencil tables is what the
tool derives from the committed raw rows of that GPU's reference run."""

import importlib.util
import re
from pathlib import Path

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


def test_job_seconds_sum_per_family_and_kind(tmp_path):
    bench = tmp_path / "benchmarks"
    bench.mkdir()
    for name, s in (("bench_scale.tsv", 2.0), ("bench_scale.rep1.tsv", 3.0), ("counters_scale.tsv", 1.5)):
        (bench / name).write_text(f"s\th:m:s\n{s}\t0:00:0{int(s)}\n")
    jobs = tool.job_seconds(tmp_path)
    assert jobs.loc["scale", "bench"] == 5.0 and jobs.loc["scale", "counters"] == 1.5
