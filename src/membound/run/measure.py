"""The one place that times kernels and shapes a benchmark's result rows.

Policy (as BabelStream): warm-up launches are excluded; each timed launch is measured on its own
(CUDA events on a GPU, perf_counter on the CPU); min, median, max and the coefficient of
variation are kept. Short kernels (a median launch under SHORT_S) are then timed again without
the launch overhead, as a CUDA graph of many launches over the same resident data (`time_kernel`);
their per-launch median stays in the column t_launch_median_s. Every result row has the columns of
ROW_COLUMNS, in that order, so that every later stage reads one schema.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from membound.run import outputs

# Columns of every raw benchmark CSV (results/<gpu>/raw/...): what was run, how it was timed,
# what it achieved, and where (the run-info columns of membound.run.runinfo.describe()).
ROW_COLUMNS = [
    "kernel",        # scale | spmv | stencil
    "impl",          # implementation, e.g. cuda_core, tensor_core, cusparse_csr, dasp_tc, numpy
    "unit",          # cuda_core | tensor_core: the unit the paper compares (emulated on the CPU)
    "role",          # the paper's baseline this plays (STREAM, cuSPARSE, DASP, Brick, EBISU, ConvStencil)
    "precision",     # fp64 | fp32 | fp16: the storage format (membound.model.precision; tensor cores: f64, tf32, f16 MMA)
    "sparsity",      # dense | 2:4 (sparse tensor cores)
    "problem",       # n=2^k | matrix name | stencil name
    "code",          # D1..D21 for matrices, else empty
    "source",        # real | surrogate | synthetic
    "n", "rows", "cols", "nnz",    # problem size (elements; matrix shape)
    "domain", "depth", "steps",    # stencils: domain 'AxB[xC]', temporal depth t, time steps per run
    "work_items",    # elements (scale), nnz (spmv), interior points x steps (stencil)
    "mma",           # MMA instructions per run by the implementation's plan (tensor-core SpMV), else empty
    "warmup", "reps",
    "rep",           # index of the independent repetition (one process each; config `repeats`), from 0
    "t_min_s", "t_median_s", "t_max_s", "cv",
    "t_launch_median_s",  # median of launches timed one by one (for short kernels the t_* are graph-timed)
    "metric", "value",             # GB/s | GFLOP/s | GStencil/s, from the median time
    "rel_err",       # ||out - ref|| / ||ref|| of the checked output
    "note",          # anything a reader must know (e.g. what the timed region holds)
    "device", "device_index", "device_uuid",  # the GPU's name, nvidia-smi index and UUID on its node
    "vendor", "driver", "runtime", "cupy", "numpy", "sm_clock_mhz", "mem_clock_mhz",
    "l2_bytes", "host", "slurm_job", "date", "membound", "commit",
]


def with_later_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Raw rows written before a column existed, completed: `rep` 0 (one repetition), and
    `t_launch_median_s` = `t_median_s` (those runs timed every launch alone), `slurm_job` empty (not
    recorded), `precision` fp64 and `sparsity` dense (all there was), `device_index` and `device_uuid`
    empty (not recorded). Other rows unchanged."""
    if "precision" not in frame:
        frame = frame.assign(precision="fp64")
    if "sparsity" not in frame:
        frame = frame.assign(sparsity="dense")
    if "rep" not in frame:
        frame = frame.assign(rep=0)
    if "t_launch_median_s" not in frame and "t_median_s" in frame:
        frame = frame.assign(t_launch_median_s=frame["t_median_s"])
    for column in ("slurm_job", "device_index", "device_uuid"):
        if column not in frame:
            frame = frame.assign(**{column: None})
    return frame


def stats(seconds) -> dict:
    """min, median, max and coefficient of variation of per-launch times (seconds)."""
    t = np.asarray(seconds, dtype=float)
    return {"t_min_s": t.min(), "t_median_s": float(np.median(t)), "t_max_s": t.max(),
            "cv": float(t.std() / t.mean()) if t.mean() > 0 else 0.0, "reps": len(t)}


