"""The paper's two sides of a figure as the claims pair them (membound.analysis.claims: the CUDA-core
baseline role against the tensor-core role, twins aside), medians over repetitions, and the
claims' medians with their 95% intervals, so that Figures 6 and 7 print the numbers
of claims C2 and C3. Kept apart from plots/common.py: it imports the claims and through them the
model, which the other figures do not need (their rerun triggers stay narrow)."""

from __future__ import annotations

import pandas as pd

from membound.analysis.claims import pairs, verdicts
from membound.plots import common
from membound.run.measure import geomean


def paper_sides(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of the paper's two sides (pairs.CC_ROLE on CUDA cores, pairs.TC_ROLE on tensor
    cores; CUDA-core twins aside), one per problem, precision and implementation: median time and
    value over the repetitions."""
    role = rows["role"].where(rows["unit"] == "cuda_core").eq(rows["kernel"].map(pairs.CC_ROLE)) | \
        rows["role"].where(rows["unit"] == "tensor_core").eq(rows["kernel"].map(pairs.TC_ROLE))
    return common.medians(rows[role], ["problem", "precision", "unit", "role", "impl"])


def with_intervals(rows: pd.DataFrame, gpu: dict, side: str) -> pd.DataFrame:
    """paper_sides(`rows`) (one kernel) with `speedup`, t_TC / t_CC of the row's problem in its
    precision (the speedup of CUDA cores over tensor cores: geometric mean over repetitions of median
    times), and, for the problems of its precision on the same side of the boolean column `side`,
    `median_speedup` with its 95% interval `ci_low`..`ci_high` (claims.interval: the numbers of
    claims C2 and C3)."""
    parts = [_one_precision(part, gpu, side) for _, part in rows.groupby("precision", sort=False)]
    return pd.concat(parts, ignore_index=True) if parts else _one_precision(rows, gpu, side)


def _one_precision(rows: pd.DataFrame, gpu: dict, side: str) -> pd.DataFrame:
    p = pairs.pairs(rows, gpu, None)
    flag = p["problem"].map(rows.drop_duplicates("problem").set_index("problem")[side])
    stats = {f: verdicts.interval(p[flag == f], "ratio") for f in (False, True)}
    out = paper_sides(rows)
    out = out.assign(speedup=out["problem"].map(p.groupby("problem")["ratio"].agg(geomean)))
    return out.assign(**{col: out[side].map({f: s[key] for f, s in stats.items()})
                         for col, key in (("median_speedup", "estimate"), ("ci_low", "ci_low"), ("ci_high", "ci_high"))})
