"""Deterministic surrogates: a matrix with exactly the rows, cols and nnz of a real one (times a
scale) and a structure of its family.

Each row i holds c_i distinct columns start_i + offset, where the offsets are the cumulative sums of
random gaps in [1, G_i], c_i * G_i <= cols and the start is clipped so that the run stays inside. The families differ in the
row counts c_i, the gap bound G_i (1 gives a contiguous run) and the start:

- banded_fem: counts within +-30 % of the mean, narrow gaps, centred on the diagonal;
- dense_block: rows in blocks of 64 share a count and a contiguous run starting at the block;
- regular / markov: (almost) equal counts, a contiguous run (regular) or spread stencil (markov);
- circuit: small counts near the diagonal, one row in 20 reaching into the first columns (a few dense
  columns), and ten dense rows spread over the whole matrix;
- powerlaw: Zipf row counts (exponent 2, a web graph's out-degrees), local gaps near the diagonal.
"""

from __future__ import annotations

import zlib

import numpy as np
import scipy.sparse as sp

from membound.matrices import MatrixError

FAMILIES = ("banded_fem", "circuit", "powerlaw", "markov", "regular", "dense_block")
BLOCK = 64


def scaled_shape(entry: dict, scale: float) -> tuple[int, int, int]:
    """Rows, cols and nnz of `entry`'s surrogate at `scale` (all at least 1)."""
    rows = max(1, round(entry["rows"] * scale))
    cols = max(1, round(entry.get("cols", entry["rows"]) * scale))
    return rows, cols, min(max(1, round(entry["nnz"] * scale)), rows * cols)


def apportion(weights: np.ndarray, total: int, cap: int) -> np.ndarray:
    """Integer counts proportional to `weights` (largest remainders round up), each at most `cap`,
    summing exactly to `total`; a capped row's excess goes to the others."""
    counts = np.zeros(len(weights), np.int64)
    free = np.ones(len(weights), bool)
    while (left := total - int(counts.sum())) > 0:
        share = np.where(free, weights, 0.0)
        share *= left / share.sum()
        add = np.floor(share).astype(np.int64)
        if (extra := left - int(add.sum())) > 0:
            add[np.argpartition(add - share, extra - 1)[:extra]] += 1
        counts = np.minimum(counts + add, cap)
        free = counts < cap
    return counts


def layout(family: str, rows: int, cols: int, nnz: int, rng: np.random.Generator):
    """Row counts, gap bounds and starting columns of one family's surrogate."""
    i = np.arange(rows)
    mean = nnz / rows
    if family == "banded_fem":
        weights, gap, start = rng.uniform(0.7, 1.3, rows), np.full(rows, 3), i
    elif family == "dense_block":
        weights = np.repeat(rng.uniform(0.5, 1.5, -(-rows // BLOCK)), BLOCK)[:rows]
        gap, start = np.ones(rows, np.int64), (i // BLOCK) * BLOCK
    elif family == "regular":
        weights, gap, start = np.ones(rows), np.ones(rows, np.int64), i
    elif family == "markov":
        weights, gap, start = np.ones(rows), np.full(rows, max(1, int(np.sqrt(rows)))), i
    elif family == "circuit":
        weights = rng.exponential(1.0, rows)
        weights[rng.choice(rows, min(10, rows), replace=False)] = 0.1 * rows / mean  # ~rows/10 entries
        gap, start = np.full(rows, 2), i.copy()
        start[rng.random(rows) < 0.05] = 0
    elif family == "powerlaw":
        weights, gap, start = np.minimum(rng.zipf(2.0, rows), rows // 100 + 1).astype(np.float64), np.full(rows, 8), i
    else:
        raise MatrixError(f"unknown surrogate family '{family}' in config/matrices.yaml: choose one of "
                          f"{', '.join(FAMILIES)}")
    counts = apportion(weights, nnz, cols)
    gap = np.clip(gap, 1, np.maximum(1, cols // np.maximum(counts, 1)))
    if family == "circuit":  # dense rows spread over all columns
        dense = counts > 20 * mean
        gap[dense] = np.maximum(1, cols // counts[dense])
    if family == "circuit":
        start = np.where(start > 0, start - counts // 2, 0)
    elif family != "dense_block":  # centred on the diagonal
        start = start - (counts * (gap + 1)) // 4
    return counts, gap, np.clip(start, 0, cols - counts * gap)  # no wrap past the last column


def generate(entry: dict, scale: float = 1.0) -> tuple[sp.csr_matrix, dict]:
    """The surrogate of `entry` (a config/matrices.yaml row) at `scale`, and its CSR metadata."""
    rows, cols, nnz = scaled_shape(entry, scale)
    rng = np.random.default_rng(zlib.crc32(f"{entry['name']}:{scale}".encode()))
    counts, gap, start = layout(entry["family"], rows, cols, nnz, rng)
    indptr = np.zeros(rows + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    row_gap = np.repeat(gap.astype(np.int32), counts)
    steps = rng.integers(0, row_gap, dtype=np.int32) + 1  # gaps in [1, G_i]
    del row_gap
    offset = np.cumsum(steps, dtype=np.int64)
    del steps
    first = np.concatenate(([0], offset))[indptr[:-1]]
    offset -= np.repeat(first + 1, counts)
    offset += np.repeat(start, counts)
    indices = offset.astype(np.int32)  # increasing within each row, all below cols
    del offset
    data = rng.uniform(-1.0, 1.0, nnz)
    matrix = sp.csr_matrix((data, indices, indptr.astype(np.int32)), shape=(rows, cols))
    meta = {key: entry[key] for key in ("code", "group", "name", "kind", "symmetric", "family")}
    meta.update(source="surrogate", scale=scale,
                notes=f"surrogate ({entry['family']} structure) of {entry['group']}/{entry['name']} at scale "
                      f"{scale}: not the SuiteSparse matrix")
    return matrix, meta