def geomean(values) -> float:
    """Geometric mean of the finite values (NaN if there are none)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(np.exp(np.log(v).mean())) if v.size else float("nan")


def time_cpu(run: Callable[[], object], warmup: int, reps: int) -> list[float]:
    """Per-call wall times of `run` on the host, after `warmup` untimed calls."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def time_gpu(run: Callable[[], object], warmup: int, reps: int) -> list[float]:
    """Per-launch device times of `run` (CUDA events around each call), after `warmup` calls."""
    import cupy as cp

    for _ in range(warmup):
        run()
    cp.cuda.Device().synchronize()
    events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    for start, stop in events:
        start.record()
        run()
        stop.record()
    events[-1][1].synchronize()
    return [cp.cuda.get_elapsed_time(a, b) / 1e3 for a, b in events]


SHORT_S = 50e-6          # a kernel whose median launch is shorter is timed as a CUDA graph
GRAPH_SAMPLE_S = 2e-3    # device time aimed at per graph replay (one timed sample)
GRAPH_LAUNCHES = (10, 1000)


@dataclass
class Timing:
    seconds: list[float]   # per-launch times of the timed samples
    launch_median: float   # median of launches timed one by one
    note: str              # how the samples were taken, when not one launch each


def time_kernel(run: Callable[[], object], backend: str, warmup: int, reps: int, short: bool = True) -> Timing:
    """Per-launch times of `run`: on the CPU per call; on a GPU per launch with CUDA events, and, for
    a kernel shorter than SHORT_S (when `short`), `reps` replays of a CUDA graph of many launches
    over the same buffers, divided by the launch count (falling back to as many launches between two
    events when the graph cannot be captured). Launch overhead then stays outside the figure, and
    the data stays resident in the caches as in a real repeated use."""
    if backend == "cpu":
        seconds = time_cpu(run, warmup, reps)
        return Timing(seconds, float(np.median(seconds)), "")
    seconds = time_gpu(run, warmup, reps)
    launch = float(np.median(seconds))
    if not short or launch >= SHORT_S:
        return Timing(seconds, launch, "")
    batch = int(np.clip(GRAPH_SAMPLE_S // launch, *GRAPH_LAUNCHES))
    try:
        seconds, how = time_graph(run, batch, reps), f"a CUDA graph of {batch} launches"
    except Exception as err:  # noqa: BLE001 - any capture failure: time without the graph, say so
        seconds = time_batched(run, batch, reps)
        how = f"{batch} back-to-back launches between two events (no CUDA graph: {type(err).__name__})"
    return Timing(seconds, launch, f"short kernel ({launch * 1e6:.1f} us per launch timed alone, in "
                                   f"t_launch_median_s): times are per launch of {how}, {reps} samples, "
                                   "data resident")


def time_graph(run: Callable[[], object], batch: int, reps: int) -> list[float]:
    """Per-launch device times of `reps` replays of a CUDA graph capturing `batch` calls of `run` on
    the current (non-default) stream, after one untimed replay."""
    import cupy as cp

    stream = cp.cuda.get_current_stream()
    stream.begin_capture()
    try:
        for _ in range(batch):
            run()
    finally:
        graph = stream.end_capture()
    graph.launch(stream)
    events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    for start, stop in events:
        start.record(stream)
        graph.launch(stream)
        stop.record(stream)
    events[-1][1].synchronize()
    return [cp.cuda.get_elapsed_time(a, b) / 1e3 / batch for a, b in events]


def time_batched(run: Callable[[], object], batch: int, reps: int) -> list[float]:
    """Per-launch device times of `reps` samples of `batch` calls of `run` between two events."""
    import cupy as cp

    events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    for start, stop in events:
        start.record()
        for _ in range(batch):
            run()
        stop.record()
    events[-1][1].synchronize()
    return [cp.cuda.get_elapsed_time(a, b) / 1e3 / batch for a, b in events]


def array_module(*arrays):
    """cupy where every one of `arrays` is a CuPy (device) array, else numpy."""
    cupy = sys.modules.get("cupy")
    return cupy if cupy is not None and all(isinstance(a, cupy.ndarray) for a in arrays) else np


def to_host(a) -> np.ndarray:
    """`a` as a numpy array (copied from the device where it is a CuPy array)."""
    return a.get() if array_module(a) is not np else np.asarray(a)


def rel_err(out, ref) -> float:
    """||out - ref|| / ||ref|| in float64; NaN anywhere gives inf, so it never passes. Computed on the
    device where both are there (no copy of a large output to the host), else on the host."""
    xp = array_module(out, ref)
    if xp is np:
        out, ref = to_host(out), to_host(ref)
    out = xp.asarray(out, dtype=xp.float64).ravel()
    ref = xp.asarray(ref, dtype=xp.float64).ravel()
    if out.shape != ref.shape or not bool(xp.all(xp.isfinite(out))):
        return float("inf")
    denom = float(xp.linalg.norm(ref))
    return float(xp.linalg.norm(out - ref)) / (denom if denom > 0 else 1.0)


class CheckError(RuntimeError):
    """A kernel's output did not match its reference: no time is kept for it."""


def check(out, ref, tol: float, what: str) -> float:
    """The relative error of `out`, or CheckError naming `what` when it exceeds `tol`."""
    err = rel_err(out, ref)
    if not err <= tol:
        raise CheckError(f"{what}: output differs from the reference (relative error {err:.3e} > {tol:.0e})")
    return err


def write_rows(rows: list[dict], path) -> pd.DataFrame:
    """Write result rows to CSV with exactly ROW_COLUMNS (missing ones empty); unknown keys are an error."""
    frame = pd.DataFrame(rows)
    extra = set(frame.columns) - set(ROW_COLUMNS)
    if extra:
        raise KeyError(f"result rows carry columns outside ROW_COLUMNS: {sorted(extra)}")
    frame = frame.reindex(columns=ROW_COLUMNS)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return frame


def launch_tag(kernel: str, impl: str, problem: str, depth=None) -> str:
    """The NVTX range name around a launch measured by the counter runs; with a temporal `depth`
    (stencils) it ends in `.t<depth>` (counter runs before the depth sweep: `completed_tags`)."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in str(problem))
    tag = f"membound:{kernel}:{impl}:{safe}"
    return tag if depth is None or pd.isna(depth) else f"{tag}.t{int(depth)}"


def row_tags(rows: pd.DataFrame) -> list[str]:
    """The launch tag of each result row."""
    depth = rows["depth"] if "depth" in rows else [None] * len(rows)
    return [launch_tag(*r) for r in zip(rows["kernel"], rows["impl"], rows["problem"], depth)]


def completed_tags(counters: pd.DataFrame | None, rows: pd.DataFrame) -> pd.DataFrame | None:
    """Counter rows (ncu) whose tag names no depth, written before the depth sweep, given the depth of
    their case (kernel, impl, problem) where `rows` hold that case at one depth only; others unchanged."""
    if counters is None or counters.empty or "depth" not in rows:
        return counters
    depths = rows.dropna(subset=["depth"]).groupby(["kernel", "impl", "problem"])["depth"].unique()
    legacy = {launch_tag(*case): launch_tag(*case, d[0]) for case, d in depths.items() if len(d) == 1}
    return counters.assign(tag=counters["tag"].map(lambda t: legacy.get(t, t)))


@contextmanager
def nvtx_range(tag: str):
    """An NVTX push/pop range named `tag` around the enclosed launches (a no-op without CuPy)."""
    try:
        from cupy.cuda import nvtx
    except ImportError:
        yield
        return
    nvtx.RangePush(tag)
    try:
        yield
    finally:
        nvtx.RangePop()


def write_result(rows: list[dict], out) -> None:
    """Write result rows to `out` (write_rows) atomically, so a failure leaves no partial file."""
    with outputs.atomic(out, ".csv") as tmp:
        write_rows(rows, tmp)


def guarded(main):
    """Run a benchmark's `main()`; turn out-of-memory and failed checks into one-line errors (exit 1)."""
    try:
        main()
    except CheckError as err:
        sys.exit(f"error: {err}")
    except MemoryError as err:
        sys.exit(f"error: out of memory: {err}")
    except Exception as err:  # CuPy's OutOfMemoryError is not a MemoryError subclass
        if type(err).__name__ == "OutOfMemoryError":
            sys.exit(f"error: out of GPU memory: {err}; shrink the problem in config/config.yaml")
        raise
