"""Problem geometry below the kernels: stencil supports, kernel fusion and the tensor-core operand
layout with its sparsity (paper 002 Sec. 2.2.3, eq. 2-3).

The kernels and the analytical side (membound.families, membound.model.analytical) read it; it reads no
other membound module.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.signal

MMA_M = MMA_N = 8     # the FP64 MMA tile m8n8k4 the tensor-core stencil issues
MMA_K = 4


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
    out = w
    for _ in range(t - 1):
        out = scipy.signal.convolve(out, w, mode="full", method="direct")
    return out


def fused_support(mask: np.ndarray, t: int) -> np.ndarray:
    """The support of the fused stencil: the t-fold Minkowski sum of the offsets in `mask`."""
    return fuse(mask.astype(np.int64), t) > 0


# ------------------------------------------------------------------------------ TC transformation


def tc_rows(wf: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The MMA operands of the fused stencil `wf` (support `mask`), as the tensor-core kernel issues them.

    For every row (dz, dy) of the fused kernel with nonzero dx in [a, b], an 8x8 output tile O
    (rows y, columns x) accumulates O += A_c @ B_c over ceil((8 + b - a) / 4) k-chunks c, with A_c
    the 8x4 input block in[y + dy, x0 + a + 4c + k] and B_c the 4x8 banded Toeplitz slice
    B_c[k, j] = wf[dz, dy, a + 4c + k - j] (zero outside [a, b]). Returns rows (n, 4) int32 of
    (dz, dy, a, nk), sorted by dz, and B (nfrag, 4, 8) float64, fragments in row order.
    """
    rad = wf.shape[-1] // 2
    wf3 = wf.reshape((1,) * (3 - wf.ndim) + wf.shape)
    m3 = mask.reshape(wf3.shape)
    rz = wf3.shape[0] // 2
    rows, frags = [], []
    k = np.arange(MMA_K)[:, None]
    j = np.arange(MMA_N)[None, :]
    for iz in range(wf3.shape[0]):
        for iy in range(wf3.shape[1]):
            nonzero = np.flatnonzero(m3[iz, iy])
            if nonzero.size == 0:
                continue
            a, b = nonzero[0] - rad, nonzero[-1] - rad
            nk = math.ceil((MMA_N + b - a) / MMA_K)
            rows.append((iz - rz, iy - rad, a, nk))
            for c in range(nk):
                dx = a + MMA_K * c + k - j
                inside = (dx >= a) & (dx <= b)
                frags.append(np.where(inside, wf3[iz, iy, np.clip(dx + rad, 0, 2 * rad)], 0.0))
    return np.array(rows, dtype=np.int32), np.array(frags)


def tc_sparsity(shape: str, dims: int, radius: int, depth: int) -> float:
    """S of paper 002 (eq. 2-3) for this module's tensor-core transformation: the fraction of
    useful (nonzero) entries in the B operands it issues.

    Derivation: per 8x8 output tile, a fused-kernel row (dz, dy) with nonzero dx in [a, b] issues
    nk = ceil((8 + b - a) / 4) MMAs of k = 4, whose B operands hold 32 nk entries of which
    8 (b - a + 1) are the row's weights (each of the 8 output columns sees every weight once). The
    row widths sum to K^(t), so S = 8 K^(t) / (32 sum nk) = K^(t) / (4 sum nk), which is also
    useful multiply-adds over issued ones: C_TC = alpha / S * C. Example: box 2D r=1 t=3: seven
    rows of width 7, nk = ceil(14 / 4) = 4, S = 49 / 112 = 0.4375.
    """
    mask = fused_support(support(shape, dims, radius), depth)
    rows, _ = tc_rows(mask.astype(float), mask)
    return float(mask.sum() / (MMA_K * rows[:, 3].sum()))
