"""Nsight Compute (ncu): run a benchmark CLI under ncu on its NVTX-tagged launches only, and turn
ncu's raw CSV into one row per (launch tag, kernel name).

Only kernels inside a push/pop range named "membound:<kernel>:<impl>:<problem>"
(measure.launch_tag) are profiled, with a minimal metric list (METRICS) and a bounded launch count.
Achieved work and traffic per row:
- FP64 FLOPs = dadd + dmul + 2 dfma thread instructions + FP64 tensor-path FLOPs;
- FP64 tensor-path FLOPs = sm__ops_path_tensor_src_fp64.sum, one unit = one FLOP (checked on the H100
  with cuBLAS DGEMMs, docs/counters.md); on a GPU without that counter, DMMA warp instructions x
  2 m n k of the GPU spec's mma_shape (exact where the GPU has one FP64 MMA shape, as the A100);
- DRAM bytes read + written, L2 (lts__t_bytes) and L1 (l1tex__t_bytes) bytes; time gpu__time_duration.

Launches of one kernel name inside one tag are summed (a stencil's timed call is steps/depth
launches of one kernel). The "main" row of a tag sums every kernel of membound's own .cu sources in
it (the tensor-core SpMV is two kernels); in a tag with none (a library call) the kernel name with
the most time is "main". Any other kernel (a library's helper, e.g. cuSPARSE's partition kernel)
keeps a row of its own with part "helper".
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import pandas as pd

from membound.outputs import write_csv

KERNELS = Path(__file__).parents[1] / "kernels"   # membound's own CUDA sources (read, not imported)
METRICS = {  # ncu metric -> column of the parsed launches
    "gpu__time_duration.sum": "time_ns",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum": "dadd",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum": "dmul",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": "dfma",
    "sm__ops_path_tensor_src_fp64.sum": "tensor_fp64_ops",
    "sm__inst_executed_pipe_tensor_op_dmma.sum": "dmma_inst",
    "dram__bytes_read.sum": "dram_read",
    "dram__bytes_write.sum": "dram_write",
    "lts__t_bytes.sum": "l2_bytes",
    "l1tex__t_bytes.sum": "l1_bytes",
}
OPTIONAL = {"sm__ops_path_tensor_src_fp64.sum"}   # newer GPUs only; DMMA instructions stand in for it
NVTX_FILTER = "regex:membound:.*/"                  # every push/pop range whose name starts membound:
TAG = re.compile(r"membound:([A-Za-z0-9_.\-]+):([A-Za-z0-9_.\-]+):([A-Za-z0-9_.\-]+)")
PERMISSION_FIX = ("GPU performance counters are not permitted for this user (ERR_NVGPUCTRPERM): run the "
                  "counter jobs as root, or let all users profile (driver option "
                  "NVreg_RestrictProfilingToAdminUsers=0, https://developer.nvidia.com/ERR_NVGPUCTRPERM), "
                  "or set `counters: false` in config/config.yaml to run `all` without counters")
COLUMNS = ["tag", "kernel", "impl", "problem", "kernel_name", "part", "launches", "time_s",
           "dadd", "dmul", "dfma", "tensor_fp64_ops", "dmma_inst", "flops_cuda_core", "flops_tensor", "flops",
           "tensor_flops_from", "dram_read", "dram_write", "dram_bytes", "l2_bytes", "l1_bytes",
           "profiler", "clock_control", "cache_control"]


class CounterError(RuntimeError):
    """The profiler is absent, not permitted, or profiled nothing: the message says how to fix it."""


# ------------------------------------------------------------------------------------ parsing


def _read_raw(source) -> pd.DataFrame:
    """ncu's `--csv --page raw --print-units base` output (path or text) without its units row."""
    text = Path(source).read_text() if not isinstance(source, str) or "\n" not in source else source
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    return frame[frame["ID"].str.strip() != ""]


def _number(series: pd.Series) -> pd.Series:
    return pd.to_numeric(series.str.replace(",", "", regex=False).replace("", "nan"), errors="raise")


def parse_launches(source) -> pd.DataFrame:
    """One row per profiled launch: id, tag, kernel, impl, problem, kernel_name and METRICS columns
    (NaN where a metric was not collected). A launch outside any membound range is an error."""
    raw = _read_raw(source)
    nvtx = [c for c in raw.columns if "Push/Pop_Range" in c]
    if not nvtx:
        raise CounterError("ncu CSV has no NVTX push/pop column: profile with --nvtx (membound.counters.ncu does)")
    out = pd.DataFrame({"id": raw["ID"].astype(int), "kernel_name": raw["Kernel Name"]})
    tags = [TAG.findall(text) for text in raw[nvtx[0]]]
    if not all(tags):
        bad = raw["Kernel Name"][[not t for t in tags]].iloc[0]
        raise CounterError(f"ncu profiled kernel '{bad}' outside any membound:* NVTX range; "
                           f"profile with --nvtx-include '{NVTX_FILTER}'")
    innermost = [t[-1] for t in tags]
    out["tag"] = [f"membound:{k}:{i}:{p}" for k, i, p in innermost]
    out["kernel"], out["impl"], out["problem"] = zip(*innermost)
    for metric, column in METRICS.items():
        out[column] = _number(raw[metric]) if metric in raw.columns else float("nan")
    return out


