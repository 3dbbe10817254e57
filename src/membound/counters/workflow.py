"""Small helpers of the counter and analysis rules (workflow/rules/counters.smk, analysis.smk)."""

from __future__ import annotations

from membound.model import peaks
from membound.model.precision import PRECISIONS


def why_not(counters: bool, profiler: str) -> str:
    """Why no counters are measured ('' when ncu runs): the tables' "not measured (...)" reason."""
    if not counters:
        return "counters: false"
    if profiler != "ncu":
        return f"profiler {profiler}: no counter runs in the workflow for it"
    return ""


def mma_shapes(gpu: dict) -> str:
    """The spec's MMA shape per precision as ncu's --mma-shapes takes it: 'fp64=8x8x4 fp32=16x8x8 ...'."""
    return " ".join(f"{p}={'x'.join(map(str, peaks.at(gpu, p).mma_shape))}" for p in PRECISIONS)
