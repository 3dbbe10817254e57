"""A fast Matrix Market coordinate reader that keeps every stored entry, explicit zeros included.

The body is parsed by pandas' C tokenizer (tens of millions of entries in seconds); symmetric,
skew-symmetric and Hermitian storage is expanded to both triangles; complex values keep their real
part and pattern entries become 1.0.
"""

from __future__ import annotations

import io
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from membound.matrices import MatrixError

FIELDS = {"real": 1, "double": 1, "integer": 1, "complex": 2, "pattern": 0}
SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


@dataclass
class Header:
    field: str
    symmetry: str
    rows: int
    cols: int
    entries: int  # stored entries, before symmetric expansion


def parse_header(data: bytes, source) -> tuple[Header, int]:
    """The header of the Matrix Market text `data` and the offset where its entries begin."""
    end = data.find(b"\n") + 1
    banner = data[:end].decode("ascii", "replace").split()
    if len(banner) != 5 or banner[0].lower() != "%%matrixmarket" or banner[1].lower() != "matrix":
        raise MatrixError(f"{source}: not a Matrix Market file (banner {' '.join(banner)[:60]!r})")
    fmt, field, symmetry = (b.lower() for b in banner[2:])
    if fmt != "coordinate" or field not in FIELDS or symmetry not in SYMMETRIES:
        raise MatrixError(f"{source}: unsupported Matrix Market type '{fmt} {field} {symmetry}' "
                          "(a sparse coordinate matrix is expected)")
    while True:
        start, end = end, (data.find(b"\n", end) + 1) or len(data)
        line = data[start:end]
        if start == end:
            raise MatrixError(f"{source}: the size line is missing; the file is truncated")
        if line.strip() and not line.startswith(b"%"):
            break
    try:
        rows, cols, entries = (int(v) for v in line.split())
    except ValueError:
        raise MatrixError(f"{source}: bad size line {line.strip()[:60]!r}") from None
    return Header(field, symmetry, rows, cols, entries), end


def read_entries(data: bytes, offset: int, ncols: int, integer: bool, threads: int) -> pd.DataFrame:
    """The entry lines of `data` from `offset` on as columns row, col[, value], parsed by `threads` C
    tokenizers at once (they release the GIL)."""
    dtype = {0: np.int64, 1: np.int64, 2: np.int64 if integer else np.float64}
    cols = range(min(ncols, 3))

    def parse(chunk):
        return pd.read_csv(io.BytesIO(chunk), sep=r"\s+", header=None, names=range(ncols), usecols=cols,
                           dtype={k: dtype[k] for k in cols}, comment="%", engine="c", low_memory=False)

    size = len(data) - offset
    cuts = sorted({offset, len(data)} | {data.find(b"\n", offset + size * k // threads) + 1 or len(data)
                                         for k in range(1, threads)})  # after a newline: whole lines only
    view = memoryview(data)
    with ThreadPoolExecutor(threads) as pool:
        return pd.concat(pool.map(parse, [view[a:b] for a, b in zip(cuts, cuts[1:]) if a < b]),
                         ignore_index=True)


def read(data: bytes, source, threads: int | None = None) -> tuple[sp.csr_matrix, Header]:
    """The matrix in the Matrix Market text `data` as float64 CSR (explicit zeros kept)."""
    head, offset = parse_header(data, source)
    ncols = 2 + FIELDS[head.field]
    threads = threads or (min(8, os.cpu_count() or 1) if len(data) > 1 << 24 else 1)
    try:
        body = read_entries(data, offset, ncols, head.field == "integer", threads) if head.entries else \
            pd.DataFrame({k: np.zeros(0, np.int64) for k in range(min(ncols, 3))})
    except (ValueError, pd.errors.ParserError) as err:
        raise MatrixError(f"{source}: malformed entry line ({str(err).splitlines()[0]})") from None
    if len(body) != head.entries or body.isna().to_numpy().any():
        raise MatrixError(f"{source}: {len(body)} complete entries where the size line declares "
                          f"{head.entries}; the file is truncated or malformed")
    row = body[0].to_numpy() - 1
    col = body[1].to_numpy() - 1
    val = body[2].to_numpy(np.float64) if ncols > 2 else np.ones(len(body))
    del body
    if len(row) and (row.min() < 0 or col.min() < 0 or row.max() >= head.rows or col.max() >= head.cols):
        raise MatrixError(f"{source}: an index lies outside the declared {head.rows} x {head.cols}")
    if head.symmetry != "general":
        off = row != col
        mirrored = -val[off] if head.symmetry == "skew-symmetric" else val[off]
        row, col, val = (np.concatenate(p) for p in ((row, col[off]), (col, row[off]), (val, mirrored)))
    matrix = sp.coo_matrix((val, (row.astype(np.int32), col.astype(np.int32))), shape=(head.rows, head.cols))
    csr = matrix.tocsr()
    if csr.nnz != len(val):
        raise MatrixError(f"{source}: {len(val) - csr.nnz} duplicate entries; a Matrix Market file "
                          "stores each entry once")
    csr.sort_indices()
    return csr, head
