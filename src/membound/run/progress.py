"""What is left of a run: after each finished job one line with the jobs left and an estimate of the
time they take, for a log read later as much as for a terminal (no carriage returns, no colours).

Snakemake hands its log records to the logger plugin `membound` (snakemake_logger_plugin_membound,
`logger: [membound]` in the profiles), which feeds them to a `Progress`. The workflow sets what it
knows at parse time, in this same process (`configure`): the GPU rules, the number of GPUs, and each
rule's expected seconds per job from the committed reference run's job timings (`expected_from`). Once a job of a rule
has finished, this run's own mean time per job of that rule replaces the committed one.

Estimate: GPU jobs' seconds over the GPUs, plus the other jobs' seconds over the cores (a job of
a rule without committed timings, the tables and figures, counts from its rule's first finished job).
"""

from __future__ import annotations

import csv
import re
import time
from collections import Counter, defaultdict
from pathlib import Path

SETTINGS = {"expected": {}, "gpu_rules": set(), "gpus": 1, "cores": 1, "on_gpus": True, "families": ()}
STEM = re.compile(r"^(?P<rule>[A-Za-z0-9_]+?)(?:-.*?)?(?P<rep>\.rep\d+)?$")   # <rule>[-<case>][.rep<r>]


def configure(expected: dict[str, float], gpu_rules, gpus: int, cores: int, on_gpus: bool = True,
              families=()) -> None:
    """What the workflow knows of this run (called while the Snakefile is parsed; `gpu_rules` may
    be a function, asked when the run's jobs are planned, after every rule is defined; `on_gpus`
    False: the cpu profile, whose benchmark jobs hold the resource `gpu` to run one at a time;
    `families`: the values of the generic rules' `family` wildcard, as many jobs each)."""
    SETTINGS.update(expected=dict(expected), gpu_rules=gpu_rules, gpus=max(int(gpus or 1), 1),
                    cores=max(int(cores or 1), 1), on_gpus=on_gpus, families=tuple(families))


def precision_share(raw: Path, family: str, precisions) -> float:
    """The share of the committed run's rows of `family` (raw/<family>.csv, repetition 0) in
    `precisions` (1 where the file or its precision column is missing)."""
    path = Path(raw) / f"{family}.csv"
    if precisions is None or not path.is_file():
        return 1.0
    with path.open() as f:
        rows = list(csv.DictReader(f))
    if not rows or "precision" not in rows[0]:
        return 1.0
    return sum(r["precision"] in precisions for r in rows) / len(rows)


def expected_from(benchmarks: Path, families=(), precisions=None) -> dict[str, float]:
    """Per rule, the seconds one of its jobs takes by committed timings (Snakemake benchmark files
    <rule>[-<case>][<.rep r>].tsv under `benchmarks`): a job runs every case of one repetition
    (membound.kernels.batch), so the cases' files of one repetition add up (older runs had a job
    per case), and repetitions average. A family's jobs count the share of its committed rows in
    this run's `precisions` (a row count, not a time: a first estimate that this run's own jobs
    replace). The generic rules `bench` and `counters` (their files bench_<family>...,
    counters_<family>...) get the mean of `families`' jobs."""
    per_rep = defaultdict(float)
    for tsv in sorted(Path(benchmarks).glob("*.tsv")) if Path(benchmarks).is_dir() else []:
        rows = list(csv.DictReader(tsv.open(), delimiter="\t"))
        if rows and (match := STEM.match(tsv.stem)):
            per_rep[match["rule"], match["rep"]] += float(rows[0]["s"])
    reps = defaultdict(list)
    for (rule, _), seconds in per_rep.items():
        reps[rule].append(seconds)
    expected = {rule: sum(s) / len(s) for rule, s in reps.items()}
    for family in families:
        share = precision_share(Path(benchmarks).parent, family, precisions)
        for kind in (f"bench_{family}", f"counters_{family}"):
            if kind in expected:
                expected[kind] *= share
    for generic in ("bench", "counters"):
        jobs = [expected[f"{generic}_{f}"] for f in families if f"{generic}_{f}" in expected]
        if jobs:
            expected[generic] = sum(jobs) / len(jobs)
    return expected


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


