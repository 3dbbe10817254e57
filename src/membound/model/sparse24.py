"""The fused stencil as a structured-sparse operand of mma.sp (the SPIDER and SparStencil roles,
papers 002 Sec. 4.3 and 004): layout, metadata, and its sparsity S, redundancy alpha and padding.

The product. An output tile D (16 x 8: rows i = 16 consecutive x, columns j = 8 consecutive y)
of the stencil fused over t steps (weights wf = geometry.fuse, support K^(t)) is D = A B with the
WEIGHTS as the M x K operand A, the only one mma.sp lets be sparse: for every input column u of a
fused-kernel row (dz, dy) (x offset u relative to the tile, u - i a nonzero dx of that row),
A[i, u] = wf[dz, dy, u - i] and B[u, j] = in[z + dz, y + j + dy, x0 + u]. Each A row is a banded
Toeplitz slice, w consecutive nonzeros in a row of 16 + w - 1 columns: no 2 of 4 structure.

The transform (own code after the papers' idea of moving columns, SPIDER's "strided swapping" and
SparStencil's structured-sparsity transformation, paper 002 Sec. 4.3 and 004 Sec. 3): the columns
of A (and with them the rows of B, i.e. which input element each K slot loads) are PERMUTED and
zero columns PADDED so that in every row of A each aligned chunk along K holds at most `kept` of
`chunk` nonzeros: 2 of 4 for fp16 (mma.sp m16n8k32), but 1 of 2 for TF32: the PTX ISA (9.7.14.6.1,
"Sparse matrix storage") requires .tf32 operands to be 1:2 sparse, which is stricter than 2:4.
Columns go into chunks greedily, fullest fitting chunk first (any column fits a chunk with no
other nonzero in its rows); per dz plane the chunks are padded to whole MMAs. Since no product is
dropped or changed, the sparse product equals the dense one exactly (tests/test_sparse24.py).

Metadata (PTX ISA 9.7.14.6.1): per row and chunk the positions of the kept elements, ascending: for
f16 two 2-bit indices, nibble idx0 | idx1 << 2 (0b0100 ... 0b1110); for tf32 one nibble per pair,
0b0100 (keep the first) or 0b1110 (keep the second). A chunk with fewer nonzeros keeps zeros.

S, alpha, padding (paper 002): alpha = K^(t) / (t K) (eq. 9; box: eq. 10) is the transform's as
for any fusion; S (eq. 2-3) is the fraction of nonzeros in the LOGICAL (uncompressed) A that mma.sp
multiplies, so that C_TC = alpha / S C (eq. 3) counts the logical MMA work and the sparse peak is
twice the dense one (eq. 20); S <= kept / chunk = 1/2 by construction. `s_kept` = 2 S is the
fraction of the compressed (issued) operand that is nonzero. Padding: the zero columns added.

Where paper 002 is inconsistent (tests/test_sparse24.py checks each against its own numbers):
- eq. 12 is printed as a second copy of eq. 11 (I_TC); the line after it, P_TC,actual = (S/alpha)
  min(P_TC, B I_TC), is what eq. 12 must be (equations.tc_actual_perf).
- Sec. 4.1 writes alpha_box = (2r - t + 1)^d / (t (2r + 1)^d); eq. 10's (2 r t + 1)^d is meant (its
  own Table 2 and 3 use it).
- Sec. 5.3 gives alpha ~ 1.81 for case 5 (Box-3D1R, t = 3): that is Box-2D1R's; eq. 10 gives
  343/81 = 4.23, which Table 3's I = 85.75 of the same case needs.
- SPIDER's S is 0.47 in Table 2, but its C = 960 (Table 2, row 9) needs S = 15/32 = 0.46875, while
  Table 3's I = 1795.21 (case 6) needs S = 0.47 exactly.
- Table 3 case 4 gives EBISU on Box-2D7R (t = 1, float) I = 21.58; eq. 6 and Table 2 (row 4) give
  K/D = 225/4 = 56.25.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from membound import kept
from membound.model import sparse24_banks
from membound.model.geometry import fuse, fused_support, support

from membound.model.sparse24_pack import (GRANULARITY, LAYOUT, M_TILE, N_TILE, RUN, SP_SHAPE,  # noqa: F401
                                          SP_TYPE, chunks, columns, runs)
PAIR_NIBBLE = (0b0100, 0b1110)      # 1:2 (TF32) metadata: keep the first / the second of a pair


@dataclass(frozen=True)
class SparseForm:
    """The transformed operands of one fused stencil for mma.sp in `precision`.

    a: (nmma, 16, K) the logical A of every MMA (weights, zeros where the pattern has none);
    cols: (nmma, K, 4) int, per K slot (dz, dy, u, pad): the input it loads, pad = 1 for a zero column;
    real: columns before padding; padded: zero columns added (to chunks and to whole MMAs)."""
    precision: str
    a: np.ndarray
    cols: np.ndarray
    real: int
    padded: int
    points: int          # K^(t)
    radius: int          # t r
    shape: str           # star | box
    phase: int           # layout "runs": runs start at u = -phase mod RUN (the tile's column of u = 0 = phase mod RUN)

    @property
    def kept(self) -> int:
        return GRANULARITY[self.precision][0]

    @property
    def chunk(self) -> int:
        return GRANULARITY[self.precision][1]

    @property
    def sparsity(self) -> float:
        """S: nonzeros of the logical A over its entries, = 16 K^(t) / (16 K nmma) (paper 002 eq. 2-3)."""
        return float(np.count_nonzero(self.a) / self.a.size)

    @property
    def s_kept(self) -> float:
        """Nonzeros over the entries of the compressed (issued) A: chunk / kept x S."""
        return self.sparsity * self.chunk / self.kept


def _tile_wavefronts(slots: list, precision: str, rf: int, phase: int) -> float:
    """The B loads' shared wavefronts a 16 x 8 tile of the runs `slots` (sparse24_banks.least_wavefronts
    times the MMAs)."""
    cols = np.array(slots, dtype=np.int64).reshape(-1, SP_SHAPE[precision][2], 4)
    return sparse24_banks.least_wavefronts(SimpleNamespace(cols=cols, precision=precision, radius=rf,
                                                           phase=phase)) * len(cols)


def transform(shape: str, dims: int, radius: int, depth: int, precision: str,
              w: np.ndarray | None = None, layout: str = LAYOUT, phase: int | None = None) -> SparseForm:
    """The 2:4 (fp16) or 1:2 (TF32) form of the stencil fused over `depth` steps, with weights `w`
    (a (2r+1)^dims array on the support; None: ones, for the structure alone). layout "free": any
    column in any slot (the fewest zero columns); "runs": each lane's B elements of an MMA one
    aligned run of consecutive columns (sparse24_pack.runs: one vector load, more zero columns), at
    the run phase (where runs start, mod RUN) `phase`, by default in 3D the one of fewest MMAs, in 2D
    the one whose B loads take the fewest shared wavefronts a tile (34 of 64 measured configurations
    faster where they fell, 8 slower where they rose: docs/kernels_stencil.md), then fewest MMAs."""
    if precision not in GRANULARITY:
        raise ValueError(f"no sparse tensor cores in {precision}: use one of {', '.join(GRANULARITY)}")
    kept, chunk = GRANULARITY[precision]
    k_mma = SP_SHAPE[precision][2]
    base = support(shape, dims, radius)
    w = base.astype(float) if w is None else np.asarray(w, dtype=float)
    mask = fused_support(base, depth)
    wf = fuse(w, depth)
    wf3, mask3 = (v.reshape((1,) * (3 - v.ndim) + v.shape) for v in (wf, mask))
    rz, rad = wf3.shape[0] // 2, wf3.shape[-1] // 2
    cols_dz = {dz: c for dz in range(-rz, rz + 1) if (c := columns(wf3, mask3, dz))}
    planes, real = list(cols_dz), sum(map(len, cols_dz.values()))
    if layout == "runs":
        run, rf = RUN[precision], radius * depth
        phases = range(run) if phase is None else [phase % run]
        per_phase = {ph: [s for dz in planes for mma in runs(wf3, mask3, dz, precision, ph) for s in mma]
                     for ph in phases}
        fewest = {ph: (len(per_phase[ph]) // k_mma, ph != 0, (ph - rf) % run) for ph in phases}  # MMAs, 0, -RF's
        phase = own = min(fewest, key=fewest.get)
        if dims == 2:    # the fewest B-load wavefronts, then MMAs, phase 0, the 3D rule's phase, the lowest
            phase = min(phases, key=lambda ph: (_tile_wavefronts(per_phase[ph], precision, rf, ph), fewest[ph][:2],
                                                ph != own, ph))
        slots = per_phase[phase]
    else:
        slots, phase = [], 0
        for dz in planes:
            for group in chunks(cols_dz[dz], kept, chunk):
                slots += [(c[0], c[1], c[2], 0) for c in group] + [(dz, 0, 0, 1)] * (chunk - len(group))
            slots += [(dz, 0, 0, 1)] * (-len(slots) % k_mma)
    a_list, col_list = [], []
    for f in range(len(slots) // k_mma):
        cols = np.array(slots[f * k_mma:(f + 1) * k_mma], dtype=np.int64)
        a = np.zeros((M_TILE, k_mma))
        for kk, (cz, cy, u, pad) in enumerate(cols):
            if pad:
                continue
            for i in range(M_TILE):
                dx = u - i
                if -rad <= dx <= rad and mask3[cz + rz, cy + rad, dx + rad]:
                    a[i, kk] = wf3[cz + rz, cy + rad, dx + rad]
        a_list.append(a)
        col_list.append(cols)
    a, cols = np.array(a_list), np.array(col_list)
    return SparseForm(precision, a, cols, real, cols.shape[0] * cols.shape[1] - real, int(mask.sum()), radius * depth,
                      shape, phase)


@kept.on_disk("sparse24-sparsity")
def sparsity(shape: str, dims: int, radius: int, depth: int, precision: str, layout: str = LAYOUT) -> float:
    """S of the transform (SparseForm.sparsity) for the stencil's structure in `layout` (default the
    kernel's), kept on disk (membound/kept.py): the model's and Figure 10's S of the sparse tensor cores
    (paper 002 eq. 2-3, 20)."""
    return transform(shape, dims, radius, depth, precision, layout=layout).sparsity


def structured(a: np.ndarray, kept: int, chunk: int) -> bool:
    """True when every aligned chunk of `chunk` along the last axis of `a` has at most `kept` nonzeros."""
    return bool((np.count_nonzero(a.reshape(*a.shape[:-1], -1, chunk), axis=-1) <= kept).all())


def compress(a: np.ndarray, precision: str) -> tuple[np.ndarray, np.ndarray]:
    """(values, nibbles) of the logical A (..., 16, K): values (..., 16, K / 2) the kept elements of
    every chunk in ascending position, nibbles (..., 16, K / chunk) the chunk's metadata (module
    docstring). ValueError where A is not `kept`:`chunk` structured."""
    kept, chunk = GRANULARITY[precision]
    if not structured(a, kept, chunk):
        raise ValueError(f"A is not {kept}:{chunk} structured")
    g = a.reshape(*a.shape[:-1], -1, chunk)
    nz = g != 0
    # kept positions: the nonzeros, then the lowest zero positions, ascending
    order = np.argsort(~nz, axis=-1, kind="stable")[..., :kept]
    pos = np.sort(order, axis=-1)
    values = np.take_along_axis(g, pos, axis=-1).reshape(*a.shape[:-1], -1)
    if chunk == 2:
        nibbles = np.where(pos[..., 0] == 0, PAIR_NIBBLE[0], PAIR_NIBBLE[1])
    else:
        nibbles = pos[..., 0] | (pos[..., 1] << 2)
    return values, nibbles.astype(np.uint32)


def decompress(values: np.ndarray, nibbles: np.ndarray, precision: str) -> np.ndarray:
    """The logical A from compress's (values, nibbles): what mma.sp multiplies."""
    kept, chunk = GRANULARITY[precision]
    v = values.reshape(*values.shape[:-1], -1, kept)
    if chunk == 2:
        pos = np.where(nibbles == PAIR_NIBBLE[0], 0, 1)[..., None]
    else:
        pos = np.stack([nibbles & 3, (nibbles >> 2) & 3], axis=-1)
    out = np.zeros(v.shape[:-1] + (chunk,), dtype=values.dtype)
    np.put_along_axis(out, pos.astype(np.int64), v, axis=-1)
    return out.reshape(*values.shape[:-1], -1)


