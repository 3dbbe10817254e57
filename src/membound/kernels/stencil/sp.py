"""The stencils on 2:4-sparse tensor cores (impl tc_sparse, the SPIDER / SparStencil role): the
transformed operands (membound.model.sparse24) in the layout of kernels/stencil/sp_layout.py, their
CUDA runner (stencil_sp.cu in 2D, stencil_sp3.cu in 3D), the CPU backend's emulation of the same
product, and the case with its check (membound.kernels.stencil dispatches here).
"""

from __future__ import annotations

import math

import numpy as np

from membound.kernels.harness import Case
from membound.kernels.stencil.cpu import reference, sampled_reference, values as as_float64
from membound.kernels.stencil.sp_layout import LAYOUT, module, pack_lanes, plane_groups, source, tile_for
from membound.model import sparse24
from membound.model.precision import fmt, nan, quantize, rounded, store, tc_operand
from membound.model.sparse24_banks import b_offsets
from membound.run import measure


def operand(a: np.ndarray, precision: str) -> np.ndarray:
    """The fused weights as the tensor cores see them: rounded to storage, then to the operand type."""
    return tc_operand(quantize(a, precision), precision)


# ---------------------------------------------------------------------------------------- CPU


def emulate(form: sparse24.SparseForm, x: np.ndarray, launches: int) -> np.ndarray:
    """`launches` applications on the CPU with the operands the tensor cores see (the data rounded to
    the operand type, the weights by `operand`, decompressed from the packed form), products and sums
    in float32 (the accumulator), each result rounded to storage: mma.sp emulated with numpy matmul."""
    p = form.precision
    values, nibbles = sparse24.compress(operand(form.a, p), p)
    a = sparse24.decompress(values, nibbles, p)
    for _ in range(launches):
        x = store(sparse24.apply(form, np.asarray(tc_operand(x, p), dtype=np.float32), a, np.float32), p)
    return x


# --------------------------------------------------------------------------------------- CUDA


def operands(form: sparse24.SparseForm, dims: int) -> tuple[dict, int, np.ndarray, np.ndarray, np.ndarray]:
    """(macros, dynamic shared bytes, afrag, meta, offs): the kernel's module (`module`) and its fragment
    tables, in the order its source reads them (3D: fragments in group order, B offsets per group)."""
    p = form.precision
    macros, smem = module(form, dims)
    values, nibbles = sparse24.compress(operand(form.a, p), p)
    afrag, meta = pack_lanes(values, nibbles, p)
    offs = b_offsets(form, macros["PITCH"], bool(macros["RUNS"]))
    if dims == 3:
        order, groups = plane_groups(form)
        afrag, meta, offs = afrag[order], meta[order], offs[order[groups >> 16]]
    if offs.shape[-1] != macros["NOFF"] or len(afrag) != macros["NFRAG"]:
        raise AssertionError(f"stencil_sp operands {offs.shape}, {afrag.shape} disagree with its macros {macros}")
    return macros, smem, afrag, meta, offs


def launch_shape(form: sparse24.SparseForm, dims: int, shape: tuple) -> tuple[tuple, int]:
    """(grid, threads) of one launch on a field of `shape`."""
    tile = tile_for(form, dims)
    nz, ny, nx = (1,) * (3 - len(shape)) + tuple(shape)
    grid = (math.ceil(nx / (16 * tile["NX"] * tile["WX"])), math.ceil(ny / (8 * tile["WY"])),
            math.ceil(nz / tile.get("BZ", 1)))
    return grid, 32 * tile["WX"] * tile["WY"]


