"""Where the time of a membound GPU job goes (issue 25; docs/performance.md). Run on the GPU node:

    python tools/time_breakdown.py --profile h100 [--part bench ncu passes] [--budget-s 540]

For one job of each family (SCALE and GEMV: all sizes; SpMV: --matrices, default cant and circuit5M,
surrogates made here; stencils: --stencils, default 2d5pt and 3d27pt), with the config of the profile:
- part bench: the job's first case under tools/breakdown_probe.py with a cold CuPy kernel cache and
  driver JIT cache (fresh CUPY_CACHE_DIR, CUDA_CACHE_PATH), again warm, and the plain command (no
  probe) warm; with several cases, each case's plain command and all cases in one process
  (membound.kernels.batch, where that exists);
- part ncu: the family's counter run (all its cases in one process where batching exists) under
  membound.counters.ncu, the target under the probe: ncu's own calls (--query-metrics, the profiling
  run, --import) and its passes per profiled kernel;
- part passes: ncu's passes per metric of membound.counters.ncu.METRICS, alone and all together, on
  one SCALE launch.
Writes $OUT (default ./out): breakdown.csv (family, job, run, phase, seconds, calls), jobs.csv (wall
time and exit status of every command), passes.csv (kernel, passes); prints the tables. Another
checkout's code (e.g. before issue 25) is measured with its src/ first on PYTHONPATH: the commands
are then that code's, from its registry (docs/performance.md).
"""

import argparse
import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

PY = sys.executable
PROBE = str(Path(__file__).with_name("breakdown_probe.py"))
BACKEND = "cuda"   # --backend cpu tries the tool itself on a machine without a GPU (profile cpu)
START = time.time()
ROWS, JOBS, PASSES = [], [], []


def first(*names):
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(f"none of {names}: run from the membound checkout with its venv")


config, families = first("membound.run.config", "membound.config"), first("membound.families")


def run(family, job, label, command, env, out, budget):
    """Run `command`, record its wall time, and the probe's phases if it ran under the probe."""
    if time.time() - START > budget:
        print(f"skipped (budget of {budget} s spent): {family} {job} {label}", flush=True)
        return
    report = out / "probe.json"
    report.unlink(missing_ok=True)
    t0 = time.time()
    proc = subprocess.run(command, env={**env, "BREAKDOWN_T0": repr(t0)}, capture_output=True, text=True)
    wall = time.time() - t0
    (out / "logs").mkdir(exist_ok=True)
    (out / "logs" / f"{family}-{label}.log").write_text(" ".join(command) + "\n\n" + proc.stdout + proc.stderr)
    JOBS.append({"family": family, "job": job, "run": label, "wall_s": round(wall, 3), "rc": proc.returncode,
                 "command": " ".join(command)})
    print(f"{family:8s} {label:12s} {wall:7.1f} s  rc {proc.returncode}  {job}", flush=True)
    passes = re.findall(r'==PROF== Profiling "([^"]+)".*?(\d+) pass', proc.stdout + proc.stderr)
    PASSES.extend({"family": family, "job": job, "run": label, "kernel": k, "passes": int(p)} for k, p in passes)
    for path, who in ((report, ""), (out / "target.json", "target: ")):
        if path.exists():
            data = json.loads(path.read_text())
            phases = {"process start": data["start"], **data["seconds"]}
            if not who:
                phases["process exit"] = t0 + wall - data["end_epoch"]
            ROWS.extend({"family": family, "job": job, "run": label, "phase": who + name, "seconds": round(s, 4),
                         "calls": data["calls"].get(name, 1)} for name, s in phases.items())
            path.unlink()


def case_args(family, cfg, case, data, counters=False):
    """One case's problem arguments (SpMV: its --matrix first), as the workflow's rule gives them."""
    matrix = ["--matrix", data[case]] if family == "spmv" else []
    return [*matrix, *families.cli_args(family, cfg, case, counters=counters).split()]


def timing(family, cfg, counters=False):
    """The arguments every case of a job shares: backend, repetition, warm-up and timed calls."""
    calls = ["--warmup", "0", "--reps", "1", "--counters"] if counters else [
        "--warmup", str(cfg[family]["warmup"]), "--reps", str(cfg[family]["reps"])]
    return ["--backend", BACKEND, "--rep", "0", *calls]


def bench_command(family, cfg, case, data, out_csv, counters=False):
    """The family CLI of one case: module and arguments."""
    return [f"membound.kernels.{family}", *timing(family, cfg, counters), *case_args(family, cfg, case, data, counters),
            "--out", out_csv]


def batched(cases):
    """`cases`, or the first alone where the code has no batch runner (before issue 25)."""
    return cases if importlib.util.find_spec("membound.kernels.batch") else cases[:1]


def batch_command(family, cfg, cases, data, out_csv, counters=False):
    """All `cases` in one process (membound.kernels.batch, one CSV), or the one case alone."""
    if len(cases) == 1:
        return bench_command(family, cfg, cases[0], data, out_csv, counters)
    groups = [a for c in cases for a in ("--", *case_args(family, cfg, c, data, counters))]
    return ["membound.kernels.batch", family, "--out", out_csv, *timing(family, cfg, counters), *groups]


def matrices(names, cfg, work):
    """Surrogate CSR files of the matrices `names` (as the workflow makes them)."""
    surrogate, csr = first("membound.matrices.surrogate"), first("membound.matrices.csr")
    entries = {m["name"]: m for m in config.load_matrices()}
    out = {}
    for name in names:
        out[name] = str(work / f"{name}.npz")
        csr.save(out[name], *surrogate.generate(entries[name], cfg["spmv"]["surrogate_scale"]))
    return out


