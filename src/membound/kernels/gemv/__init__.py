"""Dense GEMV, y = A x (A row-major n x n), in fp64, fp32, fp16 and bf16 (membound.model.precision), on CUDA cores
and tensor cores (paper 000 eq. 6-7: W = 2mn, Q = (mn + m + n) D, I -> 2/D): the fourth family, added
through the harness as docs/architecture.md describes.

Implementations (impl: unit, role; precisions):
- cuda, CUDA cores: cublas_dgemv (fp64) and cublas_sgemv (fp32), cuBLAS: one cublas<t>gemv through
  CuPy's low-level bindings (the row-major A is cuBLAS's column-major A^T, so trans = T); gemv_half2
  (fp16 and bf16, in cuBLAS's role: cuBLAS has no single-matrix fp16 or bf16 GEMV, docs/kernels_gemv.md):
  gemv_half2.cu, 16-bit loads unpacked to fp32 FMAs.
- cuda, tensor cores: gemv_tc (DMMA; every precision of MMA): gemv_tc.cu, one template compiled per
  precision, x in column 0 of the B operand, so 1/8 of the MMA's multiply-adds are useful in each:
  fp64 m8n8k4; fp32 m16n8k8 TF32, operands rounded by cvt.rna.tf32.f32, fp32 accumulate; fp16 and
  bf16 m16n8k16, fp32 accumulate.
- cpu: numpy (cuda_core; np.matmul in the storage dtype, numpy sums fp16 in fp32, bf16 in float32) and numpy_mma
  (tensor_core, emulated on CPU: numpy matmul of the operand tiles gemv_tc.cu issues, TF32 operand
  rounding emulated (precision.tc_operand), sums in the MMA's accumulator type).

Every case draws A and x in float64 and rounds them to the storage format (precision.quantize; on the GPU
drawn and rounded there), and poisons y with NaN; the harness checks y against A x computed in float64
from the rounded values (on the GPU by CuPy's elementwise products and row sums, not cuBLAS),
within precision.dot_tolerance of n terms (docs/precision.md), before any time is kept. Sizes n cover
both sides of the L2 (config gemv.sizes), the same element counts in every precision; GB/s = Q / t.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from membound.kernels import arg_parser, load_module
from membound.kernels.harness import Case, Impl, run_cli, select
from membound.model.precision import (PRECISIONS, compute_dtype, decode, dot_tolerance, fmt, nan, quantize, store,
                                      tc_operand)


def _of_size(size: int) -> tuple[str, ...]:
    """The precisions stored in `size` bytes: cuBLAS's D (8) and S (4) GEMV, gemv_half2's 16-bit formats (2)."""
    return tuple(p for p in PRECISIONS if fmt(p).bytes == size)


IMPLS = (Impl("gemv", "cublas_dgemv", "cuda_core", "cuBLAS", "cuda", precisions=_of_size(8)),
         Impl("gemv", "cublas_sgemv", "cuda_core", "cuBLAS", "cuda", precisions=_of_size(4)),
         Impl("gemv", "gemv_half2", "cuda_core", "cuBLAS", "cuda", precisions=_of_size(2)),
         Impl("gemv", "gemv_tc", "tensor_core", "DMMA", "cuda"),
         Impl("gemv", "numpy", "cuda_core", "cuBLAS", "cpu"),
         Impl("gemv", "numpy_mma", "tensor_core", "DMMA", "cpu"))
WARPS = 8             # gemv_tc.cu: warps per block of MMA rows (fp64 H100 sweep: docs/kernels_gemv.md)
HALF2_WARPS, HALF2_UNROLL = 8, 4   # gemv_half2.cu: rows (warps) per block, 16-byte loads in flight per lane


def bytes_moved(m: int, n: int, precision: str = "fp64") -> int:
    """Compulsory DRAM bytes of one GEMV: A, x and y once (paper 000 eq. 7)."""
    return fmt(precision).bytes * (m * n + m + n)


# ------------------------------------------------------------------------------------ the MMA on the CPU

LANE_K = {4: lambda t: [t], 8: lambda t: [t, t + 4], 16: lambda t: [2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9]}


def columns(precision: str) -> np.ndarray:
    """gemv_tc.cu's column (within a chunk) of k index kk of MMA u, [u, kk]: lane t holds the k indices
    LANE_K[k](t) of both fragments and loads E consecutive entries from column E t, E = 64 bytes over
    its rows; MMA u takes the lane's entries u K/4 .. (u+1) K/4 - 1."""
    m, _, k = fmt(precision).mma.shape
    e = 64 // (fmt(precision).bytes * m // 8)
    cols = np.empty((e // (k // 4), k), dtype=int)
    for t in range(4):
        for j, kk in enumerate(LANE_K[k](t)):
            cols[:, kk] = e * t + np.arange(cols.shape[0]) * (k // 4) + j
    return cols


def emulation(a: np.ndarray, x: np.ndarray, y: np.ndarray, precision: str):
    """A no-argument callable writing A x into y by gemv_tc.cu's algorithm on the CPU: A's M x K operand
    tiles (columns()) times B operands holding x in column 0, in the MMA's accumulator type."""
    (m, n), (tm, tn, tk), cols = a.shape, fmt(precision).mma.shape, columns(precision)
    chunk = cols.size
    mp, np_ = -(-m // tm) * tm, -(-n // chunk) * chunk
    acc = np.dtype(fmt(precision).tc_acc).type
    padded = np.zeros((mp, np_), a.dtype)
    padded[:m, :n] = a
    tiles = tc_operand(padded, precision).astype(acc).reshape(mp // tm, tm, np_ // chunk, chunk)[..., cols]
    tiles = tiles.transpose(0, 2, 3, 1, 4)                    # (row blocks, chunks, MMAs, M, K)
    b = np.zeros((np_ // chunk, *cols.shape, tn), acc)        # (chunks, MMAs, K, N)
    xp = np.zeros(np_, x.dtype)

    def run():
        xp[:n] = x
        b[..., 0] = tc_operand(xp, precision).astype(acc).reshape(-1, chunk)[:, cols]   # x in column 0
        y[:] = store(np.matmul(tiles, b)[..., 0].sum(axis=(1, 2), dtype=acc).ravel()[:m], precision)

    return run


# ------------------------------------------------------------------------------------ runners


def cpu_runner(impl: str, a: np.ndarray, x: np.ndarray, y: np.ndarray, precision: str = "fp64"):
    """A no-argument callable writing A x into y with numpy in their dtype (one numpy has not, bf16:
    decoded, in float32, rounded to storage; impl numpy | numpy_mma)."""
    if impl == "numpy":
        if compute_dtype(precision) != fmt(precision).dtype:
            return lambda: np.copyto(y, store(decode(a, precision) @ decode(x, precision), precision))
        return lambda: np.matmul(a, x, out=y)
    if impl != "numpy_mma":
        raise ValueError(f"unknown cpu impl '{impl}' (numpy | numpy_mma)")
    return emulation(a, x, y, precision)


def cublas_runner(a, x, y):
    """A no-argument callable running ONE cublasDgemv (float64) or cublasSgemv (float32) of the
    row-major device matrix a on x into y."""
    import cupy as cp
    from cupy.cuda import device
    from cupy_backends.cuda.libs import cublas

    gemv = {np.float64: cublas.dgemv, np.float32: cublas.sgemv}[a.dtype.type]
    m, n = a.shape
    handle = device.get_cublas_handle()
    cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
    alpha, beta = np.array(1, a.dtype), np.array(0, a.dtype)
    args = (handle, cublas.CUBLAS_OP_T, n, m, alpha.ctypes.data, a.data.ptr, n, x.data.ptr, 1,
            beta.ctypes.data, y.data.ptr, 1)

    def run():
        gemv(*args)

    run.keep = (alpha, beta, a, x, y)
    return run


def tc_runner(a, x, y, precision: str = "fp64"):
    """A no-argument callable launching gemv_tc.cu's kernel of `precision` on the row-major device matrix a, x, y."""
    m, n = a.shape
    name = "gemv_tc" + ("" if precision == "fp64" else f"_{precision}")   # fp64 keeps its counter rows' name
    kernel = load_module("gemv_tc.cu", (f"-DGEMV_WARPS={WARPS}",)).get_function(name)
    args = (a, x, y, np.int64(m), np.int64(n))
    grid = (-(-m // fmt(precision).mma.shape[0]),)
    return lambda: kernel(grid, (32 * WARPS,), args)


def half2_runner(a, x, y, precision: str):
    """A no-argument callable launching gemv_half2.cu's kernel of `precision` (a 16-bit one) on the
    row-major device matrix a, x, y."""
    import cupy as cp

    if cp.cuda.runtime.is_hip:
        raise ValueError("gemv_half2: the kernel uses PTX f16 / bf16 instructions (NVIDIA only); on HIP use "
                         "--precisions fp64 fp32")
    m, n = a.shape
    options = (f"-DGEMV_HALF2_WARPS={HALF2_WARPS}", f"-DGEMV_HALF2_UNROLL={HALF2_UNROLL}")
    name = "gemv_half2" + ("" if precision == "fp16" else f"_{precision}")   # fp16 keeps its counter rows' name
    kernel = load_module("gemv_half2.cu", options).get_function(name)
    args = (a, x, y, np.int64(m), np.int64(n))
    return lambda: kernel((-(-m // HALF2_WARPS),), (32 * HALF2_WARPS,), args)


def gpu_runner(impl: str, a, x, y, precision: str):
    """The runner of a CUDA impl."""
    if impl == "gemv_tc":
        return tc_runner(a, x, y, precision)
    return half2_runner(a, x, y, precision) if impl == "gemv_half2" else cublas_runner(a, x, y)


# ------------------------------------------------------------------------------------ one case


def note(impl: Impl, precision: str, n: int) -> list[str]:
    """What the timed call holds; for tensor-core rows the MMA, its operands and accumulator, the useful share."""
    if impl.unit == "cuda_core":
        return {"cublas_dgemv": ["timed: one cublasDgemv (trans T of the row-major A)"],
                "cublas_sgemv": ["timed: one cublasSgemv (trans T of the row-major A)"],
                "gemv_half2": [f"timed: one launch of gemv_half2.cu ({precision} loads, fp32 FMAs; cuBLAS has no "
                               f"single-matrix {precision} GEMV)"]}.get(impl.name, [])
    f = fmt(precision)
    instr, (tm, tn, tk) = f.mma.instruction, f.mma.shape
    rounding = " rounded by cvt.rna.tf32.f32" if f.tc_operand_u else ""
    what = (f"emulated on CPU: numpy matmul of the operand tiles of {instr}" if impl.name == "numpy_mma" else
            f"timed: one launch of gemv_tc.cu, {instr} x {-(-n // tm) * -(-n // tk)}")
    return [f"{what} ({f.tc_type} operands{rounding}, {instr.split('.')[6]} accumulate), x in 1 of {tn} "
            f"columns: 1/{tn} useful"]


def _host_arrays(n: int, rng: np.random.Generator, precision: str):
    """A, x (drawn in float64, rounded to `precision`), a NaN-poisoned y, A x and |A||x| in float64."""
    a, x = quantize(rng.uniform(-1.0, 1.0, (n, n)), precision), quantize(rng.uniform(-1.0, 1.0, n), precision)
    a64, x64 = decode(a, precision).astype(np.float64), decode(x, precision).astype(np.float64)
    return a, x, np.full(n, nan(precision), a.dtype), a64 @ x64, np.abs(a64) @ np.abs(x64)


def _device_arrays(n: int, rng: np.random.Generator, precision: str):
    """As _host_arrays, drawn on the GPU and rounded there (precision.quantize); the float64 references
    are CuPy's elementwise products and row sums (not cuBLAS), copied to the host (n values): no n x n
    array on the host."""
    import cupy as cp

    try:
        draw = cp.random.RandomState(int(rng.integers(2**63)))
        a, x = (quantize(draw.uniform(-1.0, 1.0, shape), precision) for shape in ((n, n), n))
        a64, x64 = decode(a, precision).astype(cp.float64), decode(x, precision).astype(cp.float64)
        ref, bound = (a64 * x64).sum(axis=1).get(), (cp.abs(a64) * cp.abs(x64)).sum(axis=1).get()
    except cp.cuda.memory.OutOfMemoryError as err:
        raise MemoryError(f"gemv n={n} {precision} needs {fmt(precision).bytes * n * n / 2**30:.1f} GiB for A "
                          f"and {16 * n * n / 2**30:.1f} GiB more for its float64 reference ({err}); lower "
                          "gemv.sizes in config/config.yaml") from None
    return a, x, cp.full(n, nan(precision), a.dtype), ref, bound


def prepare(impl: Impl, backend: str, n: int, rng: np.random.Generator, precision: str = "fp64") -> Case:
    """One n x n case in `precision`: A and x drawn in float64 and rounded to it, NaN-poisoned y,
    checked against A x in float64 within the format's bound."""
    a, x, y, ref, bound = (_host_arrays if backend == "cpu" else _device_arrays)(n, rng, precision)
    if backend == "cpu":
        run, host = cpu_runner(impl.name, a, x, y, precision), (lambda: y)
    else:
        run, host = gpu_runner(impl.name, a, x, y, precision), y.get
    tol = dot_tolerance(precision, impl.unit, n, ref, bound)
    notes = note(impl, precision, n) + [f"checked: rel_err <= {tol:.3g} (precision.dot_tolerance, {n} terms)"]
    return Case(run=run, output=lambda _: host(), reference=ref, tol=tol, what=f"gemv {impl.name} {precision} n={n}",
                row={"problem": f"n={n}", "n": n * n, "rows": n, "cols": n, "work_items": n * n},
                work=bytes_moved(n, n, precision), metric="GB/s", notes=notes, precision=precision)


# ------------------------------------------------------------------------------------ CLI


def main(argv=None):
    parser = arg_parser("Dense GEMV (y = A x) per precision with cuBLAS / a half2 kernel and tensor-core kernels.")
    parser.add_argument("--sizes", type=int, nargs="+", required=True, help="square sizes n (A is n x n)")
    args = parser.parse_args(argv)
    if min(args.sizes) < 1 or args.warmup < 0 or args.reps < 1:
        parser.error(f"--sizes {args.sizes} / --warmup {args.warmup} / --reps {args.reps}: need sizes >= 1, "
                     "warmup >= 0 and reps >= 1")
    rng = np.random.default_rng()
    jobs = [(impl, partial(prepare, impl, args.backend, n, rng, p)) for n in args.sizes
            for impl, p in select(IMPLS, args.backend, args.precisions)]
    run_cli(args, jobs, "{value:10.1f} GB/s")

