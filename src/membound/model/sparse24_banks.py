"""Where the B operand of mma.sp comes from in the kernels' shared tile, and what its loads cost in
shared-memory wavefronts: the lanes' B slots (PTX ISA 9.7.14.6.2), their offsets, the tile's column
of u = 0 (XO), and the wavefronts of one warp's B load at a row pitch. sparse24.transform takes the run
phase of fewest wavefronts in 2D by these; kernels/stencil/sp_layout.py builds the kernels' tiles on them.

A form here is anything with the SparseForm fields cols, precision, radius and phase."""

from __future__ import annotations

import numpy as np

from membound.model.precision import fmt
from membound.model.sparse24_pack import LAYOUT, RUN

BANK_STEP = {4: (32, 4), 2: (64, 8)}   # element bytes -> (elements in 128 bytes, a pitch's residue: 4 banks a row)


def b_slots(precision: str) -> np.ndarray:
    """(32, NOFF): the K slot of each of a lane's B elements (g = lane / 4, q = lane % 4; TF32 b_r =
    B(q + 4r, g); f16 register r = B(8r + 2q, g), B(8r + 2q + 1, g))."""
    q = np.arange(32) % 4
    if fmt(precision).bytes == 4:            # one element a 32-bit register
        return np.stack([q + 4 * r for r in range(4)], axis=1)
    return np.stack([8 * r + 2 * q + h for r in range(4) for h in (0, 1)], axis=1)


def b_offsets(form, pitch: int, runs: bool = False) -> np.ndarray:
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


def x_origin(form) -> int:
    """XO: the shared tile's column of x offset u = 0, left of it every column the slots load; in layout
    "runs" = the form's phase mod RUN, so that every lane's run starts 16-byte aligned, and at phase 0
    a multiple of 2 RUN: the tile's first global column on a 32-byte sector."""
    xo = max(0, -int(form.cols[..., 2].min()))
    if LAYOUT != "runs":
        return xo
    run = RUN[form.precision]
    xo += (form.phase - xo) % run
    return xo + run * (form.phase == 0 and xo // run % 2)


def wavefronts(form, pitch: int) -> float:
    """Shared-memory wavefronts of one warp's B load in layout "runs" (16 bytes a lane), averaged over
    the fragments: the 8 lanes of a quarter warp take as many wavefronts as the most distinct 16-byte
    chunks that fall in one group of 4 banks, so 4 is conflict-free. Equals ncu's
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld per shared load on nine of ten measured kernels;
    the tenth, with more lanes sharing addresses, took 15% fewer (H100, 2026-11-27, docs/kernels_stencil.md)."""
    rows = (np.arange(32) >> 2) + form.radius                      # lane's row g, the tile's first row -RF
    elem = rows * pitch + x_origin(form) + b_offsets(form, pitch, True)[..., 0]
    chunk = (elem * fmt(form.precision).bytes // 16).reshape(-1, 4, 8)       # (fragments, quarter, lane)
    chunk = np.sort(chunk, axis=-1)
    new = np.concatenate([np.ones_like(chunk[..., :1], bool), np.diff(chunk, axis=-1) != 0], axis=-1)
    per_group = np.zeros((*chunk.shape[:2], 8), np.int64)
    f, q, _ = np.indices(chunk.shape)
    np.add.at(per_group, (f, q, chunk % 8), new)
    return float(per_group.max(axis=-1).sum(axis=-1).mean())


def pitches(form, width: int) -> list[int]:
    """The 2D kernel's candidate row pitches for a tile `width` elements wide: the first of at least
    `width` at 4 banks a row (fp32 = 4 mod 32 elements, fp16 and bf16 = 8 mod 64), so that the 8 rows g of one B
    load start in different banks, and the 7 next 16-byte steps (every offset of a row in the banks)."""
    step, rem = BANK_STEP[fmt(form.precision).bytes]
    first = width + (rem - width) % step
    return [first + k * step // 8 for k in range(8)]


def least_wavefronts(form) -> float:
    """`wavefronts` at the best of `pitches`: the same at any width wider than the columns the slots
    load (only the pitch's residue mod 128 bytes places a row in the banks)."""
    width = x_origin(form) + int(form.cols[..., 2].max()) + RUN[form.precision]
    return min(wavefronts(form, pitch) for pitch in pitches(form, width))