@cache
def own_kernels() -> frozenset[str]:
    """Names of the kernels that membound's own CUDA sources define (src/membound/kernels/*.cu)."""
    pattern = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(")
    return frozenset(name for cu in KERNELS.glob("*.cu") for name in pattern.findall(cu.read_text()))


def summarize(launches: pd.DataFrame, mma_shape=(8, 8, 4), clock_control="base", cache_control="all") -> pd.DataFrame:
    """Per (tag, kernel name): launches summed, FP64 FLOPs and bytes, part main | helper (COLUMNS)."""
    sums = [c for c in METRICS.values()]
    launches = launches.copy()
    own = launches["kernel_name"].isin(own_kernels())
    joined = launches[own].groupby("tag")["kernel_name"].agg(lambda s: " + ".join(sorted(set(s))))
    launches.loc[own, "kernel_name"] = launches.loc[own, "tag"].map(joined)
    grouped = (launches.groupby(["tag", "kernel", "impl", "problem", "kernel_name"], sort=False)
               .agg(launches=("id", "size"), **{c: (c, lambda s: s.sum(min_count=1)) for c in sums}).reset_index())
    m, n, k = mma_shape
    has_ops = grouped["tensor_fp64_ops"].notna()
    grouped["flops_tensor"] = grouped["tensor_fp64_ops"].where(has_ops, grouped["dmma_inst"] * 2 * m * n * k)
    grouped["tensor_flops_from"] = ["sm__ops_path_tensor_src_fp64 (1 FLOP per unit)" if ok
                                    else f"DMMA instructions x {2 * m * n * k} (m{m}n{n}k{k})" for ok in has_ops]
    grouped["flops_cuda_core"] = grouped["dadd"] + grouped["dmul"] + 2 * grouped["dfma"]
    grouped["flops"] = grouped["flops_cuda_core"] + grouped["flops_tensor"]
    grouped["dram_bytes"] = grouped["dram_read"] + grouped["dram_write"]
    grouped["time_s"] = grouped["time_ns"] / 1e9
    mine = grouped["kernel_name"].isin(set(joined))
    top = grouped.groupby("tag", sort=False)["time_ns"].transform("max")
    has_own = grouped["tag"].isin(set(joined.index))
    grouped["part"] = ["main" if m or (not h and t == mx) else "helper"
                       for m, h, t, mx in zip(mine, has_own, grouped["time_ns"], top)]
    dup = grouped[grouped["part"] == "main"].duplicated("tag")
    grouped.loc[dup[dup].index, "part"] = "helper"      # a tie: the first kernel name stays main
    grouped["profiler"], grouped["clock_control"], grouped["cache_control"] = "ncu", clock_control, cache_control
    return grouped[COLUMNS]


# ------------------------------------------------------------------------------------ running


def _ncu(ncu: str, args: list[str], what: str) -> subprocess.CompletedProcess:
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


def profile(command: list[str], mma_shape, clock_control="base", cache_control="all", launch_count=1000,
            ncu: str | None = None) -> pd.DataFrame:
    """Run `command` under ncu and return summarize()'s rows; CounterError with the fix on failure."""
    ncu = ncu or shutil.which("ncu")
    if not ncu:
        raise CounterError("ncu (Nsight Compute) is not on PATH: install the CUDA toolkit's Nsight Compute and put "
                           "its folder on PATH, or set `counters: false` in config/config.yaml")
    metrics = metric_list(available_metrics(ncu))
    with tempfile.TemporaryDirectory() as tmp:
        report = str(Path(tmp) / "report")
        run = _ncu(ncu, [*profile_args(metrics, report, clock_control, cache_control, launch_count), *command],
                   "profiling " + " ".join(command[:4]))
        sys.stderr.write(run.stdout + run.stderr)
        if not Path(report + ".ncu-rep").exists():
            raise CounterError(f"ncu profiled no kernel inside a membound:* NVTX range while running {' '.join(command)}; "
                               "does the benchmark support --counters?")
        csv = _ncu(ncu, ["--import", report + ".ncu-rep", "--csv", "--page", "raw", "--print-units", "base"],
                   "--import").stdout
    return summarize(parse_launches(csv), mma_shape, clock_control, cache_control)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run a benchmark CLI under ncu; write per-kernel achieved counters.",
                                     usage="%(prog)s --out F.csv [options] -- python -m membound.kernels.X ... --counters")
    parser.add_argument("--out", required=True, help="counter CSV (one row per launch tag and kernel name)")
    parser.add_argument("--mma-shape", type=int, nargs=3, default=[8, 8, 4], metavar=("M", "N", "K"),
                        help="FP64 MMA shape, used only where ncu lacks the FP64 tensor-path op counter")
    parser.add_argument("--clock-control", default="base", choices=["base", "none", "reset"])
    parser.add_argument("--cache-control", default="all", choices=["all", "none"])
    parser.add_argument("--launch-count", type=int, default=1000, help="at most this many launches are profiled")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the benchmark command line")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the benchmark command after --")
    try:
        rows = profile(command, tuple(args.mma_shape), args.clock_control, args.cache_control, args.launch_count)
    except CounterError as err:
        sys.exit(f"error: {err}")
    write_csv(rows, args.out)


if __name__ == "__main__":
    main()