def apply(form: SparseForm, x: np.ndarray, a: np.ndarray | None = None, dtype=np.float64) -> np.ndarray:
    """One application of the fused stencil through the sparse form, periodic: every 16 x 8 output
    tile as sum over MMAs of A_f (16 x K) @ B_f (K x 8), B gathered by `form.cols` (pad slots load a
    finite element times zero weights). a: the A to multiply (default form.a; e.g. decompressed or
    rounded operands); dtype: of the products and sums (float32: the tensor cores' accumulator)."""
    a = form.a if a is None else a
    x3 = x.reshape((1,) * (3 - x.ndim) + x.shape)
    nz, ny, nx = x3.shape
    tx = math.ceil(nx / M_TILE)
    r, u = form.radius, form.cols[..., 2]
    lx = max(r, -int(u.min()))                     # x columns the slots load beyond the field, each side
    pad = ((r if x.ndim == 3 else 0,) * 2, (r, r), (lx, max(r, int(u.max()) + 1 + M_TILE * (tx - 1) - nx)))
    p = np.pad(x3, pad, mode="wrap").astype(dtype)
    rz = pad[0][0]
    acc = np.zeros((nz, ny, tx, M_TILE), dtype=dtype)
    for f in range(len(a)):
        slabs = np.stack([p[rz + dz:rz + dz + nz, r + dy:r + dy + ny, lx + u:lx + u + tx * M_TILE:M_TILE]
                          for dz, dy, u, _ in form.cols[f]], axis=-1)        # (nz, ny, tx, K)
        acc += slabs @ a[f].T.astype(dtype)
    return acc.reshape(nz, ny, tx * M_TILE)[:, :, :nx].reshape(x.shape)


def table(stencils: dict, depths, precisions=tuple(GRANULARITY), layout: str = LAYOUT) -> list[dict]:
    """Per stencil (name -> (shape, dims, radius)), depth and precision: K^(t), alpha (eq. 9), the
    transform's S, s_kept, padding and MMAs per 16 x 8 tile: docs/kernels_stencil.md's table."""
    from membound.model.equations import fusion_redundancy

    out = []
    for name, (shape, dims, radius) in stencils.items():
        for t in depths(name) if callable(depths) else depths:
            for p in precisions:
                f = transform(shape, dims, radius, t, p, layout=layout)
                out.append({"stencil": name, "depth": t, "precision": p, "layout": layout, "points": f.points,
                            "alpha": fusion_redundancy(shape, dims, radius, t), "S": f.sparsity,
                            "S_kept": f.s_kept, "real_cols": f.real, "pad_cols": f.padded,
                            "padding": f.padded / (f.real + f.padded), "mmas": len(f.a)})
    return out
