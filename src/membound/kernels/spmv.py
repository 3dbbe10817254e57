"""SpMV, y = A x in FP64 with the matrix's own values, on CUDA cores (cuSPARSE CSR) and FP64 tensor
cores (DASP-style), for paper 000 Figure 7 (effective GFLOP/s = 2 nnz / t).

Implementations (impl: unit, role):
- cuda: cusparse_csr (cuda_core, cuSPARSE): cusparseSpMV through CuPy's low-level bindings. The CSR
  and vector descriptors, the buffer-size query, the buffer and cusparseSpMV_preprocess (where CuPy
  has it) are done once outside the timed region, as DASP's baseline does: the timed region holds
  ONE cusparseSpMV call (CUSPARSE_SPMV_CSR_ALG1). (CuPy's `A @ x` would also time descriptor set-up
  and a CSR partition kernel on every call.)
  dasp_tc (tensor_core, DASP): spmv_tc.cu, mma.sync m8n8k4 on groups of 8 rows x chunks of 4
  nonzeros, keeping the diagonal of each 8x8 result, with DASP's row classes (short, medium, long;
  see spmv_plan.py). The plan is made once outside the timed region, as DASP's preprocessing is.
  dasp_tc_twin (cuda_core, DASP twin): the same source built with -DTWIN=1: the same plan, loads,
  stores and launches, one FMA per lane where dasp_tc issues an MMA (issue 15).
- cpu: scipy_csr (cuda_core, cuSPARSE), numpy_mma (tensor_core, DASP, emulated on CPU: the same plan,
  its 8x4 blocks packed once, then numpy matmul of each block by its gathered x) and numpy_mma_twin
  (cuda_core, DASP twin: the same blocks, elementwise products summed per row).

Every impl runs once on a fresh random x with y poisoned (NaN) and is checked against scipy's A @ x
(float64) by the harness (kernels/harness.py) before it is timed; a mismatch fails the run with the
error norm. The note of a
tensor-core row gives its MMA count and padding ratio (MMA flops / 2 nnz, 512 flops per MMA).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from membound.kernels import arg_parser, load_module
from membound.kernels.harness import Case, Impl, run_jobs, select
from membound.kernels.spmv_plan import LONG, PIECE, SHORT, WINDOW, Plan, blocks, plan
from membound.matrices import csr
from membound.run.measure import guarded

IMPLS = (Impl("spmv", "cusparse_csr", "cuda_core", "cuSPARSE", "cuda"),
         Impl("spmv", "dasp_tc", "tensor_core", "DASP", "cuda"),
         Impl("spmv", "dasp_tc_twin", "cuda_core", "DASP twin", "cuda", needs_mma=True),
         Impl("spmv", "scipy_csr", "cuda_core", "cuSPARSE", "cpu"),
         Impl("spmv", "numpy_mma", "tensor_core", "DASP", "cpu"),
         Impl("spmv", "numpy_mma_twin", "cuda_core", "DASP twin", "cpu"))
TOL = 1e-12          # sums in another order; rounding only
FLOPS_PER_MMA = 2 * 8 * 8 * 4
TC_UNROLL = 4        # spmv_tc.cu: chunks loaded before their MMAs
THREADS = 256


# ------------------------------------------------------------------------------------ runners


def cpu_runner(impl: str, matrix: sp.csr_matrix, x: np.ndarray, y: np.ndarray):
    """A no-argument callable that writes A x into y on the host (impl scipy_csr | numpy_mma |
    numpy_mma_twin: the twin multiplies each lane's A(r,c) by its B(c,r) instead of the matmul)."""
    if impl == "scipy_csr":
        def run():
            y[:] = matrix @ x
        return run
    if impl not in ("numpy_mma", "numpy_mma_twin"):
        raise ValueError(f"unknown cpu impl '{impl}' (scipy_csr | numpy_mma | numpy_mma_twin)")
    slots, out_rows = blocks(matrix.indptr, plan(matrix.indptr))
    valid = slots >= 0
    a = np.where(valid, matrix.data[slots.clip(0)], 0.0).reshape(-1, 8, 4)  # packed once, as DASP
    cols = np.where(valid, matrix.indices[slots.clip(0)], 0)
    keep = out_rows >= 0
    rows = out_rows[keep]
    diag = np.arange(8)
    twin = impl == "numpy_mma_twin"

    def run():
        b = np.where(valid, x[cols], 0.0).reshape(-1, 8, 4)  # lane 4r+c: B(c, r)
        d = (a * b).sum(axis=2) if twin else np.matmul(a, b.transpose(0, 2, 1))[:, diag, diag]
        y[:] = np.bincount(rows, weights=d[keep], minlength=len(y))

    return run


def cusparse_runner(matrix, x, y):
    """A no-argument callable running ONE cusparseSpMV (CSR_ALG1) of the device CSR `matrix`
    (indptr, indices, data cupy arrays and shape) on x into y; set-up is done here, once. Also returns
    a note on what the timed region holds."""
    import cupy as cp
    from cupy.cuda import device, runtime
    from cupy_backends.cuda.libs import cusparse as cs

    indptr, indices, data, (rows, cols) = matrix
    handle = device.get_cusparse_handle()
    alg = getattr(cs, "CUSPARSE_SPMV_CSR_ALG1", 2)  # the cusparseSpMVAlg_t value since CUDA 11.2
    op = cs.CUSPARSE_OPERATION_NON_TRANSPOSE
    alpha, beta = np.array(1.0), np.array(0.0)
    mat = cs.createCsr(rows, cols, data.size, indptr.data.ptr, indices.data.ptr, data.data.ptr,
                       cs.CUSPARSE_INDEX_32I, cs.CUSPARSE_INDEX_32I, cs.CUSPARSE_INDEX_BASE_ZERO,
                       runtime.CUDA_R_64F)
    vx = cs.createDnVec(cols, x.data.ptr, runtime.CUDA_R_64F)
    vy = cs.createDnVec(rows, y.data.ptr, runtime.CUDA_R_64F)
    args = (handle, op, alpha.ctypes.data, mat, vx, beta.ctypes.data, vy, runtime.CUDA_R_64F, alg)
    cs.setStream(handle, cp.cuda.get_current_stream().ptr)
    size = cs.spMV_bufferSize(*args)
    buffer = cp.empty(max(size, 1), cp.int8)
    preprocess = hasattr(cs, "spMV_preprocess")
    if preprocess:
        cs.spMV_preprocess(*args, buffer.data.ptr)

    def run():
        cs.spMV(*args, buffer.data.ptr)

    run.keep = (alpha, beta, buffer, x, y, matrix)  # alive as long as the descriptors are used
    note = (f"timed: one cusparseSpMV (CUSPARSE_SPMV_CSR_ALG1, FP64, int32 indices); descriptors, "
            f"buffer ({size} B){' and cusparseSpMV_preprocess' if preprocess else ''} set up once outside")
    return run, note


def tc_runner(matrix, x, y, p: Plan, twin: bool = False):
    """A no-argument callable launching spmv_tc.cu for plan `p` on the device CSR `matrix` (twin: its
    CUDA-core twin, the same source built with -DTWIN=1), and a note."""
    import cupy as cp

    indptr, indices, data, _ = matrix
    module = load_module("spmv_tc.cu", (f"-DTC_UNROLL={TC_UNROLL}", f"-DTWIN={int(twin)}"))
    rows_kernel, long_kernel = module.get_function("spmv_tc_rows"), module.get_function("spmv_tc_long")
    dev = {name: cp.asarray(getattr(p, name)) for name in
           ("group_rows", "pack_ptr", "long_rows", "long_piece_ptr", "piece_begin", "piece_end")}
    slots = cp.asarray(p.pack_slots)
    dev["pack_col"] = cp.where(slots >= 0, indices[slots.clip(0)], 0).astype(cp.int32)   # packed once, as DASP
    dev["pack_val"] = cp.where(slots >= 0, data[slots.clip(0)], 0.0)
    del slots
    n_groups, n_long, n_pieces = len(p.group_chunks), len(p.long_rows), len(p.piece_begin)
    partial = cp.empty(max(n_pieces, 1))
    warps = n_groups + -(-n_long // 32)
    rows_args = (indptr, indices, data, x, y, dev["group_rows"], np.int64(p.n_short), np.int64(n_groups),
                 dev["pack_ptr"], dev["pack_col"], dev["pack_val"], dev["long_rows"], dev["long_piece_ptr"], partial,
                 np.int32(n_long))
    long_args = (indices, data, x, dev["piece_begin"], dev["piece_end"], np.int32(n_pieces), partial)
    per_block = THREADS // 32

    def run():
        if n_pieces:
            long_kernel((-(-n_pieces // per_block),), (THREADS,), long_args)
        if warps:
            rows_kernel((-(-warps // per_block),), (THREADS,), rows_args)

    run.keep = dev
    launches = int(n_pieces > 0) + int(warps > 0)
    what = "spmv_tc.cu -DTWIN=1 (FMA per lane instead of mma.sync, same plan and loads)" if twin else "spmv_tc.cu"
    return run, f"timed: {launches} launch(es) of {what}"


def tc_note(p: Plan, nnz: int) -> str:
    """The tensor-core row's work: its MMAs and padding ratio, and how rows were grouped."""
    ratio = FLOPS_PER_MMA * p.mma / (2 * nnz) if nnz else float("nan")
    return (f"mma.sync m8n8k4 x {p.mma} ({FLOPS_PER_MMA} flop each), padding ratio {ratio:.2f} (MMA flops / 2nnz); "
            f"groups of 8 rows (sorted by length within {WINDOW}-row windows; rows of <= {SHORT} nnz read in place, "
            f"longer ones packed in MMA order with {int((p.pack_slots < 0).sum())} "
            f"padding slots) x chunks of 4 nnz, diagonal kept; "
            f"{len(p.long_rows)} rows of > {LONG} nnz in {len(p.piece_begin)} pieces of <= {PIECE}; plan made once outside")


# ------------------------------------------------------------------------------------ one matrix


def _device_csr(matrix: sp.csr_matrix, name: str):
    """The CSR arrays on the GPU, or MemoryError naming the matrix and its nnz."""
    import cupy as cp

    try:
        return (cp.asarray(matrix.indptr.astype(np.int32)), cp.asarray(matrix.indices.astype(np.int32)),
                cp.asarray(matrix.data.astype(np.float64)), matrix.shape)
    except cp.cuda.memory.OutOfMemoryError as err:
        raise MemoryError(f"spmv {name} ({matrix.nnz} nnz, {matrix.nnz * 12 / 2**30:.1f} GiB of values and "
                          f"indices) does not fit in the GPU's free memory ({err}); use a smaller matrix") from None


def jobs(backend: str, matrix: sp.csr_matrix, meta: dict, rng: np.random.Generator,
         precisions=("fp64",)) -> list[tuple]:
    """(impl, prepare) of every impl on one matrix, for harness.measure; the plan and the device CSR
    are made once, shared by the impls."""
    name = meta["name"]
    rows, cols = matrix.shape
    p = plan(matrix.indptr)
    dev = _device_csr(matrix, name) if backend == "cuda" else None

    def prepare(impl: Impl) -> Case:
        x_host = rng.uniform(-1.0, 1.0, cols)
        if backend == "cpu":
            x, y = x_host, np.full(rows, np.nan)
            run, notes = cpu_runner(impl.name, matrix, x, y), ["emulated on CPU"] if impl.name.startswith("numpy_mma") else []
            host = lambda: y  # noqa: E731
        else:
            import cupy as cp

            x, y = cp.asarray(x_host), cp.full(rows, np.nan)
            run, note = (cusparse_runner(dev, x, y) if impl.name == "cusparse_csr"
                         else tc_runner(dev, x, y, p, twin=impl.name.endswith("_twin")))
            notes, host = [note], y.get
        tc = impl.unit == "tensor_core"
        if tc:
            notes.append(tc_note(p, matrix.nnz))
        return Case(run=run, output=lambda _: host(), reference=matrix @ x_host, tol=TOL, what=f"spmv {impl.name} {name}",
                    row={"problem": name, "code": meta.get("code", ""), "source": meta["source"], "rows": rows,
                         "cols": cols, "nnz": matrix.nnz, "work_items": matrix.nnz, "mma": p.mma if tc else None},
                    work=2 * matrix.nnz, metric="GFLOP/s", notes=notes)

    return [(impl, partial(prepare, impl)) for impl, _ in select(IMPLS, backend, precisions)]


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
    parser = arg_parser("SpMV (y = A x, FP64) with cuSPARSE CSR and a DASP-style FP64 tensor-core kernel.")
    parser.add_argument("--matrix", required=True, help="CSR file (membound.matrices.csr format)")
    args = parser.parse_args(argv)
    if args.warmup < 0 or args.reps < 1:
        parser.error(f"--warmup {args.warmup} / --reps {args.reps}: need warmup >= 0 and reps >= 1")
    try:
        matrix, meta = load_matrix(args.matrix)
    except ValueError as err:
        parser.error(str(err))
    run_jobs(args.backend, jobs(args.backend, matrix, meta, np.random.default_rng(), args.precisions), args.out, args.warmup,
             args.reps, args.counters, args.rep, "{value:9.2f} GFLOP/s  err {rel_err:.1e}")


if __name__ == "__main__":
    guarded(main)
