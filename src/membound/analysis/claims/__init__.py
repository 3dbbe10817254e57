"""The paper's claims (paper 000 Sec. 4.2 and 5.4), and beside them C4s (C4's test on 2:4-sparse
tensor cores, no claim of paper 000) and C5 (paper 002's scenario predictions, under two readings),
checked on the measured raw rows, each in every precision of the run (fp64, fp32, fp16: rows of one
precision against that precision's peaks, element size and eq. 23 bound) with a 95% interval over
problems and repetitions.

A pair is one problem timed on two sides in one repetition (`rep`; rows without it are rep 0):
- C2-C4 compare algorithms as the paper does: the CUDA-core baseline (role CC_ROLE) against the
  tensor-core implementation (role TC_ROLE);
- C1 compares each tensor-core implementation `<impl>` with its CUDA-core twin `<impl>_twin` (the
  same layout, memory accesses and launch shape, FMAs for MMAs), on the pairs that are memory-bound
  in practice: working set larger than the L2 and the twin's achieved DRAM bandwidth (analytical Q
  over its time) at least `dram_fraction` of the spec's; where counters were measured, the twin must
  also move its sibling's DRAM bytes to within TWIN_DRAM (else it is not a twin). The other pairs
  are listed with the reason.

Each claim's estimate is the median of its ratios (t_TC/t_CC, or the speedup t_CC/t_TC for C1) over
problems, of the per-problem geometric mean over repetitions, with a distribution-free 95% interval
from order statistics (none below 5 problems); a single problem's, the geometric mean over its
repetitions with a t-interval (verdicts.METHOD); tests/test_claims_coverage.py measures both
intervals' coverage on data like ours. Against the claim's reference value r (1, or eq. 23's bound for C1),
with the relative `margin` (config claims.margin, docs/claims.md):
LEVEL where the whole interval lies in r(1 -+ margin); else SUPPORTED where it lies entirely on the
claim's side of r, CONTRADICTED entirely on the other side, INCONCLUSIVE where it straddles r.
N/A in a precision the device has no tensor cores for (the CPU profile emulates them:
`on_these_timings` still says what the timings give); NO DATA where no pair qualifies, with the reason
(a precision with no rows at all says so). A CONTRADICTED verdict is a finding, reported like a
SUPPORTED one, never an error.
"""

from __future__ import annotations

import pandas as pd

from membound.analysis.claims import c1_bound, c2_scale, c3_spmv, c4_stencil, c5_scenarios, pairs
from membound.analysis.claims.originals import on_originals
from membound.analysis.claims.report import write
from membound.analysis.claims.verdicts import METHOD, NO_DATA, NOT_APPLICABLE, sources
from membound.analysis.depths import role_rows
from membound.model import peaks
from membound.model.equations import size_mb
from membound.model.precision import PRECISIONS
from membound.originals.rows import split
from membound.run import measure

__all__ = ["check", "write"]

FAMILY = {"C2": "scale", "C3": "spmv", "C4": "stencil", "C4s": "stencil", "C5": "stencil", "C5 summary": "stencil"}   # C1: every one with twins
PAPER = 'Zhang et al., "Can Tensor Cores Benefit Memory-Bound Kernels? (NO!)", GPGPU \'25 (paper 000)'


def slurm_jobs(rows: pd.DataFrame) -> list[int]:
    """The SLURM job ids that measured `rows`, ascending ([] where none ran under SLURM, or the rows
    predate the column)."""
    ids = pd.to_numeric(rows.get("slurm_job", pd.Series(dtype=float)), errors="coerce").dropna()
    return sorted({int(i) for i in ids})


def not_run(rows: pd.DataFrame, gpu: dict, precision: str) -> list[str]:
    """The SpMV matrices beyond the L2 in `precision`'s element size that other precisions of the
    run measured and `precision` did not (C3's set differs there, e.g. fp16's range check)."""
    spmv = rows[rows["kernel"] == "spmv"].drop_duplicates(["problem", "precision"])
    ran = set(spmv.loc[spmv["precision"] == precision, "problem"])
    d = peaks.at(gpu, precision).element_bytes
    return sorted({r.problem for r in spmv.itertuples() if r.problem not in ran
                   and size_mb(r.rows, r.cols, r.nnz, d) > gpu["l2_MB"]})


