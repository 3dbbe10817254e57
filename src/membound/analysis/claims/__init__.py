"""The paper's claims (paper 000 Sec. 4.2 and 5.4) checked on the measured raw rows, each with a
bootstrap confidence interval over problems and repetitions.

A pair is one problem timed on two sides in one repetition (`rep`; rows without it are rep 0):
- C2-C4 compare algorithms as the paper does: the CUDA-core baseline (role CC_ROLE) against the
  tensor-core implementation (role TC_ROLE);
- C1 compares each tensor-core implementation `<impl>` with its CUDA-core twin `<impl>_twin` (the
  same layout, memory accesses and launch shape, FMAs for MMAs), on the pairs that are memory-bound
  in practice: working set larger than the L2 and the twin's achieved DRAM bandwidth (analytical Q
  over its time) at least `dram_fraction` of the spec's; where counters were measured, the twin must
  also move its sibling's DRAM bytes to within TWIN_DRAM (else it is not a twin). The other pairs
  are listed with the reason.

Each claim's estimate is the geometric mean of its ratios (t_TC/t_CC, or the speedup t_CC/t_TC for
C1), over problems of the per-problem geometric mean over repetitions; the 95% interval is a
percentile bootstrap resampling problems, then each drawn problem's repetitions (seeded: the same
rows give the same interval). Against the claim's reference value r (1, or eq. 23's bound for C1),
with the relative `margin` (config claims.margin, docs/claims.md):
LEVEL where the whole interval lies in r(1 -+ margin); else SUPPORTED where it lies entirely on the
claim's side of r, CONTRADICTED entirely on the other side, INCONCLUSIVE where it straddles r.
N/A on a device without tensor cores (the CPU profile emulates them: `on_these_timings` still says
what the timings give); NO DATA where no pair qualifies. A CONTRADICTED verdict is a finding,
reported like a SUPPORTED one, never an error.
"""

from __future__ import annotations

import pandas as pd

from membound.analysis.claims import c1_bound, c2_scale, c3_spmv, c4_stencil, pairs
from membound.analysis.claims.originals import on_originals
from membound.analysis.claims.report import write
from membound.analysis.claims.verdicts import LEVEL_95, NOT_APPLICABLE, RESAMPLES, SEED, has_tensor_cores
from membound.analysis.depths import role_rows
from membound.originals.rows import split
from membound.run import measure

__all__ = ["check", "write"]

PAPER = 'Zhang et al., "Can Tensor Cores Benefit Memory-Bound Kernels? (NO!)", GPGPU \'25 (paper 000)'


def slurm_jobs(rows: pd.DataFrame) -> list[int]:
    """The SLURM job ids that measured `rows`, ascending ([] where none ran under SLURM, or the rows
    predate the column)."""
    ids = pd.to_numeric(rows.get("slurm_job", pd.Series(dtype=float)), errors="coerce").dropna()
    return sorted({int(i) for i in ids})


def check(rows: pd.DataFrame, gpu: dict, stencils, margin: float, dram_fraction: float,
          counters: pd.DataFrame | None = None) -> dict:
    """Every claim on the raw `rows` (measure.ROW_COLUMNS, optionally `rep`) of device `gpu`;
    `stencils` is config["stencil"]["kernels"], `margin` config["claims"]["margin"] and
    `dram_fraction` config["claims"]["dram_fraction"]; `counters` the run's ncu rows, if measured. The
    original codes' rows (docs/originals.md) give C3 and C4 a second verdict (originals.on_originals).
    Stencils are compared at their role depth (depths.role_rows), not at the sweep's other depths."""
    counters = measure.completed_tags(counters, rows)
    rows = role_rows(rows, stencils)
    ours = split(rows)[0]
    p = pairs.pairs(ours, gpu, stencils)
    tensor_cores = has_tensor_cores(gpu)
    twins = pairs.pairs(ours, gpu, stencils, twins=True)
    claims = [c1_bound.speedup_bound(twins, gpu, margin, dram_fraction, pairs.missing_twins(ours), counters),
              c2_scale.scale_l2(p, gpu, margin), c3_spmv.spmv_l2(p, gpu, margin),
              c4_stencil.stencils_generally(p, margin), *on_originals(rows, gpu, stencils, margin)]
    if not tensor_cores:
        for c in claims:
            c["verdict"] = NOT_APPLICABLE
    matrices = sorted(set(rows.loc[rows["kernel"] == "spmv", "source"].dropna()))
    return {"paper": PAPER, "device_spec": gpu["name"], "tensor_cores": tensor_cores,
            "measured": {"device": sorted(set(rows["device"].dropna().astype(str))),
                         "host": sorted(set(rows["host"].dropna().astype(str))),
                         "slurm_jobs": slurm_jobs(rows),
                         "date_first": str(rows["date"].min()), "date_last": str(rows["date"].max()),
                         **{col: sorted(set(rows.get(col, pd.Series(dtype=str)).dropna().astype(str)))
                            for col in ("membound", "commit")},
                         "repetitions": int(pairs.with_rep(rows)["rep"].nunique()) if len(rows) else 0},
            "statistics": {"interval": f"{LEVEL_95:g}% percentile bootstrap over problems and repetitions",
                           "resamples": RESAMPLES, "seed": SEED, "margin": margin, "dram_fraction": dram_fraction},
            "matrix_source": "/".join(matrices) or "none", "surrogate": "surrogate" in matrices,
            "claims": claims}

