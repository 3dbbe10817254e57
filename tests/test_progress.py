"""What is left of a run (membound.run.progress): jobs and an estimate, from committed job timings
until this run's own replace them; the line the logger plugin prints, a dry run that shows it, and the lines
a finished run ends with (membound.run.summary)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from membound.run import progress, summary

REPO = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_timings_give_a_job_of_each_rule_every_case_of_one_repetition(tmp_path):
    def tsv(stem, seconds):
        (tmp_path / f"{stem}.tsv").write_text(f"s\th:m:s\n{seconds}\t0:00:01\n")

    tsv("bench_scale", 40), tsv("bench_scale.rep1", 50)                       # one job per repetition
    for rep, (a, b) in {"": (3, 4), ".rep1": (5, 6)}.items():                   # older runs: a job per case
        tsv(f"bench_spmv-a{rep}", a), tsv(f"bench_spmv-b{rep}", b)
    tsv("counters_stencil", 20)
    expected = progress.expected_from(tmp_path, ["scale", "spmv"])
    assert {kind: sorted(t) for kind, t in expected.items()} == {
        "bench_scale": [40, 50], "bench_spmv": [7, 11], "counters_stencil": [20]}
    assert progress.expected_from(REPO / "no/such/folder") == {}


def test_the_committed_timings_cover_every_gpu_job():
    expected = progress.expected_from(REPO / "results/reference/h100/raw/benchmarks", ["scale", "spmv", "stencil"])
    families = ("scale", "spmv", "stencil", "gemv")
    assert {f"{kind}_{f}" for kind in ("bench", "counters") for f in families} <= set(expected)
    assert "counters_dgemm" in expected and all(t > 0 for times in expected.values() for t in times)
    p = progress.Progress({"expected": expected, "gpu_rules": ["bench", "counters", "counters_dgemm"], "gpus": 1,
                           "cores": 1, "families": ("scale", "spmv", "stencil", "gemv")}, Clock())
    p.plan({"bench": 20, "counters": 4, "counters_dgemm": 1})
    assert "25 timed: about" in p.line() and "not yet timed" not in p.line()


def test_a_run_of_fewer_precisions_expects_their_share_of_the_committed_rows(tmp_path):
    (tmp_path / "benchmarks").mkdir()
    for stem in ("bench_spmv", "counters_spmv", "bench_scale"):
        (tmp_path / "benchmarks" / f"{stem}.tsv").write_text("s\th:m:s\n60\t0:01:00\n")
    (tmp_path / "spmv.csv").write_text("precision,value\nfp64,1\nfp64,1\nfp32,1\nfp16,1\n")
    (tmp_path / "scale.csv").write_text("value\n1\n")                  # no precision column: all of it
    expected = progress.expected_from(tmp_path / "benchmarks", ["spmv", "scale"], ["fp64"])
    assert expected["bench_spmv"] == expected["counters_spmv"] == [30] and expected["bench_scale"] == [60]
    assert progress.expected_from(tmp_path / "benchmarks", ["spmv"], ["fp64", "fp16"])["bench_spmv"] == [45]
    assert progress.expected_from(tmp_path / "benchmarks", ["spmv"])["bench_spmv"] == [60]


def test_the_estimate_spreads_gpu_jobs_over_the_gpus_with_its_range_and_this_runs_times_replace_committed_ones():
    clock = Clock()
    settings = {"expected": {"bench": [50.0, 70.0], "fig": [2.0]}, "gpu_rules": lambda: ["bench"], "gpus": 2,
                "cores": 4}
    p = progress.Progress(settings, clock)
    assert p.plan({"bench": 4, "fig": 2, "total": 6}) and not p.plan({"bench": 4, "fig": 2, "total": 6})
    assert ("0 of 6 jobs done, 6 left; 6 timed: about 2.0 min to go (1.7 min to 2.4 min by their recorded times; "
            "GPU jobs 2.0 min on 2 GPUs, others 1 s on 4 cores)") == p.line().split("membound progress: ")[1]
    p.start(1, "bench")
    clock.now = 20.0
    line = p.finish(1)                          # this run: 20 s per bench job; 3 left on 2 GPUs
    assert "1 of 6 jobs done, 5 left; 5 timed: about 31 s to go" in line
    p.start(2, "fig")
    clock.now = 23.0
    assert "2 of 6 jobs done" in p.finish(2) and p.finish(99) is None
    assert p.times("fig") == [3.0]


def test_jobs_without_a_recorded_time_are_counted_apart_never_as_0_s():
    """The issue's run: 18 figure and table jobs left, none of their rules timed yet, said "0 s to go"."""
    p = progress.Progress({"expected": {}, "gpu_rules": ["bench"], "gpus": 1, "cores": 2}, Clock())
    p.plan({f"fig{i}": 1 for i in range(18)})
    line = p.line()
    assert line.endswith(f"18 left; 18 not yet timed (fig0, fig1, fig10, fig11, ...: {progress.UNTIMED})")
    assert "to go" not in line


