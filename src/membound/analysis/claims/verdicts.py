"""The claims' statistics: a claim's estimate over problems is the median of its problems' ratios
(each problem's geometric mean over its repetitions) with a distribution-free 95% interval from
order statistics; over the repetitions of a single problem (the per-problem tables, C5's
configurations) the geometric mean with its 95% t-interval on the log ratios; the verdict of that
interval against the claim's reference (membound.analysis.claims: LEVEL, SUPPORTED, CONTRADICTED,
INCONCLUSIVE; N/A, NO DATA); a claim's record (claims.json). tests/test_claims_coverage.py measures
both intervals' coverage on data like ours."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

SUPPORTED, LEVEL, CONTRADICTED, INCONCLUSIVE = "SUPPORTED", "LEVEL", "CONTRADICTED", "INCONCLUSIVE"
NOT_APPLICABLE, NO_DATA = "N/A", "NO DATA"
WORSE = [SUPPORTED, LEVEL, INCONCLUSIVE, CONTRADICTED]   # a claim of several parts takes its worst part's
LEVEL_95 = 95.0
FLOOR = 93.0            # the least coverage an interval may have where no order statistics reach LEVEL_95


def order_coverage(n: int, k: int) -> float:
    """The exact coverage of [x(k), x(n+1-k)] (order statistics of n units) for the median of any
    continuous distribution: 1 - 2 P(Binomial(n, 1/2) < k), exactly."""
    return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2**n


def order_rank(n: int, level: float = LEVEL_95) -> int:
    """k of the median's interval [x(k), x(n+1-k)] from n units: the largest whose coverage is at
    least `level`%, else at least FLOOR% (n = 5: [min, max], 93.75%); 0 where none is (n < 5)."""
    for least in (level, FLOOR):
        ks = [k for k in range(1, n // 2 + 1) if order_coverage(n, k) >= least / 100]
        if ks:
            return max(ks)
    return 0


ESTIMAND = {True: "median", False: "geometric mean"}   # over problems, over one problem's repetitions
MIN_PROBLEMS = next(n for n in range(1, 100) if order_rank(n))     # 5: fewer problems give no interval
METHOD = (f"distribution-free {LEVEL_95:g}% interval for the median ratio over problems (order statistics "
          f"x(k)..x(n+1-k), the largest k of exact coverage >= {LEVEL_95:g}%; "
          f"{100 * order_coverage(MIN_PROBLEMS, 1):g}% at {MIN_PROBLEMS} problems, none below), each problem "
          f"its geometric mean over its repetitions; one problem: the geometric mean over its repetitions "
          f"with a {LEVEL_95:g}% t-interval on the log ratios")


def median_interval(units: np.ndarray, level: float = LEVEL_95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median of the logs `units` along the last axis and its distribution-free `level`% interval
    [x(k), x(n+1-k)] (`order_rank`), as (median, low, high) of the logs; -inf and inf with fewer
    than MIN_PROBLEMS units (nothing bounds it: the verdict is INCONCLUSIVE).
    Vectorised over the leading axes (tests/test_claims_coverage.py measures its coverage)."""
    n, k = units.shape[-1], order_rank(units.shape[-1], level)
    x = np.sort(units, -1)
    median = (x[..., (n - 1) // 2] + x[..., n // 2]) / 2
    if not k:
        return median, np.full_like(median, -np.inf), np.full_like(median, np.inf)
    return median, x[..., k - 1], x[..., n - k]


@functools.cache
def t_quantile(q: float, df: int) -> float:
    """Student's t quantile (scipy.stats.t.ppf: a millisecond a call, asked for per claim and problem)."""
    import scipy.stats      # here: most jobs that import the claims ask for no t-interval, and it takes a second
    return float(scipy.stats.t.ppf(q, df))


def t_interval(units: np.ndarray, level: float = LEVEL_95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean of the logs `units` along the last axis and its Student-t `level`% interval (n - 1
    degrees of freedom), as (mean, low, high) of the logs; -inf and inf with a single unit (nothing
    bounds it: the verdict is INCONCLUSIVE).
    Vectorised over the leading axes (tests/test_claims_coverage.py measures its coverage)."""
    n = units.shape[-1]
    mean = units.mean(-1)
    if n < 2:
        return mean, np.full_like(mean, -np.inf), np.full_like(mean, np.inf)
    half = t_quantile(0.5 + level / 200, n - 1) * units.std(-1, ddof=1) / math.sqrt(n)
    return mean, mean - half, mean + half


def interval(frame: pd.DataFrame, column: str) -> dict:
    """Median of `column` over the problems of `frame` (each problem's geometric mean over its
    repetitions) and its distribution-free 95% interval (`median_interval`; 0 and inf from fewer than
    MIN_PROBLEMS problems), or, with a single problem, the geometric mean over its repetitions and
    its t-interval (0 and inf from a single ratio); NaNs where `frame` is empty. `estimand` names
    which."""
    logs = [np.log(g[column].to_numpy(float)) for _, g in frame.groupby(["kernel", "problem"], sort=False)]
    out = {"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n": len(frame), "problems": len(logs),
           "estimand": ESTIMAND[len(logs) > 1]}
    if not logs:
        return out
    mean, low, high = (median_interval(np.array([x.mean() for x in logs])) if len(logs) > 1 else t_interval(logs[0]))
    out["estimate"], out["ci_low"], out["ci_high"] = (float(np.exp(v)) for v in (mean, low, high))
    return out


def decide(ci_low: float, ci_high: float, reference: float, margin: float, side: str) -> str:
    """LEVEL, SUPPORTED, CONTRADICTED or INCONCLUSIVE of an interval against `reference` (see the
    module docstring); `side` is where the claim puts the value: 'above' or 'below' the reference.
    NO DATA for an empty interval."""
    if math.isnan(ci_low) or math.isnan(ci_high):
        return NO_DATA
    if reference * (1 - margin) <= ci_low and ci_high <= reference * (1 + margin):
        return LEVEL
    above, below = ci_low > reference, ci_high < reference
    if above or below:
        return SUPPORTED if above == (side == "above") else CONTRADICTED
    return INCONCLUSIVE


def worst(verdicts) -> str:
    """The least favourable of several parts' verdicts (NO DATA parts aside; NO DATA if all are)."""
    known = [v for v in verdicts if v in WORSE]
    return max(known, key=WORSE.index) if known else NO_DATA


def estimate(frame: pd.DataFrame, column: str, reference: float, margin: float, side: str) -> dict:
    """interval() of `frame[column]` with its verdict against `reference`."""
    est = interval(frame, column)
    return {**est, "verdict": decide(est["ci_low"], est["ci_high"], reference, margin, side)}


def per_problem(frame: pd.DataFrame, column: str, reference: float, margin: float, side: str) -> pd.DataFrame:
    """One row per problem: its estimate, interval over repetitions, repetitions and verdict (no
    interval and no verdict from a single repetition)."""
    out = [{"kernel": k, "problem": q, **(estimate(g, column, reference, margin, side) if len(g) > 1 else
                                          {**interval(g, column), "ci_low": math.nan, "ci_high": math.nan, "verdict": ""})}
           for (k, q), g in frame.groupby(["kernel", "problem"], sort=False)]
    return pd.DataFrame(out, columns=["kernel", "problem", "estimate", "ci_low", "ci_high", "n", "problems", "verdict"])


def sources(frame: pd.DataFrame) -> list[str]:
    return sorted(set(frame["source"].dropna()))


def labels(frame: pd.DataFrame) -> list[str]:
    return sorted({f"{k} {q}" for k, q in zip(frame["kernel"], frame["problem"])})


def interval_text(e: dict) -> str:
    """"estimate [ci_low, ci_high]" of a claim or part (3 significant digits), its own `estimate_text`
    where it has one (C5: a count), the estimate alone without an interval, or "no data"."""
    if e.get("estimate_text"):
        return e["estimate_text"]
    finite = lambda v: v is not None and math.isfinite(v)    # noqa: E731 (None: read back from claims.json)
    if not finite(e["estimate"]):
        return "no data"
    if finite(e.get("ci_low")) and finite(e.get("ci_high")):
        return f"{e['estimate']:.3g} [{e['ci_low']:.3g}, {e['ci_high']:.3g}]"
    return f"{e['estimate']:.3g}"


def claim(cid: str, est: dict, reference: float, side: str, margin: float, used: pd.DataFrame, **fields) -> dict:
    """A claim's record: the fields every claim has (claims.json), then `fields`."""
    return {"id": cid, "verdict": est["verdict"], "on_these_timings": est["verdict"], "estimate": est["estimate"],
            "ci_low": est["ci_low"], "ci_high": est["ci_high"], "n": est["n"], "problems": est["problems"],
            "margin": margin, "reference": reference, "side": side, "pairs": labels(used), **fields}
