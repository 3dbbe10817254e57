"""The coverage of the claims' 95% intervals on data like ours, 20,000 draws per case, in one shared
computation (`coverage`):

- over problems, what every claim's verdict uses (verdicts.median_interval, the median ratio), at
  every n of 5-21 problems, drawn from generators of per-problem log ratios like the reference runs'
  (normal, t(3), lognormal sigma 0.5 and 1: skewed like H200 fp64 C4's) and by resampling the
  committed reference runs' own per-problem log ratios of every claim (and part) with at least 5
  problems, at the n that claim uses and at 5 (the fewest, [min, max]); it must cover the
  distribution's median at least 93% of the time, and the t-interval on the mean log that the claims used before does not on the same
  draws (the test tells them apart);
- over the repetitions of one problem (verdicts.t_interval: C5's configurations, the per-problem
  tables), at 3 and 5 repetitions (the sweep's and Table 3's), on symmetric run-to-run noise.

docs/claims.md's coverage table is `table()` of these numbers (`python tests/test_claims_coverage.py`
rewrites it)."""

import math
import sys
from functools import cache

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from membound.analysis.claims import verdicts
from test_claims_docs import DOCS, reference_claims

DRAWS, LEAST = 20_000, 0.93     # 20,000: the coverage at 5 problems, 93.75%, is 4 sd of its draw above 93%
PROBLEMS = range(verdicts.MIN_PROBLEMS, 22)        # 5-21, the problems the claims use
REPETITIONS = (3, 5)
GENERATORS = {   # per-problem log ratios: (draw, median, mean)
    "normal": (lambda rng, shape: rng.standard_normal(shape), 0.0, 0.0),
    "t(3)": (lambda rng, shape: rng.standard_t(3, shape), 0.0, 0.0),
    "lognormal, sigma 0.5": (lambda rng, shape: np.exp(0.5 * rng.standard_normal(shape)), 1.0, math.exp(0.5**2 / 2)),
    "lognormal, sigma 1": (lambda rng, shape: np.exp(rng.standard_normal(shape)), 1.0, math.exp(0.5)),
}
NOISE = ("normal", "t(3)")      # run-to-run noise of one problem: symmetric
BEGIN, END = "<!-- coverage: python tests/test_claims_coverage.py -->", "<!-- end coverage -->"


def reference_logs() -> dict[str, np.ndarray]:
    """'<gpu> <claim> <precision>[ <part>]' -> the per-problem log ratios that decide it in the
    committed reference runs (each problem's geometric mean over its repetitions), where 5 or more."""
    out = {}
    for gpu in ("h100", "h200"):
        for c in reference_claims(gpu)["claims"]:
            cases = pd.DataFrame(c.get("cases") or [])
            if cases.empty or c["id"] not in ("C1", "C2", "C3", "C4", "C4s") or c["verdict"] in ("N/A", "NO DATA"):
                continue
            name = f"{gpu} {c['id']} {c['precision']}"
            if c["id"] == "C1":
                sets = {"": cases.loc[cases["excluded"] == "", "speedup"]}
            elif c["id"] == "C2":
                sets = {" within half the L2": cases.loc[cases["within_half_L2"], "ratio"],
                        " beyond half the L2": cases.loc[~cases["within_half_L2"], "ratio"]}
            elif c["id"] == "C3":
                larger = cases[cases["larger_than_L2"]]
                sets = {"": larger["ratio"], " t_TC/t_twin": larger["t_TC/t_twin"], " t_twin/t_CC": larger["t_twin/t_CC"]}
            else:
                sets = {"": cases["ratio"]}
            for part, values in sets.items():
                logs = np.log(values.dropna().to_numpy(float))
                if len(logs) >= verdicts.MIN_PROBLEMS:
                    out[name + part] = logs
    return out


def _covers(truth, low, high) -> np.ndarray:
    return np.mean((low <= truth) & (truth <= high), axis=-1)


@cache
def coverage() -> pd.DataFrame:
    """One row per (source, n): the fraction of DRAWS data sets whose median interval covers the
    source's median (`median`) and whose t-interval covers its mean (`t`); `over` says whether the
    units are problems or one problem's repetitions."""
    rng = np.random.default_rng(72)
    rows = []
    for name, (draw, median, mean) in GENERATORS.items():
        for n in PROBLEMS:
            x = draw(rng, (DRAWS, n))
            rows.append({"over": "problems", "source": name, "n": n,
                         "median": _covers(median, *verdicts.median_interval(x)[1:]),
                         "t": _covers(mean, *verdicts.t_interval(x)[1:])})
        for n in REPETITIONS if name in NOISE else ():
            x = draw(rng, (DRAWS, n))
            rows.append({"over": "repetitions", "source": name, "n": n, "median": math.nan,
                         "t": _covers(mean, *verdicts.t_interval(x)[1:])})
    logs = reference_logs()
    for n in sorted({len(v) for v in logs.values()}):     # each set at its own n and at the fewest problems
        sets = {name: v for name, v in logs.items() if len(v) == n or n == verdicts.MIN_PROBLEMS}
        size = np.array([len(v) for v in sets.values()])[:, None, None]
        x = np.array([np.resize(v, size.max()) for v in sets.values()])
        x = x[np.arange(len(sets))[:, None, None], (rng.random((len(sets), DRAWS, n)) * size).astype(np.intp)]
        _, low, high = verdicts.median_interval(x)
        _, t_low, t_high = verdicts.t_interval(x)
        for i, (name, v) in enumerate(sets.items()):
            rows.append({"over": "problems", "source": "resampled " + name, "n": n, "sd": v.std(ddof=1),
                         "skew": scipy.stats.skew(v), "median": _covers(np.median(v), low[i], high[i]),
                         "t": _covers(v.mean(), t_low[i], t_high[i])})
    return pd.DataFrame(rows)