def test_a_generic_rules_jobs_are_timed_per_family_and_untimed_while_a_family_is():
    clock = Clock()
    p = progress.Progress({"expected": {}, "gpu_rules": ["bench"], "gpus": 1, "cores": 1, "families": ("a", "b")},
                          clock)
    p.plan({"bench": 4})
    p.start(1, "bench", "a")
    clock.now = 1.0
    line = p.finish(1)                                  # family a: 1 s; b unknown: no job is guessed at 1 s
    assert line.endswith(f"3 left; 3 not yet timed (bench: {progress.UNTIMED})"), line
    p.start(2, "bench", "b")
    clock.now = 271.0
    line = p.finish(2)                                  # family b: 270 s; 2 jobs left of a or b
    assert "2 timed: about 4.5 min to go (one recorded time per kind, no spread yet; GPU jobs 4.5 min" in line
    p.start(3, "bench", "b")
    clock.now += 300.0                                  # past b's slowest recorded job: no estimate for it
    assert p.line().endswith("2 left; 1 timed: about 1 s to go (one recorded time per kind, no spread yet; GPU jobs "
                             f"1 s on 1 GPU); 1 not yet timed (bench: {progress.UNTIMED})"), p.line()


@pytest.mark.slow
@pytest.mark.parametrize("gpus", [1, 2])
def test_a_dry_run_with_gpus_says_what_is_left(gpus):
    env = {**os.environ, "XDG_CONFIG_HOME": str(REPO / ".no-user-profiles")}
    run = subprocess.run([sys.executable, "-m", "snakemake", "--profile", "profiles/h100", "all", "-n", "--forceall",
                          "--resources", f"gpu={gpus}"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    line = re.search(r"membound progress: 0 of (\d+) jobs done.*on (\d) GPUs?", run.stdout + run.stderr)
    assert line and int(line.group(2)) == gpus


def test_the_end_of_a_run_says_where_its_outputs_are(tmp_path):
    root = tmp_path / "results" / "h100"
    assert summary.text([str(root)], "h100", f"{root}/report.html") == ""                 # a run of a few targets made none of them
    (root / "figures").mkdir(parents=True)
    (root / "ae").mkdir()
    for made in ("claims.md", "figures/fig2_roofline.png", "figures/fig7_spmv.png", "ae/appendix.md"):
        (root / made).write_text("")
    assert summary.text([str(root)], "h100", f"{root}/report.html").splitlines() == [
        "membound: this run's outputs",
        f"  claims    {root}/claims.md",
        f"  figures   {root}/figures/ (2 figures, .png and .pdf)",
        f"  appendix  {root}/ae/appendix.md",
        f"  report    snakemake --profile h100 --report {root}/report.html",
        "  archive   snakemake --profile h100 archive   (results/archive/membound-h100.tar.gz)"]


def test_a_finished_run_ends_with_where_its_outputs_are_and_a_dry_run_does_not(tmp_path):
    from test_workflow import copy_checkout, snakemake

    copy = copy_checkout(tmp_path / "membound")
    for rendered in (copy / "results" / "reference").glob("*/*"):             # a fresh clone's: raw rows only
        if rendered.name != "raw":
            shutil.rmtree(rendered) if rendered.is_dir() else rendered.unlink()
    (copy / "results" / "reference" / "h100" / "claims.md").write_text("")   # as a run of `all` leaves it
    env = {"PYTHONPATH": str(copy / "src")}
    dry = snakemake("--profile", "profiles/reference", "table1", "-n", cwd=copy, env=env)
    assert dry.returncode == 0 and "this run's outputs" not in dry.stderr, dry.stderr[-3000:]
    run = snakemake("--profile", "profiles/reference", "table1", "--cores", "1", cwd=copy, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    # the report where rule archive takes it (results/reference/report.html: every GPU's, docs/release.md)
    assert ("membound: this run's outputs\n  claims    results/reference/h100/claims.md\n  report    snakemake "
            "--profile reference --report results/reference/report.html\n") in run.stderr
