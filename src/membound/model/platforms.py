"""Table 1 (the platforms' specifications, per precision) and the tensor-core speedup bounds of
every kernel in every precision of the run."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from membound.model import analytical, equations, peaks

TERA = 1e12


def table1(gpus: Mapping[str, dict], current: str) -> pd.DataFrame:
    """One row per device and precision its spec gives (fp64, fp32, fp16, bf16 where it differs):
    the paper's Table 1 metrics, the peaks of both units, alpha = P_TC/P_CC, machine balances (eq. 1)
    and the tensor-core SCALE ceiling (Sec. 5.1) with the precision's MMA shape, each from
    config/gpus/<name>.yaml; `current` marks this profile's device. `paper_cuda_version` is Table 1's
    CUDA version row (the paper's devices only; this workflow's runtime is in the raw rows), `notes`
    the spec's note and, where the device has no tensor cores (or no published peak) in a precision,
    that."""
    rows = []
    for key, g in gpus.items():
        for precision in peaks.listed(g):
            p = peaks.at(g, precision)
            tc = p.tensor_core
            rows.append({
                "profile": key, "this_profile": key == current, "device": g["name"], "l2_MB": g["l2_MB"],
                "memory_bandwidth_TBs": p.bandwidth, "precision": precision, "element_bytes": p.element_bytes,
                "cuda_core_TFLOPs": p.cuda_core, "tensor_core_TFLOPs": tc, "mma_type": p.mma_type if tc else "",
                "mma_shape": "m{}n{}k{}".format(*p.mma_shape) if tc else "", "alpha": p.alpha,
                "balance_cuda_core": p.balance("cuda_core"), "balance_tensor_core": p.balance("tensor_core"),
                "tc_scale_ceiling_TFLOPs": equations.tc_scale_ceiling(tc, p.mma_shape) if tc else math.nan,
                "profiler": g["profiler"], "paper_cuda_version": g.get("cuda_version", ""),
                "notes": "; ".join(n for n in (p.note, g.get("note", "")) if n),
            })
    return pd.DataFrame(rows)


def bounds(config: Mapping, gpu: dict) -> pd.DataFrame:
    """Per kernel and precision of config["precisions"] on this device: I (with the precision's D),
    memory- or compute-bound (eq. 4), and the speedup bounds of tensor cores: eq. 22 (with this I
    and B), eq. 23 (alpha = P_TC/P_CC of the precision) and eq. 24 (alpha -> inf). A precision
    without tensor cores (or without a CUDA-core peak) keeps its rows, with eq. 22-23 (and without
    a CUDA-core peak eq. 24) NaN and `note` saying why."""
    rows = []
    for precision in config["precisions"]:
        p = peaks.at(gpu, precision)
        balance, alpha = p.balance("cuda_core"), p.alpha
        for label, i, _ in analytical.kernel_intensities(config, gpu, tensor_cores=False, precision=precision):
            known = math.isfinite(balance)
            rows.append({
                "kernel": label, "precision": precision, "I_flop_per_byte": i, "balance": balance,
                "bound": ("memory" if equations.is_memory_bound(i, balance) else "compute") if known else "",
                "peak_ratio_alpha": alpha,
                "eq22_bound": equations.tc_speedup_bound(alpha, balance, i),
                "eq23_bound": equations.tc_upper_bound(alpha),
                "eq24_bound": equations.workload_bound(i, balance),
                "note": p.note,
            })
    return pd.DataFrame(rows)
