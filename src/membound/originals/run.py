"""One job of an original code: run the executable the user built on one problem, read its output and
write raw rows of membound's schema (measure.ROW_COLUMNS) and a run record (JSON).

    python -m membound.originals.run --backend cuda --code ebisu --case 2d5pt --executable PATH \\
        --commit SHA --shape star --dims 2 --radius 1 --depth 3 --domain 10240x10240 --steps 12 \\
        --rep 0 --scratch DIR --out ROWS.csv --record RUN.json

Every command line and its whole output (stdout and stderr) go to this process's standard output,
which the rule keeps as its log. The executable runs in a scratch folder (removed afterwards) with a
`data/` folder, where DASP appends its own record; DASP gets a Matrix Market file written there from
the workflow's CSR file (--matrix) with scipy.io.mmwrite. nvidia-smi samples the GPU's clocks while
it runs. A failed run, a failed check of the code's own, or output the parser cannot read leaves no
rows and exits 1 with a one-line error.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import scipy.io

from membound.matrices import csr
from membound.originals import parsers
from membound.originals.codes import CODES, Problem, commands
from membound.run import measure, outputs, runinfo

# The job's GPU: the first CUDA_VISIBLE_DEVICES names (membound.run.gpu_slot sets its UUID), else GPU 0.
CLOCK_QUERY = ["nvidia-smi", "-i", (os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0],
               "--query-gpu=clocks.sm,clocks.mem", "--format=csv,noheader,nounits"]
CLOCK_PERIOD_S = 0.5


class RunFailed(RuntimeError):
    """The executable could not run or exited with an error."""


@dataclass
class Run:
    command: list[str]
    returncode: int
    output: str
    clocks: list[tuple[int, int]] = field(default_factory=list)   # (SM MHz, memory MHz) samples


def _sample(proc: subprocess.Popen, samples: list) -> None:
    """Append (SM, memory) clock samples of the job's GPU every CLOCK_PERIOD_S while `proc` runs (none without
    nvidia-smi)."""
    while proc.poll() is None and shutil.which(CLOCK_QUERY[0]):
        try:
            out = subprocess.run(CLOCK_QUERY, capture_output=True, text=True, timeout=10, check=True).stdout
            samples.append(tuple(int(float(v)) for v in out.splitlines()[0].split(",")))
        except (subprocess.SubprocessError, OSError, ValueError, IndexError):
            return
        time.sleep(CLOCK_PERIOD_S)


def execute(command: list[str], cwd: Path) -> Run:
    """Run `command` in `cwd`, its stderr merged into its stdout, sampling the clocks; echo both."""
    print(f"$ cd {shlex.quote(str(cwd))} && {shlex.join(command)}", flush=True)
    samples: list = []
    try:
        proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
    except OSError as err:
        raise RunFailed(f"{command[0]} could not start: {err}") from None
    sampler = threading.Thread(target=_sample, args=(proc, samples), daemon=True)
    sampler.start()
    output = proc.communicate()[0]
    sampler.join()
    print(output, f"[exit status {proc.returncode}]", sep="\n", flush=True)
    return Run(command, proc.returncode, output, samples)


def _clocks(runs: list[Run]) -> tuple[dict, str]:
    """The rows' clock columns (the highest samples: the clocks while the GPU computed, where the run
    also spends time on the host) and the note's account of them."""
    samples = [s for r in runs for s in r.clocks]
    if not samples:
        return {}, "GPU clocks not sampled (no nvidia-smi)"
    sm, mem = zip(*samples)
    return ({"sm_clock_mhz": max(sm), "mem_clock_mhz": max(mem)},
            f"GPU clocks during the run: SM {min(sm)}-{max(sm)} MHz, memory {min(mem)}-{max(mem)} MHz "
            f"({len(samples)} nvidia-smi samples)")


def _problem_columns(code: str, p: Problem, m: parsers.Measured, meta: dict, label: str) -> tuple[dict, str, float]:
    """The problem columns of a row, its metric, and the metric's units in the timed work."""
    kernel = CODES[code].kernel
    if kernel == "spmv":
        return ({"problem": p.case, "code": meta.get("code", ""), "source": meta["source"], "rows": meta["rows"],
                 "cols": meta["cols"], "nnz": meta["nnz"], "work_items": meta["nnz"]}, "GFLOP/s", 2 * meta["nnz"])
    if kernel == "scale":   # Mul reads c and writes b: two arrays of the element size
        return ({"problem": f"n={p.case}", "code": label, "source": "synthetic", "n": p.n, "work_items": p.n}, "GB/s",
                2 * {"fp64": 8, "fp32": 4}[m.precision] * p.n)
    return ({"problem": p.case, "code": label, "source": "synthetic", "n": m.points, "domain": "x".join(map(str, p.domain)),
             "depth": m.depth, "steps": m.steps, "work_items": m.points * m.steps}, "GStencil/s", m.points * m.steps)


