"""SpMV, y = A x with the matrix's own values, on CUDA cores (cuSPARSE CSR) and tensor cores (DASP-style),
in every precision of PRECISIONS, for paper 000 Figure 7 (effective GFLOP/s = 2 nnz / t).

Implementations (impl: unit, role):
- cuda: cusparse_csr (cuda_core, cuSPARSE): cusparseSpMV through CuPy's low-level bindings (fp64; fp32;
  fp16 and bf16 values and vectors with fp32 compute). The CSR and vector descriptors, the buffer-size query, the
  buffer and cusparseSpMV_preprocess (where CuPy has it) are done once outside the timed region, as
  DASP's baseline does: the timed region holds ONE cusparseSpMV call (CUSPARSE_SPMV_CSR_ALG1).
  dasp_tc (tensor_core, DASP): spmv_tc.cu built for the precision (DMMA m8n8k4, TF32 m16n8k8, f16 and bf16
  m16n8k16 with f32 accumulation) on the plan of spmv_plan.py (DASP's row classes and short-row packing; made once
  per matrix, spmv_plans.py), packed once outside the timed region, as DASP's preprocessing is; one launch.
  dasp_tc_twin (cuda_core, DASP twin): the same source built with -DTWIN=1: the same plan, loads,
  stores and launch, FMAs of the lane's own products where dasp_tc issues an MMA (issue 15).
- cpu: scipy_csr (cuda_core, cuSPARSE) in the precision's dtype (fp16 and bf16 values with fp32 accumulation),
  numpy_mma (tensor_core, DASP) and numpy_mma_twin (cuda_core, DASP twin): spmv/emulate.py, the same
  plan emulated on the CPU in the precision's arithmetic.

Checks (membound.precision): the values and x are rounded to the precision (a matrix whose values, or
row sums of |A|, exceed fp16's range is not run in fp16: a note on stderr names it and the largest
value); the reference is A x in float64 from the rounded values, the tolerance the a-priori bound
`dot_tolerance` over the longest row. Every impl runs once on a fresh x with y poisoned (NaN) and is
checked by the harness before it is timed (on the device on CUDA). A tensor-core row's note names its
MMA, accumulator and plan.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from membound.kernels import arg_parser, load_module
from membound.kernels.harness import Case, Impl, run_cli, select
from membound.kernels.spmv.emulate import accumulator, emulator
from membound.kernels.spmv.tc_plan import SEGS, Plan, plan, slots_per_lane
from membound.matrices import csr
from membound.model.precision import decode, dot_tolerance, fmt, nan, of_dtype, quantize, store

IMPLS = (Impl("spmv", "cusparse_csr", "cuda_core", "cuSPARSE", "cuda"),
         Impl("spmv", "dasp_tc", "tensor_core", "DASP", "cuda"),
         Impl("spmv", "dasp_tc_twin", "cuda_core", "DASP twin", "cuda", needs_mma=True),
         Impl("spmv", "scipy_csr", "cuda_core", "cuSPARSE", "cpu"),
         Impl("spmv", "numpy_mma", "tensor_core", "DASP", "cpu"),
         Impl("spmv", "numpy_mma_twin", "cuda_core", "DASP twin", "cpu"))
# spmv_tc.cu's knobs (#ifndef there; docs/kernels_spmv.md) per tuned precision (Format.tuned) but TC_MINB, TC_AHEAD
TC_UNROLL, TC_MINB, TC_AHEAD = {"fp64": 4, "fp32": 4, "fp16": 2}, 4, 2048
TC_SEGFREE = {"fp64": 1, "fp32": 0, "fp16": 1}
TC_PIPE = {"fp64": 1, "fp32": 0, "fp16": 1}
TC_PREF = {"fp64": (4, 0), "fp32": (4, 4), "fp16": (16, 16)}  # tiles, matrix in the L2 / beyond it
ORDER = 0  # 1: y of the groups and empty rows left in the plan's order (spmv_tc.cu TC_ORDER), in dev["yp"]
THREADS = 128  # a block: its SM slots wait for its slowest warp (docs/kernels_spmv.md, "Threads a block")


def mma_shape(precision: str) -> tuple[str, int]:
    """The PTX mma.sync of `precision`'s tensor-core kernel (its record's, precision.Format.mma: a tile
    row's K = 4 slots_per_lane) and the flops one MMA does."""
    mma = fmt(precision).mma
    if mma.shape[2] != 4 * slots_per_lane(precision):
        raise ValueError(f"spmv_tc.cu's tile rows hold {4 * slots_per_lane(precision)} slots, not {precision}'s "
                         f"MMA k = {mma.shape[2]}")
    return mma.instruction, 2 * mma.shape[0] * mma.shape[1] * mma.shape[2]


