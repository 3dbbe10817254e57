"""The paper's Table 2 built from the converted CSR files themselves: `stats` reads the files (a raw
result of the run, results/<gpu>/raw/matrices.csv), `table` sets them against a GPU's L2."""

from __future__ import annotations

import numpy as np
import pandas as pd

from membound.matrices import csr
from membound.model.equations import MB, size_mb  # noqa: F401 (Table 2's size, re-exported)
from membound.run import outputs

def row(path) -> dict:
    """The Table 2 statistics of the CSR file at `path`."""
    matrix, meta = csr.load(path)
    per_row = np.diff(matrix.indptr)
    rows, cols = matrix.shape
    size = size_mb(rows, cols, matrix.nnz)
    return {"code": meta["code"], "matrix": f"{meta['group']}/{meta['name']}", "rows": rows, "cols": cols,
            "nnz": matrix.nnz, "nnz_row_mean": per_row.mean(), "nnz_row_max": int(per_row.max(initial=0)),
            "nnz_row_cv": per_row.std() / per_row.mean() if per_row.mean() else 0.0,
            "size_MB": size, "source": meta["source"], "notes": meta.get("notes", "")}


def stats(paths) -> pd.DataFrame:
    """The statistics of the CSR files `paths`, in the given order."""
    return pd.DataFrame([row(p) for p in paths])


def table(stats: pd.DataFrame, l2_mb: float) -> pd.DataFrame:
    """Table 2: the matrix statistics with each matrix's size against an L2 of `l2_mb` MB."""
    frame = stats.copy()
    frame.insert(frame.columns.get_loc("size_MB") + 1, "size_over_L2", frame["size_MB"] / l2_mb)
    return frame


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