def rows(code: str, p: Problem, measured: list[parsers.Measured], runs: list[Run], exe: str, commit: str,
         meta: dict, backend: str, rep: int) -> list[dict]:
    """The raw rows of one run (one per codes.Side) with the run-info columns and a note saying what ran,
    whether it checked itself, how its output was read and the clocks."""
    label = Path(exe).name + (f"@{commit}" if commit else "")
    clocks, clock_note = _clocks(runs)
    info = {**runinfo.describe(backend), **clocks}
    out = []
    for side, m in zip(CODES[code].sides, measured):
        columns, metric, work = _problem_columns(code, p, m, meta, label)
        depth = (f"ran at depth {m.depth} (configured {p.depth}); " if p.depth and m.depth and m.depth != p.depth else "")
        note = (f"{'checked' if m.checked else 'unchecked'}: {m.check}; original {CODES[code].title} "
                f"({exe}, commit {commit or 'not given'}) run as: {' ; '.join(shlex.join(r.command) for r in runs)}; "
                f"{depth}read: {m.normalised}; it printed: {m.printed}; {clock_note}")
        out.append({"kernel": CODES[code].kernel, "impl": side.impl, "unit": side.unit, "role": side.role,
                    "precision": m.precision, "sparsity": "dense", **columns, "warmup": m.warmup, "reps": m.reps,
                    "rep": rep, "t_min_s": m.t_min or m.seconds, "t_median_s": m.seconds, "t_max_s": m.t_max or m.seconds,
                    "t_launch_median_s": m.seconds, "metric": metric, "value": work / m.seconds / 1e9, "note": note,
                    **info})
    return out


def write_matrix(csr_path: str, scratch: Path, name: str) -> tuple[str, dict]:
    """The Matrix Market file of the CSR file `csr_path` (every stored entry, explicit zeros too,
    general symmetry) in `scratch`, and the CSR file's metadata."""
    matrix, meta = csr.load(csr_path)
    path = scratch / f"{name}.mtx"
    scipy.io.mmwrite(path, matrix.tocoo(), symmetry="general")
    return str(path), meta


def run(args) -> None:
    p = Problem(args.case, args.shape, args.dims, args.radius, args.depth,
                tuple(int(v) for v in args.domain.split("x")) if args.domain else (), args.steps, args.n, args.reps)
    scratch = Path(args.scratch).resolve()
    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / "data").mkdir(parents=True)
    meta = {}
    try:
        if args.code == "dasp":
            matrix, meta = write_matrix(args.matrix, scratch, args.case)
            p = replace(p, matrix=matrix)
        runs = [execute(c, scratch) for c in commands(args.code, args.executable, p)]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for r in runs:
        if r.returncode != 0:
            last = (r.output.strip().splitlines() or ["no output"])[-1]
            raise RunFailed(f"{CODES[args.code].title} {args.case}: `{shlex.join(r.command)}` exited with status "
                            f"{r.returncode} ({last.strip()[:200]}); its whole output is in the job's log")
    measured = parsers.parse(args.code, [r.output for r in runs], p, meta.get("nnz", 0))
    result = rows(args.code, p, measured, runs, args.executable, args.commit, meta, args.backend, args.rep)
    measure.write_result(result, args.out)
    record = {"code": args.code, "title": CODES[args.code].title, "case": args.case, "rep": args.rep,
              "executable": args.executable, "commit": args.commit, "sha256": outputs.sha256(args.executable),
              "commands": [shlex.join(r.command) for r in runs], "clocks_mhz": [list(s) for r in runs for s in r.clocks],
              "rows": [{k: row[k] for k in ("impl", "problem", "value", "metric", "note")} for row in result]}
    outputs.write_text(json.dumps(record, indent=2) + "\n", args.record)
    for row in result:
        print(f"{row['impl']:24s} {row['problem']:16s} {row['value']:10.2f} {row['metric']}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Run one original code on one problem; write raw rows.")
    parser.add_argument("--backend", choices=["cuda", "cpu"], required=True, help="for the run-info columns")
    parser.add_argument("--code", choices=list(CODES), required=True)
    parser.add_argument("--case", required=True, help="stencil name, matrix name or 2^k")
    parser.add_argument("--executable", required=True)
    parser.add_argument("--commit", default="", help="the commit the executable was built from")
    parser.add_argument("--matrix", help="SpMV: the workflow's CSR file (.npz)")
    for name in ("dims", "radius", "depth", "steps", "n", "reps"):
        parser.add_argument(f"--{name}", type=int, default=0)
    parser.add_argument("--shape", default="")
    parser.add_argument("--domain", default="", help="e.g. 10240x10240 (slowest axis first)")
    parser.add_argument("--rep", type=int, default=0, help="index of this repetition (the rows' rep)")
    parser.add_argument("--scratch", required=True, help="a folder to run in (created, then removed)")
    parser.add_argument("--out", required=True, help="raw rows CSV (written only when the run succeeded)")
    parser.add_argument("--record", required=True, help="run record JSON (command lines, SHA-256, clocks)")
    try:
        run(parser.parse_args(argv))
    except (RunFailed, parsers.ParseError, parsers.CheckFailed) as err:
        sys.exit(f"error: {err}")


if __name__ == "__main__":
    main()
