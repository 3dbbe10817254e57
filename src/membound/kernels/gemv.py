"""Dense GEMV, y = A x in FP64 (A row-major n x n), on CUDA cores (cuBLAS dgemv) and FP64 tensor
cores (paper 000 eq. 6-7: W = 2mn, Q = (mn + m + n) 8 B, I -> 1/4): the fourth family, added
through the harness as docs/architecture.md describes.

Implementations (impl: unit, role):
- cuda: cublas_dgemv (cuda_core, cuBLAS): one cublasDgemv through CuPy's low-level bindings (the
  row-major A is cuBLAS's column-major A^T, so trans = T); gemv_tc (tensor_core, DMMA): gemv_tc.cu,
  mma.sync m8n8k4 with x in column 0 of the B operand (1/8 of the MMA useful).
- cpu: numpy (cuda_core) and numpy_mma (tensor_core, emulated on CPU): numpy matmul of A's 8x4
  tiles by the 4x8 B operands the GPU kernel issues.

Every case draws a fresh random A and x and poisons y with NaN; the harness checks y against numpy's
A @ x before any time is kept. Sizes n cover both sides of the L2 (config gemv.sizes); GB/s = Q / t.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from membound.kernels import arg_parser, load_module
from membound.kernels.harness import Case, Impl, run_jobs, select
from membound.run.measure import guarded

IMPLS = (Impl("gemv", "cublas_dgemv", "cuda_core", "cuBLAS", "cuda"),
         Impl("gemv", "gemv_tc", "tensor_core", "DMMA", "cuda"),
         Impl("gemv", "numpy", "cuda_core", "cuBLAS", "cpu"),
         Impl("gemv", "numpy_mma", "tensor_core", "DMMA", "cpu"))
TOL = 1e-12           # sums in another order; rounding only
WARPS = 8             # gemv_tc.cu: warps per block of 8 rows (H100 sweep: docs/kernels_gemv.md)


def bytes_moved(m: int, n: int) -> int:
    """Compulsory DRAM bytes of one GEMV: A, x and y once (paper 000 eq. 7)."""
    return 8 * (m * n + m + n)


# ------------------------------------------------------------------------------------ runners


def cpu_runner(impl: str, a: np.ndarray, x: np.ndarray, y: np.ndarray):
    """A no-argument callable writing A x into y with numpy (impl numpy | numpy_mma)."""
    if impl == "numpy":
        return lambda: np.matmul(a, x, out=y)
    if impl != "numpy_mma":
        raise ValueError(f"unknown cpu impl '{impl}' (numpy | numpy_mma)")
    m, n = a.shape
    mp, np4 = -(-m // 8) * 8, -(-n // 4) * 4
    tiles = np.zeros((mp, np4))
    tiles[:m, :n] = a
    tiles = tiles.reshape(mp // 8, 8, np4 // 4, 4).transpose(0, 2, 1, 3)   # (row blocks, k chunks, 8, 4)
    b = np.zeros((np4 // 4, 4, 8))

    def run():
        b[:, :, 0] = np.pad(x, (0, np4 - n)).reshape(-1, 4)               # x in column 0 of each B
        y[:] = np.matmul(tiles, b).sum(axis=1)[:, :, 0].ravel()[:m]

    return run


def cublas_runner(a, x, y):
    """A no-argument callable running ONE cublasDgemv of the row-major device matrix a on x into y."""
    import cupy as cp
    from cupy.cuda import device
    from cupy_backends.cuda.libs import cublas

    m, n = a.shape
    handle = device.get_cublas_handle()
    cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
    alpha, beta = np.array(1.0), np.array(0.0)
    args = (handle, cublas.CUBLAS_OP_T, n, m, alpha.ctypes.data, a.data.ptr, n, x.data.ptr, 1,
            beta.ctypes.data, y.data.ptr, 1)

    def run():
        cublas.dgemv(*args)

    run.keep = (alpha, beta, a, x, y)
    return run


def tc_runner(a, x, y):
    """A no-argument callable launching gemv_tc.cu on the row-major device matrix a, x, y."""
    m, n = a.shape
    kernel = load_module("gemv_tc.cu", (f"-DGEMV_WARPS={WARPS}",)).get_function("gemv_tc")
    args = (a, x, y, np.int64(m), np.int64(n))
    grid = (-(-m // 8),)
    return lambda: kernel(grid, (32 * WARPS,), args)


# ------------------------------------------------------------------------------------ one case


def prepare(impl: Impl, backend: str, n: int, rng: np.random.Generator) -> Case:
    """One n x n case: fresh A and x, NaN-poisoned y, checked against numpy's A @ x."""
    a_host, x_host = rng.uniform(-1.0, 1.0, (n, n)), rng.uniform(-1.0, 1.0, n)
    if backend == "cpu":
        y = np.full(n, np.nan)
        run, host, notes = cpu_runner(impl.name, a_host, x_host, y), (lambda: y), []
        if impl.name == "numpy_mma":
            notes.append("emulated on CPU: numpy matmul of A's 8x4 tiles by 4x8 operands holding x in column 0")
    else:
        import cupy as cp

        try:
            a, x, y = cp.asarray(a_host), cp.asarray(x_host), cp.full(n, np.nan)
        except cp.cuda.memory.OutOfMemoryError as err:
            raise MemoryError(f"gemv n={n} needs {8 * n * n / 2**30:.1f} GiB for A ({err}); lower gemv.sizes "
                              "in config/config.yaml") from None
        run = (cublas_runner if impl.name == "cublas_dgemv" else tc_runner)(a, x, y)
        host = y.get
        notes = (["timed: one cublasDgemv (trans T of the row-major A)"] if impl.name == "cublas_dgemv" else
                 [f"timed: one launch of gemv_tc.cu, mma.sync m8n8k4 x {-(-n // 8) * -(-n // 4)} (1/8 useful)"])
    return Case(run=run, output=lambda _: host(), reference=a_host @ x_host, tol=TOL, what=f"gemv {impl.name} n={n}",
                row={"problem": f"n={n}", "n": n * n, "rows": n, "cols": n, "work_items": n * n},
                work=bytes_moved(n, n), metric="GB/s", notes=notes)


# ------------------------------------------------------------------------------------ CLI


def main(argv=None):
    parser = arg_parser("Dense GEMV (y = A x, FP64) with cuBLAS and an FP64 tensor-core kernel.")
    parser.add_argument("--sizes", type=int, nargs="+", required=True, help="square sizes n (A is n x n)")
    args = parser.parse_args(argv)
    if min(args.sizes) < 1 or args.warmup < 0 or args.reps < 1:
        parser.error(f"--sizes {args.sizes} / --warmup {args.warmup} / --reps {args.reps}: need sizes >= 1, "
                     "warmup >= 0 and reps >= 1")
    rng = np.random.default_rng()
    jobs = [(impl, partial(prepare, impl, args.backend, n, rng)) for n in args.sizes
            for impl, _ in select(IMPLS, args.backend, args.precisions)]
    run_jobs(args.backend, jobs, args.out, args.warmup, args.reps, args.counters, args.rep, "{value:10.1f} GB/s")


if __name__ == "__main__":
    guarded(main)
