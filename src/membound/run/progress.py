"""What is left of a run: after each finished job one line with the jobs left and, for those whose kind
of job has recorded times, an estimate with its range, for a log read later as much as for a terminal
(no carriage returns, no colours).

Snakemake hands its log records to the logger plugin `membound` (snakemake_logger_plugin_membound,
`logger: [membound]` in the profiles), which feeds them to a `Progress`. The workflow sets what it
knows at parse time, in this same process (`configure`): the GPU rules, the number of GPUs, and each
kind of job's recorded seconds from the committed reference run's job timings (`expected_from`). Once
a job of a kind has finished, this run's own times of that kind replace the committed ones.

Estimate: GPU jobs' seconds over the GPUs, plus the other jobs' seconds over the cores; the range
takes each kind's fastest and slowest recorded job. A job whose kind has no recorded time (a table
or figure before its rule's first job ends; a generic rule's job while any family is untimed, its
family unknown until it starts) is counted apart as not yet timed, never as 0 s.
"""

from __future__ import annotations

import csv
import re
import time
from collections import Counter, defaultdict
from pathlib import Path

SETTINGS = {"expected": {}, "gpu_rules": set(), "gpus": 1, "cores": 1, "on_gpus": True, "families": ()}
UNTIMED = "no recorded time, or running past the slowest"
STEM = re.compile(r"^(?P<rule>[A-Za-z0-9_]+?)(?:-.*?)?(?P<rep>\.rep\d+)?$")   # <rule>[-<case>][.rep<r>]


def configure(expected: dict[str, list[float]], gpu_rules, gpus: int, cores: int, on_gpus: bool = True,
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


def expected_from(benchmarks: Path, families=(), precisions=None) -> dict[str, list[float]]:
    """Per kind of job, the seconds each committed job of it took, by committed timings (Snakemake
    benchmark files <rule>[-<case>][<.rep r>].tsv under `benchmarks`): a job runs every case of one
    repetition (membound.kernels.batch), so the cases' files of one repetition add up (older runs had
    a job per case), one time per repetition. A family's jobs (the generic rules `bench` and
    `counters`: files bench_<family>..., counters_<family>...) count the share of its committed rows
    in this run's `precisions` (a row count, not a time: a first estimate that this run's own jobs
    replace)."""
    per_rep = defaultdict(float)
    for tsv in sorted(Path(benchmarks).glob("*.tsv")) if Path(benchmarks).is_dir() else []:
        rows = list(csv.DictReader(tsv.open(), delimiter="\t"))
        if rows and (match := STEM.match(tsv.stem)):
            per_rep[match["rule"], match["rep"]] += float(rows[0]["s"])
    times = defaultdict(list)
    for (kind, _), seconds in per_rep.items():
        times[kind].append(seconds)
    for family in families:
        share = precision_share(Path(benchmarks).parent, family, precisions)
        for kind in (f"bench_{family}", f"counters_{family}"):
            if kind in times:
                times[kind] = [seconds * share for seconds in times[kind]]
    return dict(times)


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

    def times(self, kind: str) -> list[float]:
        """Seconds the jobs of `kind` took: this run's, else the committed ones, else none."""
        return self.taken.get(kind) or list(self.settings["expected"].get(kind, []))

    def kinds(self, rule: str) -> list[str]:
        """The kinds of job of `rule`: one per family where it is a generic rule, else itself."""
        families = self.settings.get("families", ())
        generic = any(f"{rule}_{f}" in self.settings["expected"] or f"{rule}_{f}" in self.taken for f in families)
        return [f"{rule}_{f}" for f in families] if generic else [rule]

    def left(self) -> tuple[int, int, dict[str, list[float]], Counter]:
        """(jobs left; those timed; per unit, 'gpu' or 'cpu', the seconds left by the fastest, mean and
        slowest recorded job of each kind; the jobs not yet timed per rule, a running job past its
        kind's slowest time among them). A generic rule's jobs not yet started are split evenly over
        its families (as many jobs each), untimed while any is."""
        seconds = {"gpu": [0.0, 0.0, 0.0], "cpu": [0.0, 0.0, 0.0]}
        untimed, timed, now = Counter(), 0, self.clock()

        def add(rule, times, jobs=1.0, elapsed=0.0):
            unit = seconds["gpu" if rule in self.gpu_rules else "cpu"]
            for i, t in enumerate((min(times), sum(times) / len(times), max(times))):
                unit[i] += jobs * max(t - elapsed, 0.0)

        for rule, planned in self.planned.items():
            kinds = self.kinds(rule)
            started = {kind: len(self.taken.get(kind, ())) for kind in kinds}
            for _, kind, _ in self.running.values():
                if kind in started:
                    started[kind] += 1
            waiting = planned - self.finished[rule] - sum(1 for r, _, _ in self.running.values() if r == rule)
            if rule == "all" or rule.endswith("_all") or waiting <= 0:   # the target rules: no work
                continue
            if not all(self.times(kind) for kind in kinds):
                untimed[rule] += waiting
                continue
            timed += waiting
            for kind in kinds:
                add(rule, self.times(kind), max(planned / len(kinds) - started[kind], 0.0))
        for rule, kind, since in self.running.values():
            if (times := self.times(kind)) and now - since < max(times):
                timed += 1
                add(rule, times, elapsed=now - since)
            else:   # untimed, or running past its slowest recorded time: no estimate
                untimed[rule] += 1
        jobs = sum(self.planned.values()) - sum(self.finished.values())
        return jobs, timed, seconds, untimed

    def line(self) -> str:
        jobs, timed, seconds, untimed = self.left()
        done, total = sum(self.finished.values()), sum(self.planned.values())
        gpus, cores = self.settings["gpus"], self.settings["cores"]
        low, mid, high = (seconds["gpu"][i] / gpus + seconds["cpu"][i] / cores for i in range(3))
        text = f"membound progress: {done} of {total} jobs done, {jobs} left"
        if timed:
            gpu_s, cpu_s, units = seconds["gpu"][1] / gpus, seconds["cpu"][1] / cores, []
            if seconds["gpu"][2] and self.settings.get("on_gpus", True):
                units.append(f"GPU jobs {_minutes(gpu_s)} on {gpus} GPU{'s' if gpus > 1 else ''}")
            elif seconds["gpu"][2]:
                units.append(f"benchmark jobs {_minutes(gpu_s)} one at a time")
            if seconds["cpu"][2]:
                units.append(f"others {_minutes(cpu_s)} on {cores} cores")
            spread = (f"{_minutes(low)} to {_minutes(high)} by their recorded times" if _minutes(low) != _minutes(high)
                      else "one recorded time per kind, no spread yet")
            text += f"; {timed} timed: about {_minutes(mid)} to go ({spread}; {', '.join(units)})"
        if untimed:
            named = ", ".join(sorted(untimed)[:4]) + (", ..." if len(untimed) > 4 else "")
            text += f"; {sum(untimed.values())} not yet timed ({named}: {UNTIMED})"
        return text
