"""Nsight Compute (ncu): run a benchmark CLI under ncu on its NVTX-tagged launches only, and turn
ncu's CSV into one row per (launch tag, kernel name).

Reading ncu's CSV (its two layouts) is ncu_csv.py.

Only kernels inside a push/pop range named "membound:<kernel>:<impl>:<problem>"
(measure.launch_tag) are profiled, with a minimal metric list (METRICS) and a bounded launch count.
Achieved work and traffic per row:
- FP64 FLOPs = dadd + dmul + 2 dfma thread instructions + FP64 tensor-path FLOPs;
- FP64 tensor-path FLOPs = sm__ops_path_tensor_src_fp64.sum, one unit = one FLOP (checked on the H100
  with cuBLAS DGEMMs, docs/counters.md); on a GPU without that counter, DMMA warp instructions x
  2 m n k of each kernel's own instruction shape (dmma_shape: m8n8k4 = 512 FLOPs, m16n8k4 = 1024,
  m16n8k8 = 2048, m16n8k16 = 4096), never one factor for all;
- DRAM bytes read + written, L2 (lts__t_bytes) and L1 (l1tex__t_bytes) bytes; time gpu__time_duration.

Launches of one kernel name inside one tag are summed (a stencil's timed call is steps/depth
launches of one kernel). The "main" row of a tag sums every kernel of membound's own .cu sources in
it (the tensor-core SpMV is two kernels); in a tag with none (a library call) the kernel name with
the most time is "main". Any other kernel (a library's helper, e.g. cuSPARSE's partition kernel)
keeps a row of its own with part "helper".
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import pandas as pd

from membound.counters.ncu_csv import METRICS, NVTX_FILTER, CounterError, parse_launches
from membound.run.outputs import write_csv

KERNELS = Path(__file__).parents[1] / "kernels"   # membound's own CUDA sources (read, not imported)
OPTIONAL = {"sm__ops_path_tensor_src_fp64.sum"}   # newer GPUs only; DMMA instructions stand in for it
PERMISSION_FIX = ("GPU performance counters are not permitted for this user (ERR_NVGPUCTRPERM): run the "
                  "counter jobs as root, or let all users profile (driver option "
                  "NVreg_RestrictProfilingToAdminUsers=0, https://developer.nvidia.com/ERR_NVGPUCTRPERM), "
                  "or set `counters: false` in config/config.yaml to run `all` without counters")
COLUMNS = ["tag", "kernel", "impl", "problem", "kernel_name", "part", "launches", "time_s",
           "dadd", "dmul", "dfma", "tensor_fp64_ops", "dmma_inst", "flops_cuda_core", "flops_tensor", "flops",
           "tensor_flops_from", "dram_read", "dram_write", "dram_bytes", "l2_bytes", "l1_bytes",
           "profiler", "clock_control", "cache_control"]


KERNEL = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(")
MMA_F64 = re.compile(r"mma\.sync\.aligned\.m(\d+)n(\d+)k(\d+)\.[a-z.]*f64")   # PTX FP64 MMA in our sources
LIBRARY_SHAPE = re.compile(r"tensor(\d+)x(\d+)x(\d+)")        # cuBLAS/CUTLASS names: ..._tensor16x8x8_...
INCLUDE = re.compile(r'^#include "([\w.]+\.cuh)"$', re.MULTILINE)  # a source's local headers


@cache
def own_shapes() -> dict[str, tuple[int, int, int] | None]:
    """Each kernel that membound's own CUDA sources define (src/membound/kernels/*.cu) -> the FP64
    MMA shape its source file (with its headers) uses (None where it uses none or several)."""
    out = {}
    for cu in KERNELS.glob("*.cu"):
        text = cu.read_text()
        text += "".join((KERNELS / h).read_text() for h in INCLUDE.findall(text))
        shapes = {tuple(map(int, s)) for s in MMA_F64.findall(text)}
        out.update({name: next(iter(shapes)) if len(shapes) == 1 else None for name in KERNEL.findall(text)})
    return out


def own_kernels() -> frozenset[str]:
    """Names of the kernels that membound's own CUDA sources define."""
    return frozenset(own_shapes())


