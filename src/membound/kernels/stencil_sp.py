"""The stencils on 2:4-sparse tensor cores (impl tc_sparse, the SPIDER / SparStencil role): the
transformed operands (membound.model.sparse24) packed per lane for stencil_sp.cu (2D) and
stencil_sp3.cu (3D, the fragments grouped across planes: `plane_groups`), their CUDA runner,
the CPU backend's emulation of the same product, and the case with its check (membound.kernels.stencil
dispatches here).

Fragment layouts (PTX ISA 9.7.14.6.2, mma.sp with sparse A; g = lane / 4, q = lane % 4):
- A, TF32 m16n8k16: a0 row g and a1 row g+8 from 1:2 chunk q (columns 2q, 2q+1), a2 and a3 the same
  from chunk q+4; f16 m16n8k32: register 0 row g and register 1 row g+8 from 2:4 chunk q (columns
  4q..4q+3, two halves, low first), registers 2 and 3 from chunk q+4.
- B: TF32 b_r = B(q + 4r, g); f16 register r = B(8r + 2q, g), B(8r + 2q + 1, g) (low half first).
- Metadata, sparsity selector 0 (lanes 4g and 4g+1 give it): META_LAYOUT "split": lane 4g+h holds
  the nibbles of chunks 4h..4h+3 of row g in bits 0-15 and of row g+8 in bits 16-31 (chunk c of the
  half at bits 4c); "rows": lane 4g holds row g's 8 chunks, lane 4g+1 row g+8's. The ISA gives this
  as a figure only; tests/test_stencil_sparse.py::test_mma_sp_layout checks both on the GPU.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from membound.kernels.harness import Case
from membound.kernels.stencil_cpu import reference, sampled_reference
from membound.model import sparse24
from membound.model.precision import fmt, quantize, tc_operand
from membound.run import measure

META_LAYOUT = "split"
LAYOUT = sparse24.LAYOUT                          # the transform's layout this kernel runs ("runs": RUNS=1)
TILE = {"NX": 4, "WX": 2, "WY": 4}                # 16-wide tiles per warp along x, warps along x and y
# 2D from RF 9 (a halo of 2 RF >= 18 rows around 32 output rows): 64 output rows (the sweep in
# docs/kernels_stencil.md, "Two planes an iteration (3D), taller tiles (2D)")
TILE_TALL = {**TILE, "WY": 8}
TALL_RF = 9
# 3D (stencil_sp3.cu): 64 output planes per block through a rolling window of 2 RF + 1 accumulator planes;
# fp32 two input planes an iteration (PAIR: each A fragment loaded once for both, the planes copied by
# cp.async into four buffers); fp16 one (its 2-byte elements are copied through registers, not by cp.async;
# the sweeps in docs/kernels_stencil.md, "3D: one B load for every plane" and the section named above)
TILE3 = {"NX": 2, "WX": 2, "WY": 4, "BZ": 64, "MINB": 2}
TILE3_PAIR = {**TILE3, "PAIR": 1}
# fragments up to this size (per dims) go to shared memory (FSM=1), beyond it read through L1: in 2D
# more cost occupancy; in 3D (a 17 KiB tile) they paid up to 100 KiB (docs/kernels_stencil.md)
FRAG_SMEM = {2: 48 * 1024, 3: 100 * 1024}


def operand(a: np.ndarray, precision: str) -> np.ndarray:
    """The fused weights as the tensor cores see them: rounded to storage, then to the operand type."""
    return tc_operand(quantize(a, precision), precision)


def pack_lanes(values: np.ndarray, nibbles: np.ndarray, precision: str, layout: str = META_LAYOUT):
    """(afrag (nf, 32, 4) uint32, meta (nf, 32) uint32) of compressed A (nf, 16, K/2) and its
    nibbles (nf, 16, 8), in the module docstring's layout."""
    nf = len(values)
    g, q = np.arange(32) // 4, np.arange(32) % 4
    if precision == "fp32":
        bits = np.ascontiguousarray(values.astype(np.float32)).view(np.uint32)
        regs = [bits[:, g, q], bits[:, g + 8, q], bits[:, g, q + 4], bits[:, g + 8, q + 4]]
    else:
        h = np.ascontiguousarray(values.astype(np.float16)).view(np.uint16).astype(np.uint32)
        pair = lambda rows, c: h[:, rows, 2 * c] | (h[:, rows, 2 * c + 1] << 16)  # noqa: E731
        regs = [pair(g, q), pair(g + 8, q), pair(g, q + 4), pair(g + 8, q + 4)]
    afrag = np.stack(regs, axis=-1).astype(np.uint32)
    shift = (4 * np.arange(4)).astype(np.uint32)
    meta = np.zeros((nf, 32), dtype=np.uint32)
    for lane in range(32):
        gg, h = lane // 4, lane % 2            # lanes 4g+2, 4g+3 repeat 4g, 4g+1 (selector 0 ignores them)
        if layout == "split":
            half = nibbles[:, :, 4 * h:4 * h + 4] << shift
            word = half[:, gg].sum(-1) | (half[:, gg + 8].sum(-1) << 16)
        else:
            row = nibbles[:, gg + 8 * h, :]
            word = (row << (4 * np.arange(8)).astype(np.uint32)).sum(-1)
        meta[:, lane] = word.astype(np.uint32)
    return afrag, meta


