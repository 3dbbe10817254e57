"""Matrix Market coordinate files, read by scipy.io.mmread (fast_matrix_market since SciPy 1.12): every
stored entry kept, explicit zeros included, symmetric, skew-symmetric and Hermitian storage expanded
to both triangles.

What membound adds: the header's field and symmetry (the conversion's notes), float64 values
(complex: the real part; pattern: 1.0; integer: converted), a duplicate entry as an error, and a
one-line MatrixError for a file that is not a sparse coordinate matrix, truncated or malformed.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import scipy.io
import scipy.sparse as sp

from membound.matrices import MatrixError

FIELDS = ("real", "double", "integer", "complex", "pattern")


@dataclass
class Header:
    field: str
    symmetry: str
    rows: int
    cols: int
    entries: int  # stored entries, before symmetric expansion


def header(data: bytes, source) -> Header:
    """The header of the Matrix Market text `data` (scipy.io.mminfo), or a MatrixError."""
    try:
        rows, cols, entries, fmt, field, symmetry = scipy.io.mminfo(io.BytesIO(data))
    except ValueError as err:
        raise MatrixError(f"{source}: not a Matrix Market file ({err})") from None
    if fmt != "coordinate" or field not in FIELDS:
        raise MatrixError(f"{source}: unsupported Matrix Market type '{fmt} {field} {symmetry}' "
                          "(a sparse coordinate matrix is expected)")
    return Header(field, symmetry, rows, cols, entries)


def entry_lines(data: bytes) -> int:
    """The complete lines after the header and size line of `data` (its entries, in a well-formed file)."""
    start = 0
    while data.startswith((b"%", b"\n"), start):
        start = data.find(b"\n", start) + 1
    return data.count(b"\n", data.find(b"\n", start) + 1)


def read(data: bytes, source) -> tuple[sp.csr_matrix, Header]:
    """The matrix in the Matrix Market text `data` as float64 CSR (explicit zeros kept)."""
    head = header(data, source)
    try:
        coo = scipy.io.mmread(io.BytesIO(data), spmatrix=True)
    except ValueError as err:
        lines = entry_lines(data)
        what = (f"{lines} complete entries where the size line declares {head.entries}; the file is truncated"
                if lines != head.entries else "a malformed entry")
        raise MatrixError(f"{source}: {what} ({err})") from None
    values = coo.data.real.astype(np.float64)
    matrix = sp.coo_matrix((values, (coo.row.astype(np.int32), coo.col.astype(np.int32))), shape=coo.shape)
    csr = matrix.tocsr()
    if csr.nnz != len(values):
        raise MatrixError(f"{source}: {len(values) - csr.nnz} duplicate entries; a Matrix Market file "
                          "stores each entry once")
    csr.sort_indices()
    return csr, head
