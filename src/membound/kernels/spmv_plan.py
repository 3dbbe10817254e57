"""The tensor-core SpMV's plan (membound.kernels.spmv, DASP's row classes): groups of 8 short rows
read in place, groups of 8 medium rows packed in MMA order, long rows split into pieces; and every
MMA of a plan as its lanes' nonzero slots (the CPU emulation's blocks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHORT = 0            # rows of up to SHORT nonzeros are read in place, longer ones packed: packing won even for
                     # 1-nnz rows on the H100 (docs/kernels_spmv.md), so only empty rows stay in place
LONG = 256           # rows with more nonzeros are split into pieces (64 MMAs per warp at most)
PIECE = 2048         # nonzeros per piece of a long row: 64 MMAs, as a full group of 8 rows of LONG
WINDOW = 4096        # rows are sorted by length only within windows, so x's and y's accesses stay local


@dataclass
class Plan:
    """The tensor-core SpMV's work: groups of 8 short rows, then of 8 medium rows (packed), and pieces
    of long rows."""
    group_rows: np.ndarray      # int32, 8 per group (-1 pads the last group of each class)
    group_chunks: np.ndarray    # MMAs per group: ceil(longest row / 4)
    n_short: int                # the first n_short groups hold short rows, the others medium rows
    pack_ptr: np.ndarray        # int32: medium group g's MMAs are pack_ptr[g]:[g+1] of the packed arrays
    pack_slots: np.ndarray      # int32 nnz index of each packed slot, 32 per MMA (-1: padding)
    long_rows: np.ndarray       # int32 rows with more than LONG nonzeros
    long_piece_ptr: np.ndarray  # int32: pieces of long_rows[i] are long_piece_ptr[i]:[i+1]
    piece_begin: np.ndarray     # int32 nnz ranges of the pieces
    piece_end: np.ndarray

    @property
    def mma(self) -> int:
        """MMAs one SpMV issues."""
        return int(self.group_chunks.sum() + ((self.piece_end - self.piece_begin + 31) // 32).sum())


def _group_slots(indptr: np.ndarray, group_rows: np.ndarray, group_chunks: np.ndarray):
    """The MMAs of groups of 8 rows as their 32 lanes' nnz slots (-1: padding; lane 4r+c, chunk k
    holds slot begin_r + 4k + c) and the rows of their 8 diagonal entries: (mma, 32) and (mma, 8)."""
    n_groups = len(group_chunks)
    g = np.repeat(np.arange(n_groups), group_chunks)
    k = np.arange(len(g)) - np.repeat(np.cumsum(group_chunks) - group_chunks, group_chunks)
    rows = group_rows.reshape(n_groups, 8)[g]
    begin = np.where(rows >= 0, indptr[rows.clip(0)], 0)
    end = np.where(rows >= 0, indptr[rows.clip(0) + 1], 0)
    slot = begin[:, :, None] + 4 * k[:, None, None] + np.arange(4)
    return np.where(slot < end[:, :, None], slot, -1).reshape(-1, 32), rows


def plan(indptr: np.ndarray, short: int = SHORT, window: int = WINDOW) -> Plan:
    """DASP's row classes: rows of up to LONG nonzeros sorted by length within windows of `window` rows
    and grouped by 8, those of up to `short` read in place, the longer ones packed in MMA order;
    rows longer than LONG split into pieces of PIECE nonzeros."""
    indptr = np.asarray(indptr, dtype=np.int64)
    length = np.diff(indptr)
    is_long = length > LONG

    def groups(rows):
        rows = rows[np.lexsort((-length[rows], rows // window))]
        out = np.full(-(-len(rows) // 8) * 8, -1, np.int32)
        out[: len(rows)] = rows
        padded = np.where(out >= 0, length[out.clip(0)], 0)
        return out, (padded.reshape(-1, 8).max(axis=1, initial=0) + 3) // 4

    short_rows, short_chunks = groups(np.flatnonzero(length <= short))
    medium_rows, medium_chunks = groups(np.flatnonzero(~is_long & (length > short)))
    pack_ptr = np.zeros(len(medium_chunks) + 1, np.int64)
    np.cumsum(medium_chunks, out=pack_ptr[1:])
    pack_slots = _group_slots(indptr, medium_rows, medium_chunks)[0].astype(np.int32).ravel()

    long_rows = np.flatnonzero(is_long).astype(np.int32)
    pieces = -(-length[long_rows] // PIECE)
    long_piece_ptr = np.zeros(len(long_rows) + 1, np.int64)
    np.cumsum(pieces, out=long_piece_ptr[1:])
    piece_row = np.repeat(long_rows, pieces)
    j = np.arange(long_piece_ptr[-1]) - np.repeat(long_piece_ptr[:-1], pieces)
    piece_begin = indptr[piece_row] + j * PIECE
    piece_end = np.minimum(piece_begin + PIECE, indptr[piece_row + 1])
    return Plan(np.concatenate([short_rows, medium_rows]), np.concatenate([short_chunks, medium_chunks]),
                len(short_chunks), pack_ptr.astype(np.int32), pack_slots, long_rows,
                long_piece_ptr.astype(np.int32), piece_begin.astype(np.int32), piece_end.astype(np.int32))


def blocks(indptr: np.ndarray, p: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Every MMA of plan `p` as its 32 lanes' nnz slots (-1: padding, lane 4r+c = A(r,c)) and the
    output row of each of its 8 diagonal entries (-1: none): arrays (mma, 32) and (mma, 8)."""
    indptr = np.asarray(indptr, dtype=np.int64)
    group_slots, rows = _group_slots(indptr, p.group_rows, p.group_chunks)
    chunks = (p.piece_end - p.piece_begin + 31) // 32
    q = np.repeat(np.arange(len(chunks)), chunks)
    k = np.arange(len(q)) - np.repeat(np.cumsum(chunks) - chunks, chunks)
    slot = p.piece_begin[q, None].astype(np.int64) + 32 * k[:, None] + np.arange(32)
    long_slots = np.where(slot < p.piece_end[q, None], slot, -1)
    piece_row = np.repeat(p.long_rows, np.diff(p.long_piece_ptr))
    long_out = np.repeat(piece_row[q, None], 8, axis=1)
    return (np.concatenate([group_slots, long_slots]).astype(np.int64),
            np.concatenate([rows, long_out]).astype(np.int64))
