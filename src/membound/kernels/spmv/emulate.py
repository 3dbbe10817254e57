"""The CPU emulation of spmv_tc.cu (impls numpy_mma and numpy_mma_twin): the same plan and packed tiles,
the warps' work read from the plan's descriptors as the kernel reads them, in the precision's arithmetic.

Tensor cores (twin=False): operands rounded to the MMA's type (TF32 for fp32, round to nearest with
ties away, as cvt.rna; f16 and f64 exact), each MMA's sum per tile row and segment exact in float64 and
rounded to the accumulator (f32, or f64), accumulated across tiles in the accumulator's type.
Twin: every product and sum in the accumulator's type (fp32 FMAs; fp64).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from membound.kernels.spmv.tc_plan import GROUPS, MAX_SEG, PIECE, ZEROS, Plan
from membound.model.precision import decode, fmt, tc_operand


def accumulator(precision: str) -> np.dtype:
    """The accumulator's dtype (the precision's record: float64 for fp64, float32 for fp32 (TF32 MMA), fp16
    and bf16), the MMA's and the CUDA cores' alike."""
    return np.dtype(fmt(precision).tc_acc)


def _span_sums(values: np.ndarray, begin: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Sums of values[begin:begin + count] along axis 0, accumulated in values' dtype, one per span."""
    if not len(begin):
        return np.zeros((0, *values.shape[1:]), values.dtype)
    padded = np.concatenate([values, np.zeros((1, *values.shape[1:]), values.dtype)])
    edges = np.stack([begin, begin + count], axis=1).ravel()
    return np.add.reduceat(padded, edges, axis=0)[::2]


def emulator(p: Plan, matrix: sp.csr_matrix, precision: str, twin: bool):
    """A callable x -> y (accumulator dtype) running plan `p` on `matrix` (values in the precision's
    dtype) as spmv_tc.cu does; the tiles are packed once here, as on the GPU."""
    acc, k = accumulator(precision), p.k
    slot, seg = p.placement(matrix.indptr)
    valid = slot >= 0
    a = decode(np.where(valid, matrix.data[slot.clip(0)], 0).astype(matrix.dtype), precision)   # bf16: as float32
    cols = np.where(valid, matrix.indices[slot.clip(0)], 0)
    masks = [(seg == j) for j in range(MAX_SEG)]
    kind = p.desc[:, 3] >> 16
    grp, pcs, zero = p.desc[kind == GROUPS], p.desc[kind == PIECE], p.desc[kind == ZEROS]
    n = grp[:, 3] & 0xFF
    w = np.repeat(np.arange(len(grp)), n)
    i = np.arange(len(w)) - np.repeat(np.cumsum(n) - n, n)
    c, jj = grp[w, 2], (grp[w, 3] >> 8) & 0xFF
    tile, out = grp[w, 0] + i * c, grp[w, 1] + i * 8 * jj
    zero_rows = np.concatenate([p.rows[r: r + m] for _, r, m, _ in zero] or [np.zeros(0, np.int32)])

    def run(x: np.ndarray) -> np.ndarray:
        b = decode(np.where(valid, x[cols], 0).astype(matrix.dtype), precision)
        if twin:
            prod = a.astype(acc) * b.astype(acc)
        else:
            ops = (tc_operand(a, precision), tc_operand(b, precision)) if fmt(precision).tc_operand_u else (a, b)
            prod = ops[0].astype(np.float64) * ops[1].astype(np.float64)
        # the MMA (or the twin's FMAs) of every tile and segment: (tiles, 8 tile rows, segment)
        part = np.stack([np.where(m, prod, 0).reshape(-1, 8, k).sum(axis=2, dtype=prod.dtype) for m in masks],
                        axis=2).astype(acc)
        y = np.zeros(matrix.shape[0], acc)
        first = _span_sums(part[:, :, 0], tile, c)                 # segment 0 over each group's tiles
        vals = np.concatenate([first[:, None, :], part[tile + c - 1, :, 1:].transpose(0, 2, 1)], axis=1)
        at = out[:, None, None] + 8 * np.arange(MAX_SEG)[None, :, None] + np.arange(8)[None, None, :]
        keep = np.arange(MAX_SEG)[None, :, None] < jj[:, None, None]
        rows = np.where(keep, p.rows[np.where(keep, at, 0)], -1)
        y[rows[rows >= 0]] = vals[rows >= 0]
        piece = _span_sums(part[:, :, 0], pcs[:, 0], pcs[:, 2]).sum(axis=1, dtype=acc)
        total = np.zeros(len(p.long_row), acc)
        np.add.at(total, pcs[:, 1], piece)
        y[p.long_row] = total
        y[zero_rows] = 0
        return y

    return run