def dmma_shape(kernel_name: str, fallback) -> tuple[tuple[int, int, int] | None, str]:
    """The FP64 MMA shape (m, n, k) of one DMMA instruction of `kernel_name` and where it comes from:
    our own source's mma.sync, a library kernel's name (tensorMxNxK), else `fallback` (the spec's
    mma_shape: exact only on a GPU with one FP64 MMA shape, as the A100's m8n8k4; None: unknown)."""
    if own_shapes().get(kernel_name):
        return own_shapes()[kernel_name], "its source's mma.sync"
    if match := LIBRARY_SHAPE.search(kernel_name):
        return tuple(map(int, match.groups())), "its name"
    return (tuple(fallback), "the spec's mma_shape, assumed") if fallback else (None, "unknown")


def tensor_flops(launches: pd.DataFrame, mma_shape) -> tuple[pd.Series, list[str]]:
    """Per launch: FP64 tensor-path FLOPs (the ops counter, else DMMA instructions x 2 m n k of the
    kernel's own shape, dmma_shape) and where they come from."""
    has_ops = launches["tensor_fp64_ops"].notna()
    shapes = [dmma_shape(name, mma_shape) for name in launches["kernel_name"]]
    per = pd.Series([2 * m * n * k if s else float("nan") for s, _ in shapes for m, n, k in [s or (0, 0, 0)]],
                    index=launches.index)
    from_dmma = (launches["dmma_inst"] * per).where(launches["dmma_inst"] != 0, 0.0)
    how = ["sm__ops_path_tensor_src_fp64 (1 FLOP per unit)" if ok else
           f"DMMA instructions x {2 * s[0] * s[1] * s[2]} (m{s[0]}n{s[1]}k{s[2]}, {why})" if s else
           f"DMMA instructions of unknown shape ({why}): not counted"
           for ok, (s, why) in zip(has_ops, shapes)]
    return launches["tensor_fp64_ops"].where(has_ops, from_dmma), how


def summarize(launches: pd.DataFrame, mma_shape=(8, 8, 4), clock_control="base", cache_control="all") -> pd.DataFrame:
    """Per (tag, kernel name): launches summed, FP64 FLOPs and bytes, part main | helper (COLUMNS).
    `mma_shape`: the FP64 MMA shape assumed for a kernel whose own shape is unknown (dmma_shape)."""
    sums = [*METRICS.values(), "flops_tensor"]
    launches = launches.copy()
    launches["flops_tensor"], launches["tensor_flops_from"] = tensor_flops(launches, mma_shape)
    own = launches["kernel_name"].isin(own_kernels())
    joined = launches[own].groupby("tag")["kernel_name"].agg(lambda s: " + ".join(sorted(set(s))))
    launches.loc[own, "kernel_name"] = launches.loc[own, "tag"].map(joined)
    grouped = (launches.groupby(["tag", "kernel", "impl", "problem", "kernel_name"], sort=False)
               .agg(launches=("id", "size"), **{c: (c, lambda s: s.sum(min_count=1)) for c in sums},
                    tensor_flops_from=("tensor_flops_from", lambda s: "; ".join(dict.fromkeys(s)))).reset_index())
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


def read_rows(paths) -> pd.DataFrame | None:
    """The counter rows (COLUMNS) of the CSVs `paths` that `main` wrote, one frame; None without paths."""
    return pd.concat([pd.read_csv(p) for p in paths], ignore_index=True) if paths else None


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
                        help="FP64 MMA shape assumed where ncu lacks the FP64 tensor-path op counter and a "
                             "kernel's own shape is unknown (exact on a GPU with one FP64 shape, as the A100)")
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