class Progress:
    """Jobs planned, running and finished per rule, and the line that says what is left."""

    def __init__(self, settings: dict | None = None, clock=time.monotonic):
        self.settings, self.clock = settings or SETTINGS, clock
        self.planned, self.finished, self.taken = Counter(), Counter(), defaultdict(list)
        self.running: dict[int, tuple[str, str, float]] = {}   # job id -> rule, kind, start
        self.gpu_rules: set[str] = set()

    def plan(self, stats: dict[str, int]) -> bool:
        """Take the run's jobs per rule (Snakemake's job stats); False where they are the ones known."""
        planned = Counter({rule: n for rule, n in stats.items() if rule != "total"})
        if planned == self.planned:
            return False
        rules = self.settings["gpu_rules"]
        self.planned, self.gpu_rules = planned, set(rules() if callable(rules) else rules)
        return True

    def start(self, jobid: int, rule: str, family: str | None = None) -> None:
        """A job of `rule` started (of `family`, the generic rules' wildcard: its own kind of job)."""
        self.running[jobid] = (rule, f"{rule}_{family}" if family else rule, self.clock())

    def finish(self, jobid: int) -> str | None:
        if jobid not in self.running:
            return None
        rule, kind, since = self.running.pop(jobid)
        self.finished[rule] += 1
        self.taken[kind].append(self.clock() - since)
        return self.line()

    def per_kind(self, kind: str) -> float | None:
        """Seconds a job of `kind` takes: this run's mean, else the committed estimate, else None."""
        taken = self.taken.get(kind)
        return sum(taken) / len(taken) if taken else self.settings["expected"].get(kind)

    def per_job(self, rule: str) -> float | None:
        """Seconds a job of `rule` takes: the mean over its families' kinds where it has them (the
        generic rules), else its own."""
        known = [t for f in self.settings.get("families", ()) if (t := self.per_kind(f"{rule}_{f}")) is not None]
        return sum(known) / len(known) if known else self.per_kind(rule)

    def left(self) -> tuple[int, float, float, int]:
        """(jobs left, GPU seconds left, other seconds left, jobs left without an estimate)."""
        gpu_s = cpu_s = 0.0
        unknown, now = 0, self.clock()
        running = Counter(rule for rule, _, _ in self.running.values())
        for rule, planned in self.planned.items():
            todo = planned - self.finished[rule] - running[rule]
            per = self.per_job(rule)
            if per is None:   # a GPU rule with no timing yet is reported; others are short (tables, figures)
                unknown += (todo + running[rule]) * (rule in self.gpu_rules)
                continue
            busy = sum(max((self.per_kind(kind) or per) - (now - since), 0.0)
                       for r, kind, since in self.running.values() if r == rule)
            if rule in self.gpu_rules:
                gpu_s += todo * per + busy
            else:
                cpu_s += todo * per + busy
        jobs = sum(self.planned.values()) - sum(self.finished.values())
        return jobs, gpu_s, cpu_s, unknown

    def line(self) -> str:
        jobs, gpu_s, cpu_s, unknown = self.left()
        done, total = sum(self.finished.values()), sum(self.planned.values())
        gpus, cores = self.settings["gpus"], self.settings["cores"]
        estimate = gpu_s / gpus + cpu_s / cores
        where = (f"GPU jobs {_minutes(gpu_s / gpus)} on {gpus} GPU{'s' if gpus > 1 else ''}"
                 if self.settings.get("on_gpus", True) else f"benchmark jobs {_minutes(gpu_s / gpus)} one at a time")
        text = (f"membound progress: {done} of {total} jobs done, {jobs} left, about {_minutes(estimate)} to go "
                f"({where}, others {_minutes(cpu_s / cores)} on {cores} cores")
        return text + (f"; {unknown} jobs without an estimate)" if unknown else ")")