def b_slots(precision: str) -> np.ndarray:
    """(32, NOFF): the K slot of each of a lane's B elements (module docstring)."""
    q = np.arange(32) % 4
    if precision == "fp32":
        return np.stack([q + 4 * r for r in range(4)], axis=1)
    return np.stack([8 * r + 2 * q + h for r in range(4) for h in (0, 1)], axis=1)


def b_offsets(form: sparse24.SparseForm, pitch: int, runs: bool = False) -> np.ndarray:
    """(nf, 32, NOFF) int32: each lane's B elements as offsets from its base in the shared tile
    (dy rows of `pitch` plus u; a pad slot loads a finite element times a zero weight); runs: only
    the first of each lane's run (NOFF 1), ValueError where the form's runs are not consecutive."""
    cols = form.cols[:, b_slots(form.precision)]               # (nf, 32, NOFF, 4)
    off = (cols[..., 1] * pitch + cols[..., 2]).astype(np.int32)
    if not runs:
        return off
    if not (np.diff(off, axis=-1) == 1).all():
        raise ValueError("the form's lanes do not load runs of consecutive elements: build it with layout 'runs'")
    return off[..., :1]


def run_width(precision: str, layout: str = LAYOUT) -> int:
    """Elements of a lane's run in layout "runs" (the tile's extra columns each side), else 0."""
    return sparse24.RUN[precision] if layout == "runs" else 0


def tile_for(form: sparse24.SparseForm, dims: int) -> dict:
    """The kernel's tile macros for `form` in `dims` dimensions."""
    if dims == 2:
        return TILE_TALL if form.radius >= TALL_RF else TILE
    return TILE3_PAIR if form.precision == "fp32" else TILE3


def source(dims: int) -> tuple[str, str]:
    """(file, kernel name) of the kernel in `dims` dimensions."""
    return ("stencil_sp3.cu", "stencil_sp3") if dims == 3 else ("stencil_sp.cu", "stencil_sp")


def plane_groups(form: sparse24.SparseForm) -> tuple[np.ndarray, np.ndarray]:
    """3D: (order, table) of the fragments grouped across the planes dz by the inputs their B slots
    load ((dy, u) of every slot): `order` the fragments group after group, each group's members by
    ascending j = RF - dz (at most one a plane); table[g] = its first position in `order` << 16 | mask,
    bit j of mask the member of plane dz = RF - j (stencil_sp3.cu)."""
    by_key, groups = {}, []
    for f, cols in enumerate(form.cols):
        j = form.radius - int(cols[0, 0])
        same = by_key.setdefault(cols[:, 1:].tobytes(), [])
        group = next((grp for grp in same if j not in grp), None)
        if group is None:
            group = {}
            same.append(group)
            groups.append(group)
        group[j] = f
    order, table = [], []
    for group in groups:
        table.append(len(order) << 16 | sum(1 << j for j in group))
        order += [group[j] for j in sorted(group)]
    return np.array(order), np.array(table, dtype=np.int32)


