"""The one lifecycle of a benchmark case, shared by every kernel family.

An implementation is an `Impl` (family, name, unit, role, backend, precisions) in its family module's
IMPLS; a family provides, per case, implementation and precision, a `prepare()` returning a `Case`:
the timed callable, how to read the checked values from its result, their reference and tolerance
(membound.model.precision). `measure` owns the rest:

1. skip policy: a tensor-core implementation on a device without mma.sync is not run (`skip_reason`);
2. check: one run, its output (precision.decode: bf16's bit patterns as numbers) against the reference,
   before any time is kept (measure.check);
3. warm-up and timing (timing.time_kernel: per launch, and for short kernels a CUDA graph);
4. a second check of the output left by the timed runs;
5. statistics and the result row (measure.ROW_COLUMNS), with the repetition index `rep`.

`run_jobs` adds the run-info columns and writes the rows atomically (nothing on a failed check).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from membound.model.precision import PRECISIONS, SPARSITIES, decode
from membound.run import runinfo
from membound.run.measure import check, launch_tag, nvtx_range, stats, write_result
from membound.run.timing import time_kernel

UNITS = ("cuda_core", "tensor_core")


@dataclass(frozen=True)
class Impl:
    """One implementation: its family, name (the rows' `impl`), unit, the paper role it plays, the
    backend it runs on (None: both, the same algorithm on CUDA and the CPU), whether it is built
    from a source that needs mma.sync although it runs on CUDA cores (a twin), the precisions it
    runs in (membound.model.precision; all of them unless it names a subset) and its sparsity (dense,
    or 2:4 for sparse tensor cores)."""
    family: str
    name: str
    unit: str
    role: str
    backend: str | None = None
    needs_mma: bool = False
    precisions: tuple[str, ...] = PRECISIONS
    sparsity: str = "dense"

    def __post_init__(self):
        if self.unit not in UNITS or self.backend not in (None, "cuda", "cpu"):
            raise ValueError(f"{self.family} impl '{self.name}': unit must be one of {UNITS}, backend cuda|cpu|None")
        if not set(self.precisions) <= set(PRECISIONS) or self.sparsity not in SPARSITIES:
            raise ValueError(f"{self.family} impl '{self.name}': precisions from {PRECISIONS}, sparsity one of "
                             f"{SPARSITIES}")


def select(impls: Iterable[Impl], backend: str, precisions: Iterable[str] = ("fp64",)) -> list[tuple[Impl, str]]:
    """(impl, precision) of every implementation of `impls` that runs on `backend`, in each of
    `precisions` it has, precision by precision; a note on stderr names each requested precision
    that an implementation of this backend lacks."""
    impls = [i for i in impls if i.backend in (None, backend)]
    chosen = []
    for p in precisions:
        lacking = [i.name for i in impls if p not in i.precisions]
        if lacking:
            print(f"note: {impls[0].family if impls else ''} {p}: not implemented by {', '.join(lacking)}",
                  file=sys.stderr)
        chosen += [(i, p) for i in impls if p in i.precisions]
    return chosen


@dataclass
class Case:
    """One prepared case of one implementation.

    run: one timed call (every launch of one repetition; no allocation, no host transfer); returns
    whatever `output` reads. output: the checked values, from run()'s result. reference: what output
    must equal within `tol` (where both are CuPy arrays, compared on the device). what: names the case
    in a failed check.
    row: the problem columns (problem, n, work_items, ...). work: metric units per call (bytes,
    flops, stencil updates), so that value = work / t_median / 1e9. notes: for the row's `note`.
    precision: the storage format it ran in (membound.model.precision), the rows' `precision`.
    """
    run: Callable[[], Any]
    output: Callable[[Any], Any]
    reference: Any
    tol: float
    what: str
    row: dict
    work: float
    metric: str
    notes: list[str] = field(default_factory=list)
    precision: str = "fp64"


def skip_reason(impl: Impl, backend: str) -> str | None:
    """Why `impl` cannot run here (a tensor-core impl, or a twin built from its source, on a device
    without the mma.sync of every precision: FP64 DMMA, TF32 and FP16 m16n8k*, all from sm_80), or None."""
    if backend != "cuda" or not (impl.unit == "tensor_core" or impl.needs_mma):
        return None
    import cupy as cp

    if cp.cuda.runtime.is_hip:
        return "HIP: no mma.sync; the tensor-core kernels are NVIDIA-only"
    cc = cp.cuda.Device().compute_capability
    if int(cc) // 10 < 8:
        return f"compute capability {cc}: FP64, TF32 and FP16 mma.sync need sm_80 or later"
    return None


def measure(impl: Impl, prepare: Callable[[], Case], backend: str, warmup: int, reps: int,
            counters: bool = False, rep: int = 0, warmup_s: float = 0.0) -> dict:
    """The checked and timed result row of one case (without run-info columns), after `warmup` calls and
    `warmup_s` seconds of them (timing.warm_up); CheckError on a mismatch.

    On CUDA the case is prepared and run on its own non-blocking stream, so that short kernels can
    be captured into a CUDA graph (timing.time_kernel), with its arrays from the stream-ordered pool."""
    if backend == "cuda":
        use_async_pool()
    with _stream(backend):
        case = prepare()
        err = check(decode(case.output(case.run()), case.precision), case.reference, case.tol, case.what)
        notes = list(case.notes)
        if counters:
            free_device_memory()   # the profiler saves and restores what the launch can reach: live arrays only
            with nvtx_range(launch_tag(impl.family, impl.name, case.row["problem"], case.row.get("depth"),
                                       case.precision)):
                timing = time_kernel(case.run, backend, 0, 1, short=False)
            warmup = 0
            notes.append("counter run: one launch under the profiler, time not comparable")
        else:
            timing = time_kernel(case.run, backend, warmup, reps, warmup_s=warmup_s)
            if warmup_s:
                notes.append(f"warm-up: {warmup} calls and on to {warmup_s:g} s")
        err = max(err, check(decode(case.output(case.run()), case.precision), case.reference, case.tol,
                             case.what + " (after timing)"))
    st = stats(timing.seconds)
    return {"kernel": impl.family, "impl": impl.name, "unit": impl.unit, "role": impl.role,
            "precision": case.precision, "sparsity": impl.sparsity, "code": "",
            "source": "synthetic", **case.row, "warmup": warmup, **st, "t_launch_median_s": timing.launch_median,
            "metric": case.metric, "value": case.work / st["t_median_s"] / 1e9, "rel_err": err,
            "note": "; ".join(notes + ([timing.note] if timing.note else [])), "rep": rep}


_POOL = []   # the process's stream-ordered pool, once made (use_async_pool)


def use_async_pool() -> None:
    """Every device array of this process from CuPy's stream-ordered pool (cudaMallocAsync), on CUDA.
    With CuPy's default pool (cudaMalloc) a case's arrays landed, by the allocation history, at one of
    two bandwidth levels (SCALE at 2^27-2^28 in fp16: 2540-2590 GB/s or 2940-3020 on an H100); from
    this pool every case ran at the high one (docs/kernels_scale.md, "The allocator")."""
    import cupy as cp

    if not _POOL and not cp.cuda.runtime.is_hip:
        _POOL.append(cp.cuda.MemoryAsyncPool())
        cp.cuda.set_allocator(_POOL[0].malloc)


def free_device_memory() -> None:
    """Hand CuPy's cached blocks back to the driver (where CuPy is loaded): between a batch's cases, and
    before a profiled launch, whose replay passes save and restore the device memory it can reach."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.cuda.Device().synchronize()
        (_POOL[0] if _POOL else cupy.get_default_memory_pool()).free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()


def _stream(backend: str):
    if backend != "cuda":
        return nullcontext()
    import cupy as cp

    cp.cuda.Device().synchronize()  # data uploaded on other streams is in place before this one runs
    return cp.cuda.Stream(non_blocking=True)


def run_jobs(backend: str, jobs: Iterable[tuple[Impl, Callable[[], Case]]], out, warmup: int, reps: int,
             counters: bool = False, rep: int = 0, show: str = "{value:10.2f} {metric}",
             warmup_s: float = 0.0) -> list[dict]:
    """Measure every (impl, prepare) job, skipping what cannot run here (a note on stderr), print a
    line per row and write the rows with run-info columns to `out` atomically."""
    info = runinfo.describe(backend)
    rows = []
    for impl, prepare in jobs:
        if reason := skip_reason(impl, backend):
            print(f"note: {impl.family} {impl.name} skipped: {reason}", file=sys.stderr)
            continue
        row = measure(impl, prepare, backend, warmup, reps, counters, rep, warmup_s)
        rows.append({**row, **info})
        print(f"{impl.name:13s} {row['problem']:16s} " + show.format(**row) + f"  cv {row['cv']:.3f}", flush=True)
    write_result(rows, out)
    return rows


def run_cli(args, jobs: Iterable[tuple[Impl, Callable[[], Case]]], show: str = "{value:10.2f} {metric}") -> list[dict]:
    """run_jobs with a family CLI's parsed arguments (kernels.arg_parser: backend, out, warmup, warmup_s, reps,
    counters, rep)."""
    return run_jobs(args.backend, jobs, args.out, args.warmup, args.reps, args.counters, args.rep, show,
                    args.warmup_s)
