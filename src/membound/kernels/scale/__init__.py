"""STREAM SCALE, a = q b, in fp64, fp32, fp16 and bf16 (membound.model.precision), on CUDA cores and tensor cores
(paper 000 Sec. 5.1, Figure 6).

Implementations (impl: unit), each in every precision the records run (precision.PRECISIONS):
- cuda: cuda_core (cuda_core), tensor_core (tensor_core), both from scale.cu, one template per
  algorithm compiled per precision (kernels scale_<impl> in fp64, scale_<impl>_<precision> otherwise).
  The tensor-core kernel computes A = B(qP) with the precision's MMA (precision.Format.mma; scale.cu gives the fragment
  layouts): fp64 m8n8k4 f64; fp32 m16n8k8 TF32, operands rounded by cvt.rna.tf32.f32, fp32
  accumulate; fp16 and bf16 m16n8k16 f16 / bf16, fp32 accumulate. Useful share of the MMA's
  multiply-adds: fp64 1/8, tf32 1/8, fp16 and bf16 1/16. sm_80 and later; skipped by the harness,
  with a note on stderr, on HIP and older GPUs.
- cpu: numpy (cuda_core): np.multiply in the storage dtype (bf16: float32, rounded to bf16);
  numpy_mma (tensor_core, emulated on CPU): the same A = B(qP) on the same operand tiles, numpy matmul
  in the MMA's accumulator type with TF32 operand rounding emulated (precision.tc_operand).
- twins (role "STREAM twin", unit cuda_core): tensor_core_twin, scale.cu's tensor-core template with
  the MMA replaced by the scalar multiply in the storage format (half2 / bf16x2; same loads, stores
  and launch shape; skipped with its sibling), and numpy_mma_twin, the emulation's tiles multiplied
  elementwise. Claim C1 compares each with its tensor-core sibling.

Sizes n = 2^k elements in every precision, and the stencils' fields (`--sizes`, each timed call
`--launches` launches as a stencil's call has steps: the copy each unblocked stencil is set against,
analysis/bandwidth.py), so bytes per element halve and quarter: GB/s = 2 D n /
median time with D the precision's element size; a and b fit in the L2 (the rows' note) by bytes.
Every case draws q and b in float64, rounds them to the storage format (precision.quantize) and
poisons a with NaN; the harness (kernels/harness.py) runs it once and checks a against q b computed in
float64 from the rounded values, within precision.dot_tolerance of one term (docs/precision.md),
before it is timed; on the GPU b is drawn there and q b computed and compared there by CuPy's own
kernels (no copy of gigabytes to the host; docs/performance.md). Arrays in the L2 are timed over the same buffers, so those rows measure the cache
(as the paper's Figure 6 below half the L2). Short launches are timed as a CUDA graph.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from membound.kernels import arg_parser, load_module
from membound.kernels.harness import Case, Impl, run_cli, select
from membound.model.precision import (compute_dtype, decode, dot_tolerance, fmt, nan, quantize, rounded,
                                      store, tc_operand)
from membound.run import runinfo

IMPLS = (Impl("scale", "cuda_core", "cuda_core", "STREAM", "cuda"),
         Impl("scale", "tensor_core", "tensor_core", "STREAM", "cuda"),
         Impl("scale", "tensor_core_twin", "cuda_core", "STREAM twin", "cuda", needs_mma=True),
         Impl("scale", "numpy", "cuda_core", "STREAM", "cpu"),
         Impl("scale", "numpy_mma", "tensor_core", "STREAM", "cpu"),
         Impl("scale", "numpy_mma_twin", "cuda_core", "STREAM twin", "cpu"))
UNROLL = 2                    # scale.cu: 16-byte loads in flight per lane (fp64: 2, 4 measured alike)
THREADS = 256


def bytes_per_element(precision: str) -> int:
    """b read once, a written once."""
    return 2 * fmt(precision).bytes


def chunk(precision: str) -> int:
    """scale.cu: elements per warp step (32 lanes x UNROLL 16-byte packs)."""
    return 32 * UNROLL * (16 // fmt(precision).bytes)


def kernel_name(impl: str, precision: str) -> str:
    """scale.cu's kernel of impl in precision (fp64 keeps the names its counter rows carry)."""
    return f"scale_{impl}" + ("" if precision == "fp64" else f"_{precision}")


