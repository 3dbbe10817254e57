"""Table 1 (the platforms' specifications) and the tensor-core speedup bounds of every kernel."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from membound.model import analytical, equations

TERA = 1e12


def table1(gpus: Mapping[str, dict], current: str) -> pd.DataFrame:
    """One row per device: the paper's Table 1 metrics, machine balances (eq. 1) and the
    tensor-core SCALE ceiling (Sec. 5.1), each from config/gpus/<name>.yaml; `current` marks this
    profile's device. `paper_cuda_version` is Table 1's CUDA version row (the paper's devices only;
    this workflow's runtime is in the raw rows), `notes` the spec's note."""
    rows = []
    for key, g in gpus.items():
        bw, cc, tc = g["memory_bandwidth_TBs"], g["fp64_vector_TFLOPs"], g["fp64_matrix_TFLOPs"]
        rows.append({
            "profile": key, "this_profile": key == current, "device": g["name"], "l2_MB": g["l2_MB"], "memory_bandwidth_TBs": bw,
            "fp64_cuda_core_TFLOPs": cc, "fp64_tensor_core_TFLOPs": tc,
            "balance_cuda_core": equations.machine_balance(cc, bw),
            "balance_tensor_core": equations.machine_balance(tc, bw) if tc else math.nan,
            "tc_scale_ceiling_TFLOPs": equations.tc_scale_ceiling(tc, tuple(g["mma_shape"])) if tc else math.nan,
            "fp64_mma_shape": "m{}n{}k{}".format(*g["mma_shape"]), "profiler": g["profiler"],
            "paper_cuda_version": g.get("cuda_version", ""), "notes": g.get("note", ""),
        })
    return pd.DataFrame(rows)


def bounds(config: Mapping, gpu: dict) -> pd.DataFrame:
    """Per kernel on this device: I, memory- or compute-bound (eq. 4), and the speedup bounds of
    tensor cores: eq. 22 (with this I and B), eq. 23 (alpha = P_TC/P_CC) and eq. 24 (alpha -> inf)."""
    bw = gpu["memory_bandwidth_TBs"] * TERA
    cc = gpu["fp64_vector_TFLOPs"] * TERA
    tc = (gpu["fp64_matrix_TFLOPs"] or math.nan) * TERA
    balance = equations.machine_balance(cc, bw)
    ratio = tc / cc
    rows = []
    for label, i, _ in analytical.kernel_intensities(config, gpu, tensor_cores=False):
        memory_bound = equations.is_memory_bound(i, balance)
        rows.append({
            "kernel": label, "I_flop_per_byte": i, "balance": balance,
            "bound": "memory" if memory_bound else "compute", "peak_ratio_alpha": ratio,
            "eq22_bound": equations.tc_speedup_bound(ratio, balance, i),
            "eq23_bound": equations.tc_upper_bound(ratio),
            "eq24_bound": equations.workload_bound(i, balance),
        })
    return pd.DataFrame(rows)