def pitch_for(form: sparse24.SparseForm, dims: int = 2) -> int:
    """Shared row pitch in elements: the tile's width, then 4 banks further per row (fp32: = 4 mod 32
    elements, fp16: = 8 mod 64), so that the 8 rows g of one B load start in different banks; in layout
    "runs" the pitch among that one and the 7 next 16-byte steps (every offset of a row in the banks)
    whose B loads take the fewest shared wavefronts (`wavefronts`; ties keep the first), but with PAIR
    (four plane buffers) always the first."""
    t, p = tile_for(form, dims), form.precision
    width = 16 * t["NX"] * t["WX"] + 2 * (form.radius + run_width(p))
    step, rem = (32, 4) if p == "fp32" else (64, 8)
    first = width + (rem - width) % step
    if LAYOUT != "runs" or t.get("PAIR"):      # PAIR: four plane buffers, the smallest pitch
        return first
    return min((first + k * step // 8 for k in range(8)), key=lambda pitch: wavefronts(form, pitch))


@cache
def structure_module(shape: str, dims: int, radius: int, depth: int, precision: str) -> tuple[dict, int]:
    """`module` of the form of the stencil's structure (the same columns whatever the weights), cached."""
    return module(sparse24.transform(shape, dims, radius, depth, precision, layout=LAYOUT), dims)


def wavefronts(form: sparse24.SparseForm, pitch: int) -> float:
    """Shared-memory wavefronts of one warp's B load in layout "runs" (16 bytes a lane), averaged over
    the fragments: the 8 lanes of a quarter warp take as many wavefronts as the most distinct 16-byte
    chunks that fall in one group of 4 banks, so 4 is conflict-free. Equals ncu's
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld per shared load on nine of ten measured kernels;
    the tenth, with more lanes sharing addresses, took 15% fewer (H100, 2026-11-27, docs/kernels_stencil.md)."""
    rows = (np.arange(32) >> 2) + form.radius                      # lane's row g, the tile's first row -RF
    elem = (rows * pitch + form.radius + run_width(form.precision) + b_offsets(form, pitch, True)[..., 0])
    chunk = (elem * fmt(form.precision).bytes // 16).reshape(-1, 4, 8)       # (fragments, quarter, lane)
    chunk = np.sort(chunk, axis=-1)
    new = np.concatenate([np.ones_like(chunk[..., :1], bool), np.diff(chunk, axis=-1) != 0], axis=-1)
    per_group = np.zeros((*chunk.shape[:2], 8), np.int64)
    f, q, _ = np.indices(chunk.shape)
    np.add.at(per_group, (f, q, chunk % 8), new)
    return float(per_group.max(axis=-1).sum(axis=-1).mean())


# ---------------------------------------------------------------------------------------- CPU


def emulate(form: sparse24.SparseForm, x: np.ndarray, launches: int) -> np.ndarray:
    """`launches` applications on the CPU with the operands the tensor cores see (the data rounded to
    the operand type, the weights by `operand`, decompressed from the packed form), products and sums
    in float32 (the accumulator), each result rounded to storage: mma.sp emulated with numpy matmul."""
    p = form.precision
    values, nibbles = sparse24.compress(operand(form.a, p), p)
    a = sparse24.decompress(values, nibbles, p)
    for _ in range(launches):
        x = sparse24.apply(form, np.asarray(tc_operand(x, p), dtype=np.float32), a, np.float32).astype(fmt(p).dtype)
    return x


# --------------------------------------------------------------------------------------- CUDA


def module(form: sparse24.SparseForm, dims: int) -> tuple[dict, int]:
    """(macros, dynamic shared bytes) of the kernel (`source`) for `form` in `dims` dimensions: they follow
    the form's structure (its fragments, the lanes' B offsets), not its weights' values."""
    p, runs, tile = form.precision, LAYOUT == "runs", tile_for(form, dims)
    pitch = pitch_for(form, dims)
    noff, nfrag = 1 if runs else b_slots(p).shape[1], len(form.a)
    frag_bytes, macros = nfrag * 32 * (20 + 4 * noff), {}
    if dims == 3:                                # B offsets per group, the groups unrolled (TABLE)
        groups = plane_groups(form)[1]
        table = " ".join(f"G({g}, {m & 0xffff}, {m >> 16})" for g, m in enumerate(groups))
        frag_bytes, macros = nfrag * 32 * 20 + len(groups) * 32 * 4 * noff, {"NGRP": len(groups), "TABLE": table}
    fsm = int(frag_bytes <= FRAG_SMEM[dims])
    macros.update(RF=form.radius, PREC=32 if p == "fp32" else 16, PITCH=pitch, NOFF=noff, NFRAG=nfrag,
                  FSM=fsm, RUNS=int(runs), **tile)
    planes = 4 if tile.get("PAIR") else 1
    return macros, planes * (8 * tile["WY"] + 2 * form.radius) * pitch * fmt(p).bytes + fsm * frag_bytes


def cuda_runner(form: sparse24.SparseForm, dims: int, x0, launches: int, compiled):
    """A function running `launches` launches of stencil_sp.cu from device array x0 (storage dtype);
    `compiled(source, name, macros, smem)` -> (kernel, smem) is the stencil module's compile cache."""
    import cupy as cp

    p = form.precision
    macros, smem = module(form, dims)
    values, nibbles = sparse24.compress(operand(form.a, p), p)
    afrag, meta = pack_lanes(values, nibbles, p)
    offs = b_offsets(form, macros["PITCH"], bool(macros["RUNS"]))
    file, name = source(dims)
    if dims == 3:                                # fragments in group order, B offsets per group
        order, groups = plane_groups(form)
        afrag, meta, offs = afrag[order], meta[order], offs[order[groups >> 16]]
    if offs.shape[-1] != macros["NOFF"] or len(afrag) != macros["NFRAG"]:
        raise AssertionError(f"stencil_sp operands {offs.shape}, {afrag.shape} disagree with its macros {macros}")
    tile = tile_for(form, dims)
    bx, by = 16 * tile["NX"] * tile["WX"], 8 * tile["WY"]
    kernel, smem = compiled(file, name, macros, smem)
    shape3 = (1,) * (3 - x0.ndim) + x0.shape
    nz, ny, nx = shape3
    grid = (math.ceil(nx / bx), math.ceil(ny / by), math.ceil(nz / tile.get("BZ", 1)))
    args = (cp.asarray(afrag.ravel()), cp.asarray(meta.ravel()), cp.asarray(offs.ravel()))
    bufs = [cp.full_like(x0, np.nan), cp.full_like(x0, np.nan)]
    dims_arg = (np.int32(nz), np.int32(ny), np.int32(nx))[3 - dims:]
    threads = 32 * tile["WX"] * tile["WY"]

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
    `check_domain`. `compiled`: stencil_cuda.compiled (CUDA)."""
    w = quantize(w, precision).astype(np.float64)
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

        x = cp.random.RandomState(int(rng.integers(2**63))).random_sample(domain).astype(fmt(precision).dtype)
        run, to_host, xp, note = cuda_runner(form, st.dims, x, launches, compiled), cp.asnumpy, cp, ""
        if points > whole_limit:
            xc = quantize(rng.random(check_domain), precision)
            out = cuda_runner(form, st.dims, cp.asarray(xc), launches, compiled)()
            ref_c = reference(xc.astype(np.float64), w, steps)
            measure.check(cp.asnumpy(out), ref_c, tol(ref_c), what + " (check domain)")
    if points <= whole_limit:
        xh = to_host(x).astype(np.float64)
        output, ref, checked = to_host, reference(xh, w, steps), "whole output checked"
    else:
        idx = rng.integers(0, domain, size=(samples, len(domain)))
        output = lambda out: to_host(out[tuple(xp.asarray(i) for i in idx.T)])  # noqa: E731
        ref = sampled_reference(x.astype(xp.float64), w, steps, idx)
        checked = (f"whole output checked on {'x'.join(map(str, check_domain))} with the same kernel, "
                   f"{samples} sampled points of the timed domain checked")
    gran, tol_ = "1:2 (TF32: the PTX ISA's granularity)" if precision == "fp32" else "2:4", tol(ref)
    return Case(run=run, output=output, reference=ref, tol=tol_, what=what, precision=precision,
                row={"problem": st.name, "n": points, "domain": "x".join(map(str, domain)), "depth": st.depth,
                     "steps": steps, "work_items": points * steps},
                work=points * steps, metric="GStencil/s",
                notes=[f"{note}{checked}; checked: rel_err <= {tol_:.3g}; periodic boundaries; {gran} structured weights, S {form.sparsity:.3f}, "
                       f"{len(form.a)} mma.sp per 16x8 tile, {form.padded} zero columns padded; "
                       f"one timed call = {steps} steps in {launches} launches"])