def cuda_runner(form: sparse24.SparseForm, dims: int, x0, launches: int, compiled):
    """A function running `launches` launches of stencil_sp.cu from device array x0 (storage dtype);
    `compiled(source, name, macros, smem)` -> (kernel, smem) is the stencil module's compile cache."""
    import cupy as cp

    macros, smem, afrag, meta, offs = operands(form, dims)
    kernel, smem = compiled(*source(dims), macros, smem)
    grid, threads = launch_shape(form, dims, x0.shape)
    nz, ny, nx = (1,) * (3 - x0.ndim) + x0.shape
    args = (cp.asarray(afrag.ravel()), cp.asarray(meta.ravel()), cp.asarray(offs.ravel()))
    bufs = [cp.full_like(x0, nan(form.precision)), cp.full_like(x0, nan(form.precision))]
    dims_arg = (np.int32(nz), np.int32(ny), np.int32(nx))[3 - dims:]

    def run():
        src = x0
        for i in range(launches):
            dst = bufs[i % 2]
            kernel(grid, (threads,), (src, dst, *args, *dims_arg), shared_mem=smem)
            src = dst
        return src

    return run


# --------------------------------------------------------------------------------------- case


def prepare(st, w: np.ndarray, domain: tuple, steps: int, backend: str, rng: np.random.Generator, precision: str,
            compiled, bound, whole_limit: int = 4_000_000, check_domain=None, samples: int = 256) -> Case:
    """tc_sparse on a fresh random field of `domain` in `precision` (weights `w`, nonnegative): its timed
    call (`steps` steps, steps / depth launches) and its check against the float64 reference of the
    rounded inputs at `bound(ref, |ref|, x_max)` (stencil.tolerance of the dense tensor cores); above
    `whole_limit` points SAMPLES sampled points, after a whole check of the same kernel on
    `check_domain`. `compiled`: runner.compiled (CUDA)."""
    w = rounded(w, precision)
    form = sparse24.transform(st.shape, st.dims, st.radius, st.depth, precision, w, LAYOUT)
    launches, points = steps // st.depth, math.prod(domain)
    what = f"{st.name} tc_sparse {precision} on {'x'.join(map(str, domain))}"

    def tol(ref):
        return bound(ref, ref, 1.0)   # weights and data in [0, 1) nonnegative: |W||x| = W x

    if backend == "cpu":
        x = quantize(rng.random(domain), precision)
        run, to_host, xp = (lambda: emulate(form, x, launches)), np.asarray, np
        note = "emulated on CPU (numpy matmul of the transformed operands); "
    else:
        import cupy as cp

        x = quantize(cp.random.RandomState(int(rng.integers(2**63))).random_sample(domain), precision)
        run, to_host, xp, note = cuda_runner(form, st.dims, x, launches, compiled), cp.asnumpy, cp, ""
        if points > whole_limit:
            xc = quantize(rng.random(check_domain), precision)
            out = cuda_runner(form, st.dims, cp.asarray(xc), launches, compiled)()
            ref_c = reference(xc, w, steps)
            measure.check(as_float64(cp.asnumpy(out)), ref_c, tol(ref_c), what + " (check domain)")
    if points <= whole_limit:
        xh = as_float64(to_host(x))
        output, ref, checked = to_host, reference(xh, w, steps), "whole output checked"
    else:
        idx = rng.integers(0, domain, size=(samples, len(domain)))
        output = lambda out: to_host(out[tuple(xp.asarray(i) for i in idx.T)])  # noqa: E731
        ref = sampled_reference(as_float64(x), w, steps, idx)
        checked = (f"whole output checked on {'x'.join(map(str, check_domain))} with the same kernel, "
                   f"{samples} sampled points of the timed domain checked")
    kept, chunk = fmt(precision).mma_sp.sparsity
    gran, tol_ = f"{kept}:{chunk}", tol(ref)
    if chunk != 4:                       # the record's mma.sp keeps a pair (TF32), not 2 of 4
        gran += f" ({fmt(precision).tc_type.upper()}: the PTX ISA's granularity)"
    return Case(run=run, output=output, reference=ref, tol=tol_, what=what, precision=precision,
                row={"problem": st.name, "n": points, "domain": "x".join(map(str, domain)), "depth": st.depth,
                     "steps": steps, "work_items": points * steps},
                work=points * steps, metric="GStencil/s",
                notes=[f"{note}{checked}; checked: rel_err <= {tol_:.3g}; periodic boundaries; {gran} structured weights, S {form.sparsity:.3f}, "
                       f"{len(form.a)} mma.sp per 16x8 tile, {form.padded} zero columns padded; "
                       f"one timed call = {steps} steps in {launches} launches"])
