"""The counter rows' columns (one row per launch tag and kernel name, written by ncu.main) and how
membound.run.raw reads them (SCHEMA): kept apart from ncu.py, so that the check of every raw file
(rule raw_check) runs no counter code."""

from __future__ import annotations

import pandas as pd

from membound.counters.ncu_csv import CUDA_CORE_OPS
from membound.model.precision import FORMATS
from membound.run import raw

COLUMNS = ["tag", "kernel", "impl", "problem", "precision", "kernel_name", "part", "launches", "time_s",
           *[op for ops in CUDA_CORE_OPS.values() for op in ops], *[f.tensor_column for f in FORMATS.values()],
           "dmma_inst", "hmma_inst", "hfma2_mma_inst", "inst_executed",
           "flops_cuda_core", "flops_tensor", "flops", "tensor_flops_from", "dram_read", "dram_write", "dram_bytes",
           "l2_bytes", "l1_bytes", "profiler", "clock_control", "cache_control"]


def later_columns(rows: pd.DataFrame) -> pd.DataFrame:
    """Counter rows written before the precision axis: precision fp64, no FP32/FP16 or HMMA counts (NaN);
    before 2026-12-05 no warp instruction count (NaN)."""
    rows = rows.assign(precision=rows["precision"].fillna("fp64") if "precision" in rows else "fp64")
    return rows.reindex(columns=list(dict.fromkeys([*COLUMNS, *rows.columns])))


# The counter rows ncu.main writes (COLUMNS), as membound.run.raw reads them.
SCHEMA = raw.Schema(
    "counter rows",
    columns=("tag", "kernel", "impl", "problem", "kernel_name", "launches", "time_s", "dram_read", "dram_write",
             "l2_bytes", "l1_bytes", "flops_tensor", "tensor_flops_from"),
    numbers=tuple(c for c in COLUMNS if c not in ("tag", "kernel", "impl", "problem", "precision", "kernel_name",
                                                  "part", "tensor_flops_from", "profiler", "clock_control",
                                                  "cache_control")),
    finite=("launches", "time_s"),
    text=("tag", "kernel", "impl", "problem", "kernel_name"),
    later=later_columns,
)