# ------------------------------------------------------------------------------------ runners


def cpu_runner(impl: str, matrix: sp.csr_matrix, x: np.ndarray, y: np.ndarray, precision: str = "fp64",
               p: Plan | None = None):
    """A no-argument callable that writes A x into y on the host, `matrix` and x in the precision's
    dtype (impl scipy_csr: scipy in the accumulator's dtype; numpy_mma | numpy_mma_twin: plan `p`), y
    rounded to storage."""
    acc = accumulator(precision)
    if impl == "scipy_csr":
        wide, xw = decoded(matrix, precision).astype(acc), decode(x, precision).astype(acc)

        def run():
            y[:] = store(wide @ xw, precision)
        return run
    if impl not in ("numpy_mma", "numpy_mma_twin"):
        raise ValueError(f"unknown cpu impl '{impl}' (scipy_csr | numpy_mma | numpy_mma_twin)")
    emulate = emulator(p or plan(matrix.indptr, slots_per_lane(precision)), matrix, precision, impl.endswith("_twin"))

    def run():
        y[:] = store(emulate(x), precision)
    return run


def cusparse_runner(matrix, x, y, precision: str = "fp64"):
    """A no-argument callable running ONE cusparseSpMV (CSR_ALG1) of the device CSR `matrix` (indptr,
    indices, data cupy arrays and shape) on x into y, data in `precision`, computing in its accumulator
    (fp32 for fp16); set-up is done here, once. Also returns a note on what the timed region holds."""
    import cupy as cp
    from cupy.cuda import device
    from cupy_backends.cuda.libs import cusparse as cs

    indptr, indices, data, (rows, cols) = matrix
    handle = device.get_cusparse_handle()
    alg = getattr(cs, "CUSPARSE_SPMV_CSR_ALG1", 2)  # the cusparseSpMVAlg_t value since CUDA 11.2
    op = cs.CUSPARSE_OPERATION_NON_TRANSPOSE
    acc = accumulator(precision)
    alpha, beta = np.array(1.0, acc), np.array(0.0, acc)
    kind, compute = fmt(precision).cuda_type, fmt(of_dtype(acc)).cuda_type   # cudaDataType_t of storage, of the sums
    mat = cs.createCsr(rows, cols, data.size, indptr.data.ptr, indices.data.ptr, data.data.ptr,
                       cs.CUSPARSE_INDEX_32I, cs.CUSPARSE_INDEX_32I, cs.CUSPARSE_INDEX_BASE_ZERO, kind)
    vx, vy = cs.createDnVec(cols, x.data.ptr, kind), cs.createDnVec(rows, y.data.ptr, kind)
    args = (handle, op, alpha.ctypes.data, mat, vx, beta.ctypes.data, vy, compute, alg)
    cs.setStream(handle, cp.cuda.get_current_stream().ptr)
    size = cs.spMV_bufferSize(*args)
    buffer = cp.empty(max(size, 1), cp.int8)
    preprocess = hasattr(cs, "spMV_preprocess")
    if preprocess:
        cs.spMV_preprocess(*args, buffer.data.ptr)

    def run():
        cs.spMV(*args, buffer.data.ptr)

    run.keep = (alpha, beta, buffer, x, y, matrix)  # alive as long as the descriptors are used
    note = (f"timed: one cusparseSpMV (CUSPARSE_SPMV_CSR_ALG1, {precision} data, {acc.name} compute, int32 indices); "
            f"descriptors, buffer ({size} B){' and cusparseSpMV_preprocess' if preprocess else ''} set up once outside")
    return run, note


def tc_knobs(precision: str, twin: bool, packed: int, l2: int) -> dict:
    """spmv_tc.cu's -D knobs; TC_PREF by the packed matrix's bytes against the L2's (docs/kernels_spmv.md)."""
    p = fmt(precision).tuned
    return dict(PREC=precision, TC_UNROLL=TC_UNROLL[p], TC_MINB=TC_MINB, TC_SEGFREE=TC_SEGFREE[p], TC_PIPE=TC_PIPE[p],
                TC_AHEAD=TC_AHEAD, TC_PREF=TC_PREF[p][packed > l2], TC_THREADS=THREADS, TWIN=int(twin), TC_ORDER=ORDER)


