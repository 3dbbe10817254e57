"""The row schema of every benchmark result, checks and the rows' writes.

Every result row has the columns of ROW_COLUMNS, in that order, so that every later stage reads one
schema; timing is membound.run.timing's.
"""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager
from pathlib import Path

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
    "domain", "depth", "steps",    # stencils: domain 'AxB[xC]', temporal depth t, time steps per run (SCALE: launches)
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


def sweep_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` without SCALE's copies of the stencils' fields (timed as a stencil's call, `steps`
    launches: the yardstick of table bandwidth, not a point of SCALE's sweep, Figure 6 and C2)."""
    copies = (rows["kernel"] == "scale") & pd.to_numeric(rows["steps"], errors="coerce").notna()
    return rows[~copies]


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


def launch_tag(kernel: str, impl: str, problem: str, depth=None, precision: str = "fp64") -> str:
    """The NVTX range name around a launch measured by the counter runs: membound:<kernel>:<impl>:<problem>;
    with a temporal `depth` (stencils) the problem ends in `.t<depth>` (counter runs before the depth
    sweep: `completed_tags`), and a precision other than fp64 adds `:<precision>` (fp64 tags keep the
    form they had before the precision axis, so that counter runs made then still join their rows)."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in str(problem))
    tag = f"membound:{kernel}:{impl}:{safe}"
    tag = tag if depth is None or pd.isna(depth) else f"{tag}.t{int(depth)}"
    return tag if precision == "fp64" else f"{tag}:{precision}"


def row_tags(rows: pd.DataFrame) -> list[str]:
    """The launch tag of each result row (rows without a precision: fp64)."""
    depth = rows["depth"] if "depth" in rows else [None] * len(rows)
    precision = rows["precision"].astype(object).fillna("fp64") if "precision" in rows else ["fp64"] * len(rows)
    return [launch_tag(k, i, q, d, p) for k, i, q, d, p in zip(rows["kernel"], rows["impl"], rows["problem"], depth,
                                                               precision)]


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
    """Write result rows to `out` (write_rows) atomically, so a failure leaves no partial file, their
    rows and SHA-256 recorded beside it (outputs.recorded: membound.run.raw checks them)."""
    with outputs.recorded(out) as tmp:
        write_rows(rows, tmp)


def stopped(signum, frame):
    """SIGTERM as an exit (membound.run.supervise stops a job so): the atomic writes remove their
    temporary files on the way out."""
    sys.exit(f"error: stopped by signal {signum}")


def guarded(main):
    """Run a benchmark's `main()`; turn out-of-memory and failed checks into one-line errors (exit 1),
    SIGTERM into an exit that leaves no temporary file (stopped)."""
    signal.signal(signal.SIGTERM, stopped)
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