def part_bench(family, cases, cfg, data, env, out, work, budget):
    job = " ".join(c or "all sizes" for c in cases)
    caches = {"CUPY_CACHE_DIR": str(work / f"cupy-{family}"), "CUDA_CACHE_PATH": str(work / f"nv-{family}")}
    single = bench_command(family, cfg, cases[0], data, str(work / "rows.csv"))
    for label in ("cold", "warm"):
        run(family, cases[0] or job, label, [PY, PROBE, str(out / "probe.json"), *single], {**env, **caches}, out,
            budget)
    for case in cases:
        plain = [PY, "-m", *bench_command(family, cfg, case, data, str(work / "rows.csv"))]
        run(family, case or job, "plain", plain, {**env, **caches}, out, budget)
    if len(batched(cases)) > 1:
        batch = batch_command(family, cfg, cases, data, str(work / "rows.csv"))
        run(family, job, "batch", [PY, PROBE, str(out / "probe.json"), *batch], {**env, **caches}, out, budget)


def part_ncu(family, cases, cfg, gpu, data, env, out, work, budget):
    cases = batched(cases)
    target = [PY, PROBE, str(out / "target.json"),
              *batch_command(family, cfg, cases, data, str(work / "rows.csv"), counters=True)]
    ncu_args = ["--mma-shape", *map(str, gpu["mma_shape"]), *cfg["ncu"]["options"].split(),
                "--out", str(work / "counters.csv")]
    command = [PY, PROBE, str(out / "probe.json"), "membound.counters.ncu", *ncu_args, "--", *target]
    run(family, " ".join(c or "all sizes" for c in cases), "ncu", command, env, out, budget)


def part_passes(env, out, work, budget):
    ncu = first("membound.counters.ncu")
    scale = [PY, "-m", "membound.kernels.scale", "--backend", BACKEND, "--log2-min", "20", "--log2-max", "20",
             "--warmup", "0", "--reps", "1", "--counters", "--out", str(work / "scale.csv")]
    base = ["ncu", "--nvtx", "--nvtx-include", ncu.NVTX_FILTER, "--launch-count", "1", "--clock-control", "base",
            "--cache-control", "all"]
    run("ncu", "version", "version", ["ncu", "--version"], env, out, budget)
    for metric in [",".join(ncu.METRICS), *ncu.METRICS]:
        label = "all metrics" if "," in metric else metric
        run("passes", label, "passes", [*base, "--metrics", metric, *scale], env, out, budget)


def table(frame, index, columns, values):
    return frame.pivot_table(index=index, columns=columns, values=values, aggfunc="sum", sort=False).round(3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="h100")
    parser.add_argument("--part", nargs="+", choices=["bench", "ncu", "passes"], default=["bench", "ncu", "passes"])
    parser.add_argument("--families", nargs="+", default=["scale", "spmv", "stencil", "gemv"])
    parser.add_argument("--matrices", nargs="+", default=["cant", "circuit5M"])
    parser.add_argument("--stencils", nargs="+", default=["2d5pt", "3d27pt"])
    parser.add_argument("--budget-s", type=float, default=540, help="start no command after this many seconds")
    parser.add_argument("--backend", choices=["cuda", "cpu"], default="cuda")
    args = parser.parse_args()
    global BACKEND
    BACKEND = args.backend
    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="breakdown-"))
    env = dict(os.environ)
    blocks = families.config_blocks() if hasattr(families, "config_blocks") else None   # registries since issue 22
    cfg, _ = config.assemble([f"profiles/{args.profile}/membound.yaml"], {}, **({"blocks": blocks} if blocks else {}))
    gpu = config.load_gpu(cfg["gpu"])
    cases = {"scale": [None], "gemv": [None], "spmv": args.matrices, "stencil": args.stencils}
    data = matrices(args.matrices, cfg, work) if "spmv" in args.families and {"bench", "ncu"} & set(args.part) else {}
    try:
        for family in args.families:
            if "bench" in args.part:
                part_bench(family, cases[family], cfg, data, env, out, work, args.budget_s)
            if "ncu" in args.part and shutil.which("ncu"):
                part_ncu(family, cases[family], cfg, gpu, data, env, out, work, args.budget_s)
        if "passes" in args.part and shutil.which("ncu"):
            part_passes(env, out, work, args.budget_s)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        write(out)


def write(out):
    rows, jobs, passes = pd.DataFrame(ROWS), pd.DataFrame(JOBS), pd.DataFrame(PASSES)
    for frame, name in ((rows, "breakdown.csv"), (jobs, "jobs.csv"), (passes, "passes.csv")):
        frame.to_csv(out / name, index=False)
    pd.set_option("display.width", 200, "display.max_rows", 500, "display.max_columns", 20)
    if not jobs.empty:
        table_ = jobs[["family", "run", "job", "wall_s", "rc"]].to_string(index=False)
        print("\n== wall time per command (s)\n" + table_)
    for family, part in (rows.groupby("family", sort=False) if not rows.empty else []):
        print(f"\n== {family}: seconds per phase (exclusive)\n" + table(part, "phase", "run", "seconds").to_string())
    if not passes.empty:
        print("\n== ncu passes per profiled kernel\n" +
              passes.groupby(["family", "job", "kernel"], sort=False)["passes"].agg(["count", "max"]).to_string())
    print(f"\nwritten: {out}/breakdown.csv, jobs.csv, passes.csv")


if __name__ == "__main__":
    main()
