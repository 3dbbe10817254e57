"""The workflow's binary CSR file: one uncompressed .npz holding int32 indptr and indices,
float64 data and a JSON metadata string (code, group, name, source, notes, ...).

Loading does no parsing, so even circuit5M (59.5 M nnz) loads in well under a second.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def save(path, matrix: sp.csr_matrix, meta: dict) -> None:
    """Write `matrix` (CSR, float64, int32 indices) and `meta` to `path` atomically."""
    matrix = sp.csr_matrix(matrix)
    if matrix.nnz >= 2**31 or max(matrix.shape) >= 2**31:
        raise ValueError(f"{path}: {matrix.nnz} nonzeros do not fit int32 indices")
    meta = {**meta, "rows": matrix.shape[0], "cols": matrix.shape[1], "nnz": int(matrix.nnz)}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as fh:
        np.savez(fh, indptr=matrix.indptr.astype(np.int32), indices=matrix.indices.astype(np.int32),
                 data=matrix.data.astype(np.float64), meta=np.array(json.dumps(meta)))
    os.replace(tmp, path)


def load(path) -> tuple[sp.csr_matrix, dict]:
    """The CSR matrix and metadata stored at `path` (explicit zeros are kept)."""
    with np.load(path, allow_pickle=False) as f:
        meta = json.loads(str(f["meta"]))
        matrix = sp.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=(meta["rows"], meta["cols"]))
    return matrix, meta
