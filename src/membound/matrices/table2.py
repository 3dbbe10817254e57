"""The paper's Table 2 built from the converted CSR files themselves."""

from __future__ import annotations

import numpy as np
import pandas as pd

from membound import outputs
from membound.matrices import csr

MB = 2**20  # L2 sizes in the device specs are binary megabytes


def size_mb(rows: int, cols: int, nnz: int) -> float:
    """A matrix's size in MB (2^20 B) as Table 2 and Figure 7 count it: the CSR arrays (float64
    values, int32 column indices and row pointers) plus the float64 x and y vectors."""
    return (nnz * (8 + 4) + (rows + 1) * 4 + 8 * (rows + cols)) / MB


def row(path, l2_mb: float) -> dict:
    """One Table 2 row for the CSR file at `path`."""
    matrix, meta = csr.load(path)
    per_row = np.diff(matrix.indptr)
    rows, cols = matrix.shape
    size = size_mb(rows, cols, matrix.nnz)
    return {"code": meta["code"], "matrix": f"{meta['group']}/{meta['name']}", "rows": rows, "cols": cols,
            "nnz": matrix.nnz, "nnz_row_mean": per_row.mean(), "nnz_row_max": int(per_row.max(initial=0)),
            "nnz_row_cv": per_row.std() / per_row.mean() if per_row.mean() else 0.0,
            "size_MB": size, "size_over_L2": size / l2_mb, "source": meta["source"], "notes": meta.get("notes", "")}


def table(paths, l2_mb: float) -> pd.DataFrame:
    """Table 2 for the CSR files `paths`, in the given order."""
    return pd.DataFrame([row(p, l2_mb) for p in paths])


def write(frame: pd.DataFrame, csv, md, gpu_name: str, l2_mb: float) -> None:
    """Write Table 2 as CSV and Markdown (each through a temporary file); the title says 'surrogate'
    whenever a row is one."""
    surrogate = (frame["source"] == "surrogate").any()
    title = ("Table 2: SURROGATE stand-ins for the SpMV matrices (not the SuiteSparse data)" if surrogate
             else "Table 2: the SpMV matrices (SuiteSparse)")
    legend = (f"size_MB: CSR arrays (float64 values, int32 indices and row pointers) plus the float64 x and y "
              f"vectors, in MB of 2^20 bytes; size_over_L2: against the {l2_mb:g} MB L2 of {gpu_name}. "
              "nnz counts every stored entry (symmetric storage expanded, explicit zeros kept); pattern "
              "matrices have every value set to 1.0 and complex ones keep their real part.")
    outputs.write_table(frame, csv, md, title, legend)
