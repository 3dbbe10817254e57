"""STREAM SCALE, a = q b in FP64, on CUDA cores and FP64 tensor cores (paper 000 Sec. 5.1, Figure 6).

Implementations (impl: unit):
- cuda: cuda_core (cuda_core), tensor_core (tensor_core), both in scale.cu. The tensor-core kernel
  computes A = B(qI) with mma.sync m8n8k4 f64 (sm_80 and later; skipped by the harness, with a note
  on stderr, on HIP and older GPUs); scale.cu explains the operand layout.
- cpu: numpy (cuda_core) and numpy_mma (tensor_core, emulated on CPU): the same A = B(qI) with numpy
  matmul of b's 8x4 tiles by the 4x8 operand q E that the GPU kernel feeds the MMA.
- twins (role "STREAM twin", unit cuda_core): tensor_core_twin, scale.cu's tensor-core template with
  the MMA replaced by a scalar multiply (same loads, stores and launch shape; skipped with its
  sibling), and numpy_mma_twin, the emulation's tiles multiplied elementwise. Claim C1 compares each
  with its tensor-core sibling.

Sizes n = 2^k elements. Every case draws a fresh random b and q, poisons a with NaN; the harness
(kernels/harness.py) runs it once and checks a against numpy's q * b (all elements) before it is
timed. GB/s = 2 x 8 B x n / median time. Arrays whose working set fits in the L2 are timed over the
same buffers, so those rows measure the cache (as the paper's Figure 6 below half the L2); their
note says so. Short launches are timed as a CUDA graph (measure.time_kernel).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from membound.kernels import arg_parser, load_module
from membound.kernels.harness import Case, Impl, run_jobs, select
from membound.run import runinfo
from membound.run.measure import guarded

IMPLS = (Impl("scale", "cuda_core", "cuda_core", "STREAM", "cuda"),
         Impl("scale", "tensor_core", "tensor_core", "STREAM", "cuda"),
         Impl("scale", "tensor_core_twin", "cuda_core", "STREAM twin", "cuda", needs_mma=True),
         Impl("scale", "numpy", "cuda_core", "STREAM", "cpu"),
         Impl("scale", "numpy_mma", "tensor_core", "STREAM", "cpu"),
         Impl("scale", "numpy_mma_twin", "cuda_core", "STREAM twin", "cpu"))
BYTES_PER_ELEMENT = 2 * 8     # b read once, a written once (FP64)
TOL = 1e-14                   # one rounding of q*b; the MMA adds only exact zeros
UNROLL = 2                    # scale.cu: double2 loads in flight per lane (2, 4 measured alike)
CHUNK = 32 * 2 * UNROLL       # scale.cu: elements per warp step
THREADS = 256
TILE = 32                     # elements per MMA: the 8x4 A operand
E = np.repeat(np.eye(4), 2, axis=1)  # 4x8: the identity with every column doubled (scale.cu)


# ------------------------------------------------------------------------------------ runners


def cpu_runner(impl: str, a: np.ndarray, b: np.ndarray, q: float):
    """A no-argument callable that writes q * b into a with numpy (impl numpy | numpy_mma | numpy_mma_twin)."""
    if impl == "numpy":
        return lambda: np.multiply(b, q, out=a)
    n = b.size
    full = n - n % TILE
    if impl == "numpy_mma_twin":  # the emulation's 8x4 tiles, multiplied elementwise
        return lambda: (np.multiply(b[:full].reshape(-1, 8, 4), q, out=a[:full].reshape(-1, 8, 4)),
                        np.multiply(b[full:], q, out=a[full:]))
    if impl != "numpy_mma":
        raise ValueError(f"unknown cpu impl '{impl}' (numpy | numpy_mma | numpy_mma_twin)")
    op = q * E
    d = np.empty((full // TILE, 8, 8))

    def run():
        np.matmul(b[:full].reshape(-1, 8, 4), op, out=d)
        np.copyto(a[:full].reshape(-1, 8, 4), d[..., 0::2])
        if full < n:  # ragged end: one zero-padded tile
            tile = np.zeros(TILE)
            tile[: n - full] = b[full:]
            a[full:] = (tile.reshape(8, 4) @ op)[:, 0::2].ravel()[: n - full]

    return run


def gpu_runner(impl: str, a, b, q: float):
    """A no-argument callable that launches scale.cu's kernel for impl on CuPy arrays a, b."""
    for name, x in (("a", a), ("b", b)):
        if x.dtype != np.float64 or not x.flags.c_contiguous or x.data.ptr % 16 or x.size != b.size:
            raise ValueError(f"scale: array {name} must be contiguous float64 of b's size on a 16-byte boundary "
                             "(the kernels load double2); pass a fresh cupy array")
    kernel = load_module("scale.cu", (f"-DSCALE_UNROLL={UNROLL}",)).get_function(f"scale_{impl}")
    n = b.size
    # One chunk per warp plus the tail warp: on the H100 this beat a grid sized to the SMs (grid-stride
    # loop) by 6% at n >= 2^26 (3.02 vs 2.83 TB/s; docs/kernels_scale.md).
    blocks = min(2**31 - 1, -(-(n // CHUNK + 1) * 32 // THREADS))
    args = (a, b, np.float64(q), np.int64(n))
    return lambda: kernel((blocks,), (THREADS,), args)


# ------------------------------------------------------------------------------------ one case


def _arrays(backend: str, n: int, rng: np.random.Generator):
    """A fresh random b in [-1, 1) and a NaN-poisoned a of n elements, on the backend's device."""
    if backend == "cpu":
        return np.full(n, np.nan), rng.uniform(-1.0, 1.0, n)
    import cupy as cp

    try:
        b = cp.random.uniform(-1.0, 1.0, n)
        return cp.full(n, np.nan), b
    except cp.cuda.memory.OutOfMemoryError as err:
        raise MemoryError(f"scale n={n} needs {BYTES_PER_ELEMENT * n / 2**30:.1f} GiB for a and b, more than "
                          f"the GPU has free ({err}); lower scale.log2_max in config/config.yaml") from None


def prepare(impl: Impl, backend: str, n: int, rng: np.random.Generator, l2_bytes: int | None = None) -> Case:
    """One case of size n: fresh random b and q, NaN-poisoned a, checked against numpy's q * b."""
    q = float(rng.uniform(0.5, 2.0))
    a, b = _arrays(backend, n, rng)
    run = (cpu_runner if backend == "cpu" else gpu_runner)(impl.name, a, b, q)
    host = (lambda x: x) if backend == "cpu" else (lambda x: x.get())
    notes = ["emulated on CPU: numpy matmul of 8x4 tiles by q E (4x8)"] if impl.name == "numpy_mma" else []
    if l2_bytes and BYTES_PER_ELEMENT * n <= l2_bytes:
        notes.append(f"a and b ({BYTES_PER_ELEMENT * n / 2**20:g} MiB) fit in the L2 ({l2_bytes / 2**20:g} MiB): "
                     "repeated launches over one buffer measure the cache")
    return Case(run=run, output=lambda _: host(a), reference=q * host(b), tol=TOL, what=f"scale {impl.name} n={n}",
                row={"problem": problem(n), "n": n, "work_items": n}, work=BYTES_PER_ELEMENT * n, metric="GB/s",
                notes=notes)


def problem(n: int) -> str:
    """'n=2^k' for powers of two, else 'n=<n>'."""
    k = int(math.log2(n)) if n > 0 else -1
    return f"n=2^{k}" if 2**k == n else f"n={n}"


# ------------------------------------------------------------------------------------ CLI


def main(argv=None):
    parser = arg_parser("STREAM SCALE (a = q b, FP64) on CUDA cores and FP64 tensor cores.")
    parser.add_argument("--log2-min", type=int, required=True, help="smallest size 2^k elements")
    parser.add_argument("--log2-max", type=int, required=True, help="largest size 2^k elements")
    args = parser.parse_args(argv)
    if not 1 <= args.log2_min <= args.log2_max <= 40:
        parser.error(f"--log2-min {args.log2_min} / --log2-max {args.log2_max}: need 1 <= min <= max <= 40")
    if args.warmup < 0 or args.reps < 1:
        parser.error(f"--warmup {args.warmup} / --reps {args.reps}: need warmup >= 0 and reps >= 1")
    rng = np.random.default_rng()
    l2_bytes = runinfo.describe(args.backend)["l2_bytes"] or None
    jobs = [(impl, partial(prepare, impl, args.backend, 2**k, rng, l2_bytes))
            for k in range(args.log2_min, args.log2_max + 1) for impl, _ in select(IMPLS, args.backend, args.precisions)]
    run_jobs(args.backend, jobs, args.out, args.warmup, args.reps, args.counters, args.rep, "{value:10.1f} GB/s")


if __name__ == "__main__":
    guarded(main)