def table() -> str:
    """The coverage as docs/claims.md shows it: per generator, and per claim for the resampled
    reference runs (all their sets), the lowest coverage of each interval over n and where."""
    c = coverage().assign(group=lambda f: f["source"].str.replace(r"^resampled \w+ (C\w+) \w+.*$", r"resampled \1",
                                                                 regex=True))
    lines = ["| over | data | sd, skew of the logs | n | sets | median interval: lowest (n) | t-interval: lowest (n) |",
             "| --- | --- | --- | --- | ---: | ---: | ---: |"]
    for (over, group), g in c.groupby(["over", "group"], sort=False):
        low = lambda col: (f"{100 * g[col].min():.1f}% ({g.loc[g[col].idxmin(), 'n']})"      # noqa: E731
                           if g[col].notna().any() else "-")
        shape = (f"{g['sd'].min():.2g}-{g['sd'].max():.2g}, {g['skew'].min():.2f} to {g['skew'].max():.2f}"
                 if "sd" in g and g["sd"].notna().any() else "-")
        lines.append(f"| {over} | {group} | {shape} | {g['n'].min()}-{g['n'].max()} | {g['source'].nunique()} "
                     f"| {low('median')} | {low('t')} |")
    return "\n".join(lines) + "\n"


def with_table(text: str) -> str:
    head, rest = text.split(BEGIN, 1)
    return f"{head}{BEGIN}\n\n{table()}\n{END}{rest.split(END, 1)[1]}"


@pytest.mark.slow
def test_the_median_interval_covers_at_least_93_percent_over_problems_on_data_like_ours():
    c = coverage()
    over = c[c["over"] == "problems"]
    assert set(PROBLEMS) <= set(over["n"]) and over["source"].str.startswith("resampled").sum() >= 20
    low = over[over["median"] < LEAST]
    assert low.empty, f"below {LEAST:.0%}:\n{low}"


@pytest.mark.slow
def test_the_t_interval_the_claims_used_before_does_not_on_the_same_draws():
    """The test can fail: the t-interval on the mean log under-covers where the data are skewed."""
    c = coverage()
    over = c[c["over"] == "problems"].set_index(["source", "n"])["t"]
    assert over["lognormal, sigma 1"].max() < LEAST
    assert over[over.index.get_level_values(0).str.startswith("resampled")].min() < LEAST


@pytest.mark.slow
def test_the_t_interval_over_repetitions_covers_at_least_93_percent_on_run_to_run_noise():
    c = coverage()
    assert (c.loc[c["over"] == "repetitions", "t"] >= LEAST).all()


@pytest.mark.slow
def test_docs_coverage_table_is_this_tests():
    text = DOCS.read_text()
    assert BEGIN in text and text == with_table(text), \
        "docs/claims.md's coverage is stale: python tests/test_claims_coverage.py"


def test_the_median_interval_is_exact_and_none_below_five_problems():
    """order_rank's k gives [x(k), x(n+1-k)] of binomial coverage >= 95% (93.75% at 5), none below 5."""
    assert [verdicts.order_rank(n) for n in (4, 5, 6, 9, 12, 21)] == [0, 1, 1, 2, 3, 6]
    assert verdicts.order_coverage(5, 1) == pytest.approx(1 - 2 / 32)
    x = np.log(np.arange(1.0, 10.0))                                # 9 problems: [x(2), x(8)]
    assert [float(v) for v in verdicts.median_interval(x)] == pytest.approx([math.log(5), math.log(2), math.log(8)])
    _, low, high = verdicts.median_interval(x[:4])
    assert (low, high) == (-math.inf, math.inf)


def test_interval_is_the_median_interval_over_problems_and_the_t_interval_over_one_problems_repetitions():
    """verdicts.interval (what the verdicts use): the median interval of each problem's mean log."""
    rng = np.random.default_rng(1)
    logs = rng.normal(0.0, 0.3, (6, 1)) + rng.normal(0.0, 0.05, (6, 4))
    frame = pd.DataFrame([{"kernel": "k", "problem": f"p{i}", "ratio": math.exp(v)}
                          for i, row in enumerate(logs) for v in row])
    got = verdicts.interval(frame, "ratio")
    assert [got["estimate"], got["ci_low"], got["ci_high"]] == pytest.approx(
        [math.exp(v) for v in verdicts.median_interval(logs.mean(-1))])
    assert got["estimand"] == "median"
    one = verdicts.interval(frame[frame["problem"] == "p0"], "ratio")      # one problem: over its repetitions
    assert [one["estimate"], one["ci_low"], one["ci_high"]] == pytest.approx(
        [math.exp(v) for v in verdicts.t_interval(logs[0])]) and one["estimand"] == "geometric mean"


if __name__ == "__main__":
    DOCS.write_text(with_table(DOCS.read_text()))
    print(table(), end="", file=sys.stdout)