# ------------------------------------------------------------------------------------ the MMA on the CPU


def layout(precision: str):
    """scale.cu's tensor-core operands for one warp's 16-byte loads (32 lanes x V elements, element
    i = V lane + j): per element its MMA, A position (row, col) and D position, and B / q."""
    m, _, k = fmt(precision).mma.shape
    v = 16 // fmt(precision).bytes
    lane, j = np.divmod(np.arange(32 * v), v)
    g, t = lane // 4, lane % 4
    if (m, k) == (8, 4):    # one MMA per double: A(g, t) -> D(g, 2t); B = E, E(k, j) = 1 where j // 2 == k
        return j, (g, t), (g, 2 * t), np.repeat(np.eye(4), 2, axis=1)
    if (m, k) == (16, 8):   # x0..x3 at A(g, t), A(g, t+4), A(g+8, t), A(g+8, t+4) -> D(g + 8 (j//2), 2t + j%2)
        p = np.zeros((8, 8))
        p[np.arange(8), 2 * (np.arange(8) % 4) + np.arange(8) // 4] = 1   # P(k, 2k) = P(k+4, 2k+1) = 1
        return 0 * j, (g + 8 * (j // 2), t + 4 * (j % 2)), (g + 8 * (j // 2), 2 * t + j % 2), p
    if (m, k) == (16, 16):  # MMA j // 4 takes 4 halves at A(g + 8 (j%4 // 2), 2t + j%2), back at that D; B = [I8; 0]
        rows, cols = g + 8 * (j % 4 // 2), 2 * t + j % 2
        return j // 4, (rows, cols), (rows, cols), np.vstack([np.eye(8), np.zeros((8, 8))])
    raise ValueError(f"scale: no CPU emulation of {fmt(precision).mma.instruction}")


def emulation(a: np.ndarray, b: np.ndarray, q, precision: str, twin: bool):
    """A no-argument callable writing q b into a by scale.cu's tensor-core algorithm on the CPU: b's
    elements in the MMA operand tiles, multiplied by B = q P in the MMA's accumulator type (twin: the
    tiles multiplied elementwise in the storage format), read back from their D positions."""
    f = fmt(precision)
    mma, a_at, d_at, p = layout(precision)
    n, block = b.size, mma.size
    blocks = -(-n // block)
    acc = np.dtype(f.tc_acc).type
    x = np.zeros(blocks * block, f.dtype)
    tiles = np.zeros((blocks, mma.max() + 1, a_at[0].max() + 1, p.shape[0]), compute_dtype(precision) if twin else acc)
    q_store = quantize([q], precision)
    operand = tc_operand(q_store, precision)[0].astype(acc) * p.astype(acc)
    d = np.empty((*tiles.shape[:-1], p.shape[1]), acc)

    def run():
        x[:n] = b
        if twin:
            tiles[:, mma, *a_at] = decode(x, precision).reshape(blocks, block)
            np.multiply(tiles, decode(q_store, precision)[0], out=tiles)
            a[:] = store(tiles[:, mma, *a_at].ravel()[:n], precision)
        else:
            tiles[:, mma, *a_at] = tc_operand(x, precision).reshape(blocks, block)
            np.matmul(tiles, operand, out=d)
            a[:] = store(d[:, mma, *d_at].ravel()[:n], precision)

    return run


# ------------------------------------------------------------------------------------ runners


def cpu_runner(impl: str, a: np.ndarray, b: np.ndarray, q, precision: str = "fp64"):
    """A no-argument callable that writes q * b into a with numpy in the storage format's arithmetic
    (precision.compute_dtype; impl numpy | numpy_mma | numpy_mma_twin)."""
    if impl == "numpy":
        qc = compute_dtype(precision).type(q)
        return lambda: np.copyto(a, store(decode(b, precision) * qc, precision))
    if impl not in ("numpy_mma", "numpy_mma_twin"):
        raise ValueError(f"unknown cpu impl '{impl}' (numpy | numpy_mma | numpy_mma_twin)")
    return emulation(a, b, q, precision, twin=impl == "numpy_mma_twin")


def gpu_runner(impl: str, a, b, q, precision: str = "fp64"):
    """A no-argument callable that launches scale.cu's kernel for impl and precision on CuPy arrays a, b."""
    import cupy as cp

    if fmt(precision).bytes == 2 and cp.cuda.runtime.is_hip:
        raise ValueError(f"scale {precision}: the kernels use PTX {fmt(precision).tc_type} instructions (NVIDIA only); "
                         "on HIP use --precisions fp64 fp32")
    dtype = fmt(precision).dtype
    for name, x in (("a", a), ("b", b)):
        if x.dtype != dtype or not x.flags.c_contiguous or x.data.ptr % 16 or x.size != b.size:
            raise ValueError(f"scale: array {name} must be contiguous {dtype} of b's size on a 16-byte boundary "
                             "(the kernels load 16 bytes a lane); pass a fresh cupy array")
    kernel = load_module("scale.cu", (f"-DSCALE_UNROLL={UNROLL}",)).get_function(kernel_name(impl, precision))
    n = b.size
    # One chunk per warp plus the tail warp: on the H100 this beat a grid sized to the SMs (grid-stride
    # loop) by 6% at n >= 2^26 in fp64 (3.02 vs 2.83 TB/s; docs/kernels_scale.md).
    blocks = min(2**31 - 1, -(-(n // chunk(precision) + 1) * 32 // THREADS))
    args = (a, b, np.float64(q), np.int64(n))
    return lambda: kernel((blocks,), (THREADS,), args)


# ------------------------------------------------------------------------------------ one case


def _arrays(backend: str, n: int, rng: np.random.Generator, precision: str):
    """A NaN-poisoned a and b of n elements in `precision`'s dtype on the backend's device, b drawn in
    float64 and rounded to the format (precision.quantize; on the GPU drawn and rounded there: no
    array of gigabytes drawn on the host and uploaded)."""
    if backend == "cpu":
        b = quantize(rng.uniform(-1.0, 1.0, n), precision)
        return np.full(n, nan(precision), b.dtype), b
    import cupy as cp

    try:
        b = quantize(cp.random.RandomState(int(rng.integers(2**63))).uniform(-1.0, 1.0, n), precision)
        return cp.full(n, nan(precision), b.dtype), b
    except cp.cuda.memory.OutOfMemoryError as err:
        raise MemoryError(f"scale n={n} {precision} needs {bytes_per_element(precision) * n / 2**30:.1f} "
                          f"GiB for a and b, more than the GPU has free ({err}); lower scale.log2_max (or, for a "
                          "stencil's field, stencil.domain_2d / domain_3d) in config/config.yaml") from None


def note(impl: Impl, precision: str) -> list[str]:
    """What a tensor-core row ran: the MMA instruction, its operands and accumulator, the useful share."""
    if impl.unit != "tensor_core":
        return []
    f = fmt(precision)
    instr, (m, n, k) = f.mma.instruction, f.mma.shape
    mma = layout(precision)[0]
    per_mma = mma.size // (mma.max() + 1)     # elements one MMA scales
    rounding = " rounded by cvt.rna.tf32.f32" if f.tc_operand_u else ""
    where = "emulated on CPU: numpy matmul of the operand tiles of " if impl.name == "numpy_mma" else ""
    return [f"{where}{instr} ({f.tc_type} operands{rounding}, {instr.split('.')[6]} accumulate): {per_mma} "
            f"elements per {m * n * k} multiply-adds, 1/{m * n * k // per_mma} useful"]


def repeated(once, launches: int):
    """`once` as a call of `launches` launches, back to back."""
    def run():
        for _ in range(launches):
            once()
    return once if launches == 1 else run


def prepare(impl: Impl, backend: str, n: int, rng: np.random.Generator, l2_bytes: int | None = None,
            precision: str = "fp64", launches: int = 1) -> Case:
    """One case of size n in `precision`: q and b drawn in float64 and rounded to it, NaN-poisoned a,
    checked against q b in float64 within the format's bound; each timed call `launches` launches
    (a stencil's field: as many as a stencil's call has steps, so that both pay the same gaps)."""
    q = float(rounded([rng.uniform(0.5, 2.0)], precision)[0])
    a, b = _arrays(backend, n, rng, precision)
    run = repeated((cpu_runner if backend == "cpu" else gpu_runner)(impl.name, a, b, q, precision), launches)
    ref = q * decode(b, precision).astype(np.float64)   # where b lies: on the GPU CuPy's own kernel, compared there
    tol = dot_tolerance(precision, impl.unit, 1, [1.0], [1.0])     # |q||b| = |q b|: the norms are equal
    notes = note(impl, precision) + [f"checked: rel_err <= {tol:.3g} (precision.dot_tolerance, 1 term)"]
    nbytes = bytes_per_element(precision) * n
    if l2_bytes and nbytes <= l2_bytes:
        notes.append(f"a and b ({nbytes / 2**20:g} MiB) fit in the L2 ({l2_bytes / 2**20:g} MiB): "
                     "repeated launches over one buffer measure the cache")
    row = {"problem": problem(n, launches), "n": n, "work_items": n * launches}
    if launches > 1:
        row["steps"] = launches
        notes.append(f"one timed call = {launches} launches, as a stencil's call of {launches} steps on a field of "
                     f"{n} points")
    return Case(run=run, output=lambda _: a, reference=ref, tol=tol, what=f"scale {impl.name} {precision} n={n}",
                row=row, work=nbytes * launches, metric="GB/s", notes=notes, precision=precision)


def problem(n: int, launches: int = 1) -> str:
    """'n=2^k' for powers of two, else 'n=<n>'; ' x<launches>' where a timed call has more than one."""
    k = int(math.log2(n)) if n > 0 else -1
    return (f"n=2^{k}" if 2**k == n else f"n={n}") + (f" x{launches}" if launches > 1 else "")


# ------------------------------------------------------------------------------------ CLI


def sizes_log2(low: int, high: int, step: int = 1) -> list[int]:
    """k = low, low + step, ... below high, and high: the ends always run."""
    return sorted({*range(low, high, step), high})


def main(argv=None):
    parser = arg_parser("STREAM SCALE (a = q b) per precision on CUDA cores and tensor cores.")
    parser.add_argument("--log2-min", type=int, required=True, help="smallest size 2^k elements")
    parser.add_argument("--log2-max", type=int, required=True, help="largest size 2^k elements")
    parser.add_argument("--log2-step", type=int, default=1, help="k from --log2-min in steps of this (and --log2-max)")
    parser.add_argument("--sizes", type=int, nargs="*", default=[],
                        help="more sizes n (elements), such as the stencils' fields: the copy they are held to")
    parser.add_argument("--launches", type=int, default=1, help="launches a timed call of the --sizes cases")
    args = parser.parse_args(argv)
    if not (1 <= args.log2_min <= args.log2_max <= 40 and args.log2_step >= 1):
        parser.error(f"--log2-min {args.log2_min} / --log2-max {args.log2_max} / --log2-step {args.log2_step}: need "
                     "1 <= min <= max <= 40 and step >= 1")
    if args.warmup < 0 or args.reps < 1:
        parser.error(f"--warmup {args.warmup} / --reps {args.reps}: need warmup >= 0 and reps >= 1")
    if any(n < 1 for n in args.sizes) or args.launches < 1:
        parser.error(f"--sizes {' '.join(map(str, args.sizes))} / --launches {args.launches}: need positive sizes "
                     "and launches")
    powers = [2**k for k in sizes_log2(args.log2_min, args.log2_max, args.log2_step)]
    sizes = sorted([(n, 1) for n in powers] + [(n, args.launches) for n in dict.fromkeys(args.sizes)])
    rng = np.random.default_rng()
    l2_bytes = runinfo.describe(args.backend)["l2_bytes"] or None
    jobs = [(impl, partial(prepare, impl, args.backend, n, rng, l2_bytes, p, launches))
            for n, launches in sizes for impl, p in select(IMPLS, args.backend, args.precisions)]
    run_cli(args, jobs, "{value:10.1f} GB/s")

