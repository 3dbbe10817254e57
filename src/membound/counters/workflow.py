"""Small helpers of the counter and analysis rules (workflow/rules/analysis.smk)."""

from __future__ import annotations


def why_not(counters: bool, profiler: str) -> str:
    """Why no counters are measured ('' when ncu runs): the tables' "not measured (...)" reason."""
    if not counters:
        return "counters: false"
    if profiler != "ncu":
        return f"profiler {profiler}: no counter runs in the workflow for it"
    return ""
