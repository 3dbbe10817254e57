"""Problem geometry below the kernels: stencil supports, kernel fusion and the tensor-core operand
layout with its sparsity (paper 002 Sec. 2.2.3, eq. 2-3).

The kernels and the analytical side (membound.families, membound.model.analytical) read it; it reads the
precisions' records (membound.model.precision) alone.
"""

from __future__ import annotations

import math

import numpy as np

from membound import kept
from membound.model.equations import fused_points
from membound.model.precision import FORMATS, PRECISIONS

# The MMA shape (m, n, k) the tensor-core stencil kernels issue per storage precision is the precision's
# record's (precision.Format.mma: f64 m8n8k4, TF32 m16n8k8 and f16 m16n8k16, fp32 accumulate); m runs
# along y, n along x (8 output columns), k along the input columns of one row of the fused kernel.
STENCIL_MMA = {p: FORMATS[p].mma.shape for p in PRECISIONS}
# A-operand elements packed in one 32-bit register along k (f16: two), so a row's first column a is
# lowered until a + (the fused radius) is a multiple of it: one aligned 32-bit shared-memory load each.
PACK = {p: 4 // FORMATS[p].bytes for p in PRECISIONS if FORMATS[p].bytes < 4}


def mma_shape(precision: str = "fp64") -> tuple[int, int, int]:
    """(m, n, k) of the tensor-core stencil's MMA in `precision`; ValueError for another name."""
    if precision not in STENCIL_MMA:
        raise ValueError(f"no tensor-core stencil layout in '{precision}' (one of {', '.join(STENCIL_MMA)})")
    return STENCIL_MMA[precision]


def support(shape: str, dims: int, radius: int) -> np.ndarray:
    """Boolean mask of the offsets of a star or box stencil, a (2r+1)^dims array centred on the origin."""
    k = 2 * radius + 1
    if shape == "box":
        return np.ones((k,) * dims, dtype=bool)
    mask = np.zeros((k,) * dims, dtype=bool)
    for axis in range(dims):
        index = [radius] * dims
        index[axis] = slice(None)
        mask[tuple(index)] = True
    return mask


def fuse(w: np.ndarray, t: int) -> np.ndarray:
    """The weights of t steps applied at once: the t-fold self-convolution, radius t*r (paper 002 Fig. 6)."""
    import scipy.signal   # here: a second of import that every start of the workflow (and each job) would pay

    out = w
    for _ in range(t - 1):
        out = scipy.signal.convolve(out, w, mode="full", method="direct")
    return out


def fused_support(mask: np.ndarray, t: int) -> np.ndarray:
    """The support of the fused stencil: the t-fold Minkowski sum of the offsets in `mask`."""
    return fuse(mask.astype(np.int64), t) > 0


# ------------------------------------------------------------------------------ TC transformation


def tc_rows(wf: np.ndarray, mask: np.ndarray, precision: str = "fp64") -> tuple[np.ndarray, np.ndarray]:
    """The MMA operands of the fused stencil `wf` (support `mask`), as the tensor-core kernel issues them
    in `precision` (its MMA shape m x n x k, STENCIL_MMA; fp64: 8 x 8 x 4).

    For every row (dz, dy) of the fused kernel with nonzero dx in [a, b], an m x 8 output tile O
    (rows y, columns x) accumulates O += A_c @ B_c over ceil((8 + b - a) / k) k-chunks c, with A_c
    the m x k input block in[y + dy, x0 + a + kc + i] and B_c the k x 8 banded Toeplitz slice
    B_c[i, j] = wf[dz, dy, a + kc + i - j] (zero outside [a, b]); in fp16 a is first lowered so that
    a + rad is even (PACK). Returns rows (n, 4) int32 of (dz, dy, a, nk), sorted by dz, and B
    (nfrag, k, 8) float64, fragments in row order.
    """
    _, mma_n, mma_k = mma_shape(precision)
    pack = PACK.get(precision, 1)
    rad = wf.shape[-1] // 2
    wf3 = wf.reshape((1,) * (3 - wf.ndim) + wf.shape)
    m3 = mask.reshape(wf3.shape)
    rz = wf3.shape[0] // 2
    rows, frags = [], []
    k = np.arange(mma_k)[:, None]
    j = np.arange(mma_n)[None, :]
    for iz in range(wf3.shape[0]):
        for iy in range(wf3.shape[1]):
            nonzero = np.flatnonzero(m3[iz, iy])
            if nonzero.size == 0:
                continue
            a, b = nonzero[0] - rad, nonzero[-1] - rad
            a -= (a + rad) % pack
            nk = math.ceil((mma_n + b - a) / mma_k)
            rows.append((iz - rz, iy - rad, a, nk))
            for c in range(nk):
                dx = a + mma_k * c + k - j
                inside = (dx >= a) & (dx <= b)
                frags.append(np.where(inside, wf3[iz, iy, np.clip(dx + rad, 0, 2 * rad)], 0.0))
    return np.array(rows, dtype=np.int32), np.array(frags)


@kept.on_disk("tc-fragments")
def tc_fragments(shape: str, dims: int, radius: int, depth: int, precision: str = "fp64") -> int:
    """The B fragments (`tc_rows`' nk summed) of the stencil's structure fused over `depth` in `precision`,
    kept on disk (membound/kept.py): each start of the workflow sizes the tensor-core kernel at every depth."""
    mask = fused_support(support(shape, dims, radius), depth)
    return int(tc_rows(mask.astype(float), mask, precision)[0][:, 3].sum())


def tc_sparsity(shape: str, dims: int, radius: int, depth: int, precision: str = "fp64") -> float:
    """S of paper 002 (eq. 2-3) for this module's tensor-core transformation in `precision` (its MMA
    shape): the fraction of useful (nonzero) entries in the B operands it issues.

    Derivation: per 8x8 output tile, a fused-kernel row (dz, dy) with nonzero dx in [a, b] issues
    nk = ceil((8 + b - a) / 4) MMAs of k = 4, whose B operands hold 32 nk entries of which
    8 (b - a + 1) are the row's weights (each of the 8 output columns sees every weight once). The
    row widths sum to K^(t), so S = 8 K^(t) / (32 sum nk) = K^(t) / (4 sum nk), which is also
    useful multiply-adds over issued ones: C_TC = alpha / S * C. Example: box 2D r=1 t=3: seven
    rows of width 7, nk = ceil(14 / 4) = 4, S = 49 / 112 = 0.4375. For m x 8 x k (TF32, f16) an
    m x 8 tile takes nk = ceil((8 + b - a) / k) MMAs of 8 m k multiply-adds per row, of which
    8 m (b - a + 1) are useful: S = K^(t) / (k sum nk) (f16's a lowered to even a + rad, PACK).
    """
    issued = mma_shape(precision)[2] * tc_fragments(shape, dims, radius, depth, precision)   # k sum nk, kept on disk
    return fused_points(shape, dims, radius, depth) / issued
