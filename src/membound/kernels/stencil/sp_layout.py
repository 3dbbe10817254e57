"""The layout of the 2:4-sparse tensor-core stencils (impl tc_sparse; kernels/stencil_sp.py runs them):
the compressed weights packed per lane, the 3D fragments grouped across planes (`plane_groups`), the
tiles, the row pitch, and the macros of stencil_sp.cu (2D) and stencil_sp3.cu (3D) that follow from
them; the lanes' B offsets and their bank wavefronts are the model's (model/sparse24_banks.py).

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

from functools import cache

import numpy as np

from membound import kept
from membound.model import sparse24
from membound.model.precision import fmt, store
from membound.kernels.stencil.launch import format_macros
from membound.model.sparse24_banks import b_slots, pitches, wavefronts, x_origin

META_LAYOUT = "split"
LAYOUT = sparse24.LAYOUT                          # the transform's layout this kernel runs ("runs": RUNS=1)
TILE = {"NX": 4, "WX": 2, "WY": 4}                # 16-wide tiles per warp along x, warps along x and y
# 2D from RF 9 (a halo of 2 RF >= 18 rows around 32 output rows): 64 output rows (the sweep in
# docs/kernels_stencil.md, "Two planes an iteration (3D), taller tiles (2D)")
TILE_TALL = {**TILE, "WY": 8}
TALL_RF = 9
# 3D (stencil_sp3.cu): 64 output planes per block through a rolling window of 2 RF + 1 accumulator planes;
# fp32 and the fp16 box from RF 2 two input planes an iteration (PAIR: each A fragment loaded once for both,
# the planes copied by cp.async into four buffers, fp16 by pairs of elements), other fp16 one (the sweeps
# in docs/kernels_stencil.md, "3D: one B load for every plane", the section named above and "fp16 pairs")
TILE3 = {"NX": 2, "WX": 2, "WY": 4, "BZ": 64, "MINB": 2}
TILE3_PAIR = {**TILE3, "PAIR": 1}
PAIR_BOX_RF = 2
# fragment tables up to this size (per dims and precision) go to shared memory, beyond it: in 3D (a 17 KiB
# tile, FSM) all are read through L1, they paid up to 100 KiB; in 2D the first NFS fragments stay in shared
# memory, up to this size (fp32; fp16's half-size tile gained up to 80 KiB, 2026-11-27) and to two blocks
# an SM (BLOCK_SMEM_2D with the tile), where that is at least half of them, and the rest are read through
# L1 (2026-11-28; docs/kernels_stencil.md); per tuned precision (precision.Format.tuned: bf16 reads fp16's)
FRAG_SMEM = {(2, "fp32"): 48 * 1024, (2, "fp16"): 80 * 1024, (3, "fp32"): 100 * 1024, (3, "fp16"): 100 * 1024}
BLOCK_SMEM_2D = 113 * 1024   # two blocks an SM of 228 KiB (sm_90), 1 KiB of each reserved


def pack_lanes(values: np.ndarray, nibbles: np.ndarray, precision: str, layout: str = META_LAYOUT):
    """(afrag (nf, 32, 4) uint32, meta (nf, 32) uint32) of compressed A (nf, 16, K/2) and its
    nibbles (nf, 16, 8), in the module docstring's layout."""
    nf = len(values)
    g, q = np.arange(32) // 4, np.arange(32) % 4
    if fmt(precision).bytes == 4:            # one element a 32-bit register
        bits = np.ascontiguousarray(values.astype(np.float32)).view(np.uint32)
        regs = [bits[:, g, q], bits[:, g + 8, q], bits[:, g, q + 4], bits[:, g + 8, q + 4]]
    else:
        h = np.ascontiguousarray(store(values, precision)).view(np.uint16).astype(np.uint32)   # 16-bit patterns
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


def tile_width(form: sparse24.SparseForm, dims: int) -> int:
    """LXT: the shared tile's columns, up to the last the slots load from the block's last 16-wide
    tile (BX - 16 right of the first); 16-bit formats an even count (whole pairs of elements)."""
    t = tile_for(form, dims)
    lxt = x_origin(form) + 16 * t["NX"] * t["WX"] - 16 + int(form.cols[..., 2].max()) + 1
    return lxt + lxt % 2 * (fmt(form.precision).bytes == 2)


def tile_for(form: sparse24.SparseForm, dims: int) -> dict:
    """The kernel's tile macros for `form` in `dims` dimensions."""
    if dims == 2:
        return TILE_TALL if form.radius >= TALL_RF else TILE
    pair = fmt(form.precision).tuned == "fp32" or (form.shape == "box" and form.radius >= PAIR_BOX_RF)
    return TILE3_PAIR if pair else TILE3


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
    """Shared row pitch in elements: of sparse24_banks.pitches for the tile's width, in layout "runs" the
    one whose B loads take the fewest shared wavefronts (ties keep the first), but with PAIR (four plane
    buffers) always the first."""
    candidates = pitches(form, tile_width(form, dims))
    if LAYOUT != "runs" or tile_for(form, dims).get("PAIR"):      # PAIR: four plane buffers, the smallest pitch
        return candidates[0]
    return min(candidates, key=lambda pitch: wavefronts(form, pitch))


@cache
def structure_module(shape: str, dims: int, radius: int, depth: int, precision: str) -> tuple[dict, int]:
    """`module` of the form of the stencil's structure (the same columns whatever the weights), cached."""
    return module(sparse24.transform(shape, dims, radius, depth, precision, layout=LAYOUT), dims)


@kept.on_disk("sp-layout")
def structure_bytes(shape: str, dims: int, radius: int, depth: int, precision: str) -> int:
    """structure_module's dynamic shared bytes, kept on disk across processes (membound/kept.py): the rules'
    start-up check sizes every stencil at every depth, seconds of transform each time otherwise."""
    return structure_module(shape, dims, radius, depth, precision)[1]


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
    planes = 4 if tile.get("PAIR") else 1
    tile_bytes = planes * (8 * tile["WY"] + 2 * form.radius) * pitch * fmt(p).bytes
    if dims == 3:
        fsm = int(frag_bytes <= FRAG_SMEM[dims, fmt(p).tuned])
        macros["FSM"], smem_frags = fsm, fsm * frag_bytes
    else:
        per_frag = 32 * (20 + 4 * noff)
        nfs = min(nfrag, FRAG_SMEM[dims, fmt(p).tuned] // per_frag, max(0, BLOCK_SMEM_2D - tile_bytes) // per_frag)
        nfs = nfs if 2 * nfs >= nfrag else 0   # under half of them: the copy cost more than it saved
        macros["NFS"], smem_frags = nfs, nfs * per_frag
    macros.update(RF=form.radius, PREC=8 * fmt(p).bytes, XO=x_origin(form), LXT=tile_width(form, dims),
                  PITCH=pitch, NOFF=noff, NFRAG=nfrag, RUNS=int(runs), **tile, **format_macros(p))
    return macros, tile_bytes + smem_frags