def tc_runner(matrix, x, y, p: Plan, precision: str = "fp64", twin: bool = False):
    """A no-argument callable launching spmv_tc.cu for plan `p` on the device CSR `matrix` in `precision`
    (twin: its CUDA-core twin, the same source built with -DTWIN=1), and a note."""
    import cupy as cp

    dev = p.packed(*matrix[:3], accumulator(precision))
    knobs = tc_knobs(precision, twin, dev["pval"].nbytes + dev["pcol"].nbytes,
                     cp.cuda.Device().attributes["L2CacheSize"])
    kernel = load_module("spmv_tc.cu", tuple(f"-D{k}={v}" for k, v in knobs.items())).get_function("spmv_tc")
    warps = len(p.desc)
    dev["yp"] = cp.full(len(p.rows), nan(precision), y.dtype) if ORDER else y   # unused without ORDER
    args = (dev["desc"], np.int64(warps), dev["pval"], dev["pcol"], x, y, dev["yp"], dev["rows"], dev["long_row"],
            dev["long_pieces"], dev["long_acc"], dev["long_cnt"])
    grid = -(-warps * 32 // THREADS)

    def run():
        if warps:
            kernel((grid,), (THREADS,), args)

    run.keep = dev
    what = "spmv_tc.cu -DTWIN=1 (FMAs of the lanes' products, not mma.sync; same plan, loads)" if twin else "spmv_tc.cu"
    return run, f"timed: 1 launch of {what}, TC_PREF={knobs['TC_PREF']}"


def tc_note(p: Plan, nnz: int, precision: str) -> str:
    """The tensor-core row's work: its MMA, their count and padding ratio, and the plan."""
    shape, flops = mma_shape(precision)
    ratio = flops * p.mma / (2 * nnz) if nnz else float("nan")
    return (f"{shape} x {p.mma} ({flops} flop each), padding ratio {ratio:.1f} (MMA flops / 2nnz); "
            f"{p.slots - nnz} padding slots of {p.slots}; {len(p.desc)} warps (spmv_plan.py: "
            f"rows of 1..256 nnz packed up to {SEGS[p.s]} to a tile row of {p.k} slots, 8 tile rows a group; "
            f"{len(p.long_row)} longer rows in {int(p.long_pieces.sum())} pieces); plan made once outside")


# ------------------------------------------------------------------------------------ one matrix


REFERENCE = ("raw I indptr, raw I indices, raw T data, raw T x", "float64 y, float64 b", """
    double s = 0.0, m = 0.0;  // T float16: through its operator float
    for (I j = indptr[i]; j < indptr[i + 1]; j++) {
        double a = data[j], v = x[indices[j]];
        s = __dadd_rn(s, __dmul_rn(a, v));
        m = __dadd_rn(m, __dmul_rn(fabs(a), fabs(v)));
    }
    y = s; b = m;""", "spmv_reference")


def device_reference(matrix, x):
    """A x and |A||x| in float64 on the device, of the device CSR `matrix` and x (both in one dtype):
    one thread per row summing its products in column order, unfused, as scipy's csr_matvec does."""
    import cupy as cp

    indptr, indices, data, (rows, _) = matrix
    y, b = cp.empty((2, rows), cp.float64)
    cp.ElementwiseKernel(*REFERENCE)(indptr, indices, data, x, y, b)
    return y, b


def _device_csr(matrix: sp.csr_matrix, name: str):
    """The CSR arrays on the GPU (values in the matrix's dtype), or MemoryError naming the matrix and its nnz."""
    import cupy as cp

    try:
        return (*(cp.asarray(a.astype(np.int32, copy=False)) for a in (matrix.indptr, matrix.indices)),
                cp.asarray(matrix.data), matrix.shape)
    except cp.cuda.memory.OutOfMemoryError as err:
        raise MemoryError(f"spmv {name} ({matrix.nnz} nnz, {matrix.nnz * 12 / 2**30:.1f} GiB of values and "
                          f"indices) does not fit in the GPU's free memory ({err}); use a smaller matrix") from None


def decoded(matrix: sp.csr_matrix, precision: str) -> sp.csr_matrix:
    """`matrix` (values in `precision`'s storage) with its values as numbers (precision.decode)."""
    return sp.csr_matrix((decode(matrix.data, precision), matrix.indices, matrix.indptr), shape=matrix.shape)


def rounded(matrix: sp.csr_matrix, name: str, precision: str, row_sums=None) -> sp.csr_matrix | None:
    """`matrix` with its values rounded to `precision`, or None (a note on stderr) where they, or a row's
    sum of |values| (|A x| for |x| <= 1; `row_sums`: the float64 |A| @ 1, computed here if None), exceed
    the format's range."""
    try:
        values = quantize(matrix.data, precision)
        quantize(abs(matrix) @ np.ones(matrix.shape[1]) if row_sums is None else row_sums, precision)
    except ValueError as err:
        print(f"note: spmv {name} not run in {precision}: {err}", file=sys.stderr)
        return None
    return sp.csr_matrix((values, matrix.indices, matrix.indptr), shape=matrix.shape)


def jobs(backend: str, matrix: sp.csr_matrix, meta: dict, rng: np.random.Generator,
         precisions=("fp64",), plans: dict | None = None) -> list[tuple]:
    """(impl, prepare) of every impl and precision on one matrix, for harness.measure; per precision the rounded
    matrix, its plan (`plans` by S, else made) and device CSR once, shared by the impls (one precision held)."""
    name = meta["name"]
    rows, cols = matrix.shape
    longest = int(np.diff(matrix.indptr).max(initial=0))
    chosen = select(IMPLS, backend, precisions)
    row_sums = abs(matrix) @ np.ones(cols)
    matrices = {p: rounded(matrix, name, p, row_sums) for p in dict.fromkeys(p for _, p in chosen)}
    held: dict = {}

    def state(p: str):
        if p not in held:
            held.clear()
            q = matrices[p]
            pl = plans[slots_per_lane(p)] if plans else plan(q.indptr, slots_per_lane(p))
            held[p] = (q, pl, _device_csr(q, name) if backend == "cuda" else None)
        return held[p]

    def prepare(impl: Impl, p: str) -> Case:
        q, pl, dev = state(p)
        dtype = fmt(p).dtype
        x_host = quantize(rng.uniform(-1.0, 1.0, cols), p)
        if backend == "cpu":
            wide, xw = decoded(q, p).astype(np.float64), decode(x_host, p).astype(np.float64)
            reference, magnitude = wide @ xw, abs(wide) @ np.abs(xw)
            x, y = x_host, np.full(rows, nan(p), dtype)
            run, notes = cpu_runner(impl.name, q, x, y, p, pl), ["emulated on CPU"] if impl.name.startswith("numpy_mma") else []
        else:
            import cupy as cp

            x, y = cp.asarray(x_host), cp.full(rows, nan(p), dtype)
            reference, magnitude = device_reference((*dev[:2], decode(dev[2], p), dev[3]), decode(x, p))
            run, *notes = (cusparse_runner(dev, x, y, p) if impl.name == "cusparse_csr"
                           else tc_runner(dev, x, y, pl, p, twin=impl.name.endswith("_twin")))
        tol = dot_tolerance(p, impl.unit, longest, reference, magnitude)
        tc = impl.unit == "tensor_core"
        if tc:
            notes.append(tc_note(pl, matrix.nnz, p))
        return Case(run=run, output=lambda _: decode(y, p).astype(np.float64), reference=reference, tol=tol,
                    what=f"spmv {impl.name} {p} {name}",
                    row={"problem": name, "code": meta.get("code", ""), "source": meta["source"], "rows": rows,
                         "cols": cols, "nnz": matrix.nnz, "work_items": matrix.nnz, "mma": pl.mma if tc else None},
                    work=2 * matrix.nnz, metric="GFLOP/s", notes=notes, precision=p)

    return [(impl, partial(prepare, impl, p)) for impl, p in chosen if matrices[p] is not None]


# ------------------------------------------------------------------------------------ CLI


def load_matrix(path) -> tuple[sp.csr_matrix, dict]:
    """The CSR file at `path` and its metadata, or ValueError naming the file and the fix."""
    if not Path(path).is_file():
        raise ValueError(f"--matrix {path}: no such file; make it with the matrices rules (csr_file(name))")
    matrix, meta = csr.load(path)
    missing = [key for key in ("name", "source") if key not in meta]
    if missing:
        raise ValueError(f"--matrix {path}: metadata lacks {missing}; write it with membound.matrices.csr.save")
    return matrix, meta


def main(argv=None):
    from membound.kernels.spmv import plans as spmv_plans   # here: `python -m membound.kernels.spmv.plans` runs it

    parser = arg_parser("SpMV (y = A x) with cuSPARSE CSR and a DASP-style tensor-core kernel, per precision.")
    parser.add_argument("--matrix", required=True, help="CSR file (membound.matrices.csr format)")
    parser.add_argument("--plans", help="its tensor-core plans (rule spmv_plans); default: made here")
    args = parser.parse_args(argv)
    if args.warmup < 0 or args.reps < 1:
        parser.error(f"--warmup {args.warmup} / --reps {args.reps}: need warmup >= 0 and reps >= 1")
    try:
        matrix, meta = load_matrix(args.matrix)
        plans = spmv_plans.load(args.plans, matrix.indptr) if args.plans else None
    except ValueError as err:
        parser.error(str(err))
    run_cli(args, jobs(args.backend, matrix, meta, np.random.default_rng(), args.precisions, plans),
            "{value:9.2f} GFLOP/s  err {rel_err:.1e}")

