"""What is left of a run (membound.run.progress): jobs and an estimate, from committed job timings
until this run's own replace them; the line the logger plugin prints, and a dry run that shows it."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from membound.run import progress

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
    assert expected == pytest.approx({"bench_scale": 45, "bench_spmv": 9, "counters_stencil": 20, "bench": 27})
    assert progress.expected_from(REPO / "no/such/folder") == {}


def test_the_committed_timings_cover_every_gpu_rule():
    expected = progress.expected_from(REPO / "results/reference/h100/raw/benchmarks", ["scale", "spmv", "stencil"])
    assert {"bench", "counters", "counters_dgemm", "counters_gemv"} <= set(expected)
    assert {f"{kind}_{f}" for kind in ("bench", "counters") for f in ("scale", "spmv", "stencil", "gemv")} <= set(expected)
    assert all(seconds > 0 for seconds in expected.values())


def test_a_run_of_fewer_precisions_expects_their_share_of_the_committed_rows(tmp_path):
    (tmp_path / "benchmarks").mkdir()
    for stem in ("bench_spmv", "counters_spmv", "bench_scale"):
        (tmp_path / "benchmarks" / f"{stem}.tsv").write_text("s\th:m:s\n60\t0:01:00\n")
    (tmp_path / "spmv.csv").write_text("precision,value\nfp64,1\nfp64,1\nfp32,1\nfp16,1\n")
    (tmp_path / "scale.csv").write_text("value\n1\n")                  # no precision column: all of it
    expected = progress.expected_from(tmp_path / "benchmarks", ["spmv", "scale"], ["fp64"])
    assert expected["bench_spmv"] == expected["counters_spmv"] == 30 and expected["bench_scale"] == 60
    assert progress.expected_from(tmp_path / "benchmarks", ["spmv"], ["fp64", "fp16"])["bench_spmv"] == 45
    assert progress.expected_from(tmp_path / "benchmarks", ["spmv"])["bench_spmv"] == 60


def test_the_estimate_spreads_gpu_jobs_over_the_gpus_and_this_runs_times_replace_committed_ones():
    clock = Clock()
    settings = {"expected": {"bench": 60.0}, "gpu_rules": lambda: ["bench"], "gpus": 2, "cores": 4}
    p = progress.Progress(settings, clock)
    assert p.plan({"bench": 4, "fig": 2, "total": 6}) and not p.plan({"bench": 4, "fig": 2, "total": 6})
    assert "0 of 6 jobs done, 6 left, about 2.0 min to go (GPU jobs 2.0 min on 2 GPUs" in p.line()
    p.start(1, "bench")
    clock.now = 20.0
    line = p.finish(1)                          # this run: 20 s per bench job; 3 left on 2 GPUs
    assert "1 of 6 jobs done, 5 left, about 30 s to go" in line
    p.start(2, "fig")
    clock.now = 22.0
    assert "2 of 6 jobs done" in p.finish(2) and p.finish(99) is None
    assert p.per_job("fig") == 2.0


def test_a_generic_rules_jobs_are_timed_per_family():
    clock = Clock()
    settings = {"expected": {"bench_a": 10.0, "bench_b": 30.0}, "gpu_rules": ["bench"], "gpus": 1, "cores": 1,
                "families": ("a", "b")}
    p = progress.Progress(settings, clock)
    p.plan({"bench": 4})
    assert p.per_job("bench") == 20.0                    # the families' mean: as many jobs of each
    p.start(1, "bench", "b")
    clock.now = 50.0
    p.finish(1)                                         # family b takes 50 s in this run
    assert p.per_kind("bench_b") == 50.0 and p.per_job("bench") == 30.0
    assert "about 1.5 min to go" in p.line()            # 3 jobs left at 30 s


def test_gpu_rules_without_any_timing_are_named():
    p = progress.Progress({"expected": {}, "gpu_rules": ["bench"], "gpus": 1, "cores": 1}, Clock())
    p.plan({"bench": 3, "fig": 1})
    assert p.line().endswith("; 3 jobs without an estimate)")


@pytest.mark.slow
@pytest.mark.parametrize("gpus", [1, 2])
def test_a_dry_run_with_gpus_says_what_is_left(gpus):
    env = {**os.environ, "XDG_CONFIG_HOME": str(REPO / ".no-user-profiles")}
    run = subprocess.run([sys.executable, "-m", "snakemake", "--profile", "profiles/h100", "all", "-n", "--forceall",
                          "--resources", f"gpu={gpus}"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    line = re.search(r"membound progress: 0 of (\d+) jobs done.*on (\d) GPUs?", run.stdout + run.stderr)
    assert line and int(line.group(2)) == gpus
