"""Nsight Compute (ncu): run a benchmark CLI under ncu on its NVTX-tagged launches only, and turn
ncu's CSV into one row per (launch tag, kernel name).

Reading ncu's CSV (its two layouts) is ncu_csv.py.

Only kernels inside a push/pop range named "membound:<kernel>:<impl>:<problem>[:<precision>]"
(measure.launch_tag; no precision part: fp64) are profiled, with a minimal metric list (METRICS) and
a bounded launch count. Achieved work and traffic per row:
- CUDA-core FLOPs in every precision = add + mul + 2 fma thread instructions, summed over FP64
  (dadd, dmul, dfma), FP32 (fadd, fmul, ffma) and FP16 (hadd, hmul, hfma; ncu's half-precision
  roofline counts them so, the packed HADD2/HMUL2/HFMA2 included);
- tensor-path FLOPs (membound.counters.mma): FP64 from sm__ops_path_tensor_src_fp64, one unit = one
  FLOP (checked on the H100 with cuBLAS DGEMMs, docs/counters.md), else DMMA warp instructions x
  2 m n k; TF32, FP16 and BF16 from their op counters, or HMMA warp instructions x 2 m n k, of each
  kernel's own instruction shape in the launch's precision, never one factor for all;
- DRAM bytes read + written, L2 (lts__t_bytes) and L1 (l1tex__t_bytes) bytes; time gpu__time_duration.

Launches of one kernel name inside one tag are summed (a stencil's timed call is steps/depth
launches of one kernel). The "main" row of a tag sums every kernel of membound's own .cu sources in
it (the tensor-core SpMV is two kernels); in a tag with none (a library call) the kernel that moves
the most DRAM bytes is "main" (main_parts). Any other kernel (a library's helper, e.g. cuSPARSE's
partition kernel) keeps a row of its own with part "helper".
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from membound.counters import mma
from membound.counters.ncu_csv import CUDA_CORE_OPS, METRICS, NVTX_FILTER, CounterError, parse_launches
from membound.counters.rows import COLUMNS, SCHEMA
from membound.model.precision import FORMATS, PRECISIONS
from membound.run import raw
from membound.run.outputs import write_csv

# Not on every GPU: where missing, tensor FLOPs come from instruction counts (membound.counters.mma)
OPTIONAL = {*(f"{f.ncu_tensor}.sum" for f in FORMATS.values()), "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum",
            "smsp__inst_executed.sum"}
PERMISSION_FIX = ("GPU performance counters are not permitted for this user (ERR_NVGPUCTRPERM): run the "
                  "counter jobs as root, or let all users profile (driver option "
                  "NVreg_RestrictProfilingToAdminUsers=0, https://developer.nvidia.com/ERR_NVGPUCTRPERM), "
                  "or set `counters: false` in config/config.yaml to run `all` without counters")


def summarize(launches: pd.DataFrame, mma_shapes=None, clock_control="base", cache_control="all") -> pd.DataFrame:
    """Per (tag, kernel name): launches summed, FLOPs of every precision and bytes, part main | helper
    (COLUMNS). `mma_shapes`: precision -> the spec's MMA shape, assumed for a kernel whose own shape
    is unknown (membound.counters.mma)."""
    sums = [*METRICS.values(), "flops_tensor"]
    launches = launches.copy()
    launches["precision"] = launches["precision"] if "precision" in launches else "fp64"
    launches["flops_tensor"], launches["tensor_flops_from"] = mma.tensor_flops(launches, mma_shapes or {})
    own = launches["kernel_name"].map(mma.base_name).isin(mma.own_kernels())
    joined = launches[own].groupby("tag")["kernel_name"].agg(lambda s: " + ".join(sorted(set(s))))
    launches.loc[own, "kernel_name"] = launches.loc[own, "tag"].map(joined)
    grouped = (launches.groupby(["tag", "kernel", "impl", "problem", "precision", "kernel_name"], sort=False)
               .agg(launches=("id", "size"), **{c: (c, lambda s: s.sum(min_count=1)) for c in sums},
                    tensor_flops_from=("tensor_flops_from", lambda s: "; ".join(dict.fromkeys(s)))).reset_index())
    grouped["flops_cuda_core"] = cuda_core_flops(grouped)
    grouped["flops"] = grouped["flops_cuda_core"] + grouped["flops_tensor"]
    grouped["dram_bytes"] = grouped["dram_read"] + grouped["dram_write"]
    grouped["time_s"] = grouped["time_ns"] / 1e9
    grouped["part"] = main_parts(grouped)
    grouped["profiler"], grouped["clock_control"], grouped["cache_control"] = "ncu", clock_control, cache_control
    return grouped[COLUMNS]


def cuda_core_flops(rows: pd.DataFrame) -> pd.Series:
    """CUDA-core FLOPs per row: add + mul + 2 fma thread instructions of every precision (a precision
    not collected counts nothing), the HFMA thread instructions less 32 per HFMA2.MMA warp
    instruction: register moves and constants the compiler issues on the tensor pipe, which ncu also
    counts as half FMAs (every HFMA of the tensor-core SpMV's CUDA-core twin, which has no half
    arithmetic, is one of them)."""
    ops = rows.assign(hfma=(rows["hfma"] - 32 * rows["hfma2_mma_inst"].fillna(0)).clip(lower=0))
    per_type = pd.concat([ops[a] + ops[m] + 2 * ops[f] for a, m, f in CUDA_CORE_OPS.values()], axis=1)
    return per_type.sum(axis=1, min_count=1)


def main_parts(rows: pd.DataFrame) -> list[str]:
    """Each row's part, main | helper, per tag: the row of membound's own kernels (their joined names)
    where the tag has one, else the kernel that moves the most DRAM bytes (time where bytes are
    missing; the first on a tie): a library's setup kernel can take as long as its compute kernel on a
    small problem (cuSPARSE's csr_partition_kernel beside csrmv_v3_kernel on dc2)."""
    own = rows["kernel_name"].map(lambda name: all(mma.base_name(k) in mma.own_kernels()
                                                   for k in str(name).split(" + ")))
    size = rows["dram_bytes"].fillna(rows["time_s"]).fillna(-1.0)
    rank = pd.DataFrame({"tag": rows["tag"].to_numpy(), "own": own.to_numpy(), "size": size.to_numpy()})
    main = set(rank.sort_values(["own", "size"], ascending=False, kind="stable").drop_duplicates("tag").index)
    return ["main" if i in main else "helper" for i in range(len(rows))]


def read_rows(paths) -> pd.DataFrame | None:
    """The counter rows (COLUMNS) of the CSVs `paths` that `main` wrote, checked and completed
    (membound.run.raw, later_columns), one frame; None without paths. Each tag's main kernel and its CUDA-core FLOPs are taken by today's rules (main_parts,
    cuda_core_flops) from the counts, whatever the run wrote."""
    if not paths:
        return None
    rows = raw.read_all(paths, SCHEMA)
    rows["part"] = main_parts(rows)
    rows["flops_cuda_core"] = cuda_core_flops(rows)
    rows["flops"] = rows["flops_cuda_core"] + rows["flops_tensor"]
    return rows


# ------------------------------------------------------------------------------------ running


def _ncu(ncu: str, args: list[str], what: str, echo: bool = False) -> subprocess.CompletedProcess:
    """Run ncu with `args`; echo: each line of its output also to stderr as it comes (the profiled
    run's progress, so that a long counter job's log shows where it is while it runs)."""
    if echo:
        with subprocess.Popen([ncu, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as pipe:
            lines = []
            for line in pipe.stdout:
                sys.stderr.write(line)
                sys.stderr.flush()
                lines.append(line)
        proc = subprocess.CompletedProcess(pipe.args, pipe.returncode, "".join(lines), "")
    else:
        proc = subprocess.run([ncu, *args], capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    if "ERR_NVGPUCTRPERM" in text:
        raise CounterError(PERMISSION_FIX)
    if proc.returncode != 0:
        tail = " | ".join(text.strip().splitlines()[-3:])
        raise CounterError(f"ncu {what} failed (exit {proc.returncode}): {tail}")
    return proc


def available_metrics(ncu: str = "ncu") -> set[str]:
    """Base names of the metrics ncu offers on this machine's GPU (`ncu --query-metrics`)."""
    out = _ncu(ncu, ["--query-metrics"], "--query-metrics").stdout
    return {line.split()[0] for line in out.splitlines() if line.strip() and "__" in line.split()[0]}


def metric_list(available: set[str]) -> list[str]:
    """METRICS this GPU offers; CounterError naming any required one it lacks."""
    missing = [m for m in METRICS if m.rsplit(".", 1)[0] not in available]
    required = [m for m in missing if m not in OPTIONAL]
    if required:
        raise CounterError(f"ncu on this GPU lacks the metrics {required}; set `counters: false` in config/config.yaml")
    return [m for m in METRICS if m not in missing]


def profile_args(metrics: list[str], report: str, clock_control: str, cache_control: str,
                 launch_count: int) -> list[str]:
    """ncu arguments: NVTX-filtered launches only, minimal metrics, recorded clock and cache control."""
    return ["--nvtx", "--nvtx-include", NVTX_FILTER, "--metrics", ",".join(metrics),
            "--clock-control", clock_control, "--cache-control", cache_control,
            "--launch-count", str(launch_count), "--force-overwrite", "--export", report]


def profile(command: list[str], mma_shapes, clock_control="base", cache_control="all", launch_count=1000,
            ncu: str | None = None) -> pd.DataFrame:
    """Run `command` under ncu and return summarize()'s rows; CounterError with the fix on failure."""
    ncu = ncu or shutil.which("ncu")
    if not ncu:
        raise CounterError("ncu (Nsight Compute) is not on PATH: install the CUDA toolkit's Nsight Compute and put "
                           "its folder on PATH, or set `counters: false` in config/config.yaml")
    metrics = metric_list(available_metrics(ncu))
    with tempfile.TemporaryDirectory() as tmp:
        report = str(Path(tmp) / "report")
        _ncu(ncu, [*profile_args(metrics, report, clock_control, cache_control, launch_count), *command],
             "profiling " + " ".join(command[:4]), echo=True)
        if not Path(report + ".ncu-rep").exists():
            raise CounterError(f"ncu profiled no kernel inside a membound:* NVTX range while running {' '.join(command)}; "
                               "does the benchmark support --counters?")
        csv = _ncu(ncu, ["--import", report + ".ncu-rep", "--csv", "--page", "raw", "--print-units", "base"],
                   "--import").stdout
    return summarize(parse_launches(csv), mma_shapes, clock_control, cache_control)


def mma_shape_arg(text: str) -> tuple[str, tuple[int, int, int]]:
    """'fp32=16x8x8' -> ('fp32', (16, 8, 8)), for --mma-shapes."""
    precision, _, shape = text.partition("=")
    dims = shape.split("x")
    if precision not in PRECISIONS or len(dims) != 3 or not all(d.isdigit() and int(d) > 0 for d in dims):
        raise argparse.ArgumentTypeError(f"'{text}': use <precision>=MxNxK with precision one of "
                                         f"{', '.join(PRECISIONS)}, e.g. fp32=16x8x8")
    return precision, tuple(map(int, dims))


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run a benchmark CLI under ncu; write per-kernel achieved counters.",
                                     usage="%(prog)s --out F.csv [options] -- python -m membound.kernels.X ... --counters")
    parser.add_argument("--out", required=True, help="counter CSV (one row per launch tag and kernel name)")
    parser.add_argument("--mma-shapes", nargs="+", default=[], type=mma_shape_arg, metavar="P=MxNxK",
                        help="MMA shape per precision, assumed where a kernel's own shape is unknown (and, for "
                             "fp64, ncu lacks the tensor-path op counter): the spec's (config/gpus/*.yaml mma)")
    parser.add_argument("--clock-control", default="base", choices=["base", "none", "reset"])
    parser.add_argument("--cache-control", default="all", choices=["all", "none"])
    parser.add_argument("--launch-count", type=int, default=1000, help="at most this many launches are profiled")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the benchmark command line")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the benchmark command after --")
    try:
        rows = profile(command, dict(args.mma_shapes), args.clock_control, args.cache_control, args.launch_count)
    except CounterError as err:
        sys.exit(f"error: {err}")
    write_csv(rows, args.out, record=True)


if __name__ == "__main__":
    main()