def _in_precision(rows: pd.DataFrame, gpu: dict, stencils, margin: float, dram_fraction: float,
                  counters: pd.DataFrame | None, precision: str,
                  swept: pd.DataFrame | None = None) -> tuple[list[dict], list[dict]]:
    """C1-C5 on the in-house rows of one precision (C5 on `swept`, its rows at every depth of the
    fusion sweep), and the original codes' second verdicts of C3 and C4 (originals.on_originals) where
    they ran in it, each record naming the precision: NO DATA (and why) without rows, N/A where the
    device has no tensor cores in it (C4s: no sparse ones)."""
    from membound.analysis import classification     # it imports this package's verdicts and pairs

    ours = split(rows)[0]
    p, twins = pairs.pairs(ours, gpu, stencils), pairs.pairs(ours, gpu, stencils, twins=True)
    sparse = pairs.pairs(ours, gpu, stencils, tc_role=c4_stencil.SPARSE_ROLE)
    swept = rows if swept is None else swept
    table, swept_pairs = classification.verdicts(swept, gpu, stencils, margin), classification.pairs(swept)
    at_depth = lambda sparsity: {d: g.assign(ratio=1 / g["speedup"])       # noqa: E731 (C4 and C4s at every depth)
                                 for d, g in swept_pairs[swept_pairs["sparsity"] == sparsity].groupby("depth")}
    claims = [c1_bound.speedup_bound(twins, gpu, margin, dram_fraction, pairs.missing_twins(ours), counters, precision),
              c2_scale.scale_l2(p, gpu, margin), c3_spmv.spmv_l2(p, gpu, margin, twins),
              c4_stencil.stencils_generally(p, margin, at_depth=at_depth("dense")),
              c4_stencil.stencils_generally(sparse, margin, sparse=True, at_depth=at_depth("2:4")),
              *c5_scenarios.scenarios_hold(table, swept_pairs, p, gpu, margin,
                                           sources(ours[ours["kernel"] == "stencil"]))]
    extra = on_originals(rows, gpu, stencils, margin)
    peak = peaks.at(gpu, precision)
    for c in claims + extra:
        c["precision"] = precision
        kernel = FAMILY.get(c["id"])
        if ours.empty or kernel and not (ours["kernel"] == kernel).any():
            c["verdict"] = c["on_these_timings"] = NO_DATA
            c["summary"] = (f"no {precision}{' ' + kernel if kernel and len(ours) else ''} rows in this run's raw "
                            "results" + (f" ({peak.note})" if peak.note else ""))
        elif not peak.has_tensor_cores:
            c["verdict"] = NOT_APPLICABLE
        elif c["id"] == "C4s" and not peak.sparse_tensor_core:
            c["verdict"] = c["on_these_timings"] = NOT_APPLICABLE
            c["summary"] = f"no 2:4-sparse tensor cores in {precision} on this device (mma.sp: TF32 and f16 only)"
    return claims, extra


def check(rows: pd.DataFrame, gpu: dict, stencils, margin: float, dram_fraction: float,
          counters: pd.DataFrame | None = None, precisions=PRECISIONS) -> dict:
    """Every claim in every precision of `precisions` on the raw `rows` (measure.ROW_COLUMNS,
    optionally `rep`) of device `gpu`, claim by claim (C1 fp64, C1 fp32, ..., C4 fp16), then the
    original codes' second verdicts (docs/originals.md); `stencils` is config["stencil"]["kernels"],
    `margin` config["claims"]["margin"] and `dram_fraction` config["claims"]["dram_fraction"];
    `counters` the run's ncu rows, if measured. Stencils are compared at their role depth
    (depths.role_rows), not at the sweep's other depths; SCALE on its sweep (measure.sweep_rows)."""
    counters = measure.completed_tags(counters, rows)
    rows = measure.sweep_rows(rows.sort_values("kernel", kind="stable"))  # the same claims whatever the files' order
    swept = pairs.with_rep(rows)
    rows = pairs.with_rep(role_rows(rows, stencils))
    per = [_in_precision(rows[rows["precision"] == p], gpu, stencils, margin, dram_fraction, counters, p,
                         swept[swept["precision"] == p]) for p in precisions]
    claims = [c for part in zip(*(main for main, _ in per)) for c in part] + [c for _, extra in per for c in extra]
    for c in claims:
        if c["id"] == "C3" and c["verdict"] not in (NO_DATA, NOT_APPLICABLE):
            c["numbers"]["not_run"] = not_run(rows, gpu, c["precision"])
    matrices = sorted(set(rows.loc[rows["kernel"] == "spmv", "source"].dropna()))
    return {"paper": PAPER, "device_spec": gpu["name"],
            "tensor_cores": any(peaks.at(gpu, p).has_tensor_cores for p in precisions),
            "no_tensor_cores": [p for p in precisions if not peaks.at(gpu, p).has_tensor_cores],
            "precisions": list(precisions),
            "measured": {"device": sorted(set(rows["device"].dropna().astype(str))),
                         "host": sorted(set(rows["host"].dropna().astype(str))),
                         "slurm_jobs": slurm_jobs(rows),
                         "date_first": str(rows["date"].min()), "date_last": str(rows["date"].max()),
                         **{col: sorted(set(rows.get(col, pd.Series(dtype=str)).dropna().astype(str)))
                            for col in ("membound", "commit")},
                         "precisions": sorted(set(rows["precision"])),
                         "repetitions": int(rows["rep"].nunique()) if len(rows) else 0},
            "statistics": {"interval": METHOD, "margin": margin, "dram_fraction": dram_fraction},
            "matrix_source": "/".join(matrices) or "none", "surrogate": "surrogate" in matrices,
            "claims": claims}
