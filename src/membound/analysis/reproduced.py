"""What counts as "Results Reproduced" (ACM's badge) for a run against the committed reference run of
its GPU (results/reference/<gpu>/, rendered by `snakemake --profile reference all`): every claim the
reference decides gets the same verdict, and each measured figure's plotted numbers stay within a
ratio of the reference's. `python -m membound.ae reproduced <run> <reference>` checks it, one line
per miss; the appendix states it from these constants."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from membound.analysis.claims.verdicts import CONTRADICTED, SUPPORTED

MUST_MATCH = (SUPPORTED, CONTRADICTED)  # the reference's verdicts a run repeats; LEVEL, INCONCLUSIVE: any
CASE_RATIO = 1.5  # each case's plotted number within [1/1.5, 1.5] times the reference's
FIGURE_RATIO = 1.15  # the geometric mean of a figure's case ratios within [1/1.15, 1.15]
CASE = ["precision", "unit", "role", "impl", "metric"]  # what tells a plotted case apart, with the figure's own
FIGURES = {"fig6_scale": ["n"], "fig7_spmv": ["problem"], "fig8_stencil": ["problem", "depth", "at"], "gemv": ["n"]}


def criteria() -> str:
    """The criteria as a Markdown paragraph (the appendix's)."""
    return (f"A run reproduces the results where, against the committed reference run of its GPU: every claim "
            f"(per precision) whose reference verdict is {' or '.join(MUST_MATCH)} gets the same verdict (a LEVEL "
            f"or INCONCLUSIVE reference verdict admits any); and in each measured figure "
            f"({', '.join(f'`figures/{f}.csv`' for f in FIGURES)}), every case the reference plots is plotted, its "
            f"number (`value`, the median over repetitions) within a factor {CASE_RATIO:g} of the reference's, and "
            f"the geometric mean of the figure's ratios within a factor {FIGURE_RATIO:g}.")


def verdict_misses(run: dict, reference: dict) -> list[str]:
    """A line per claim whose reference verdict is in MUST_MATCH and whose run verdict is not the same."""
    found = {(c["id"], c.get("precision", "fp64")): c["verdict"] for c in run["claims"]}
    lines = []
    for c in reference["claims"]:
        key = (c["id"], c.get("precision", "fp64"))
        if c["verdict"] in MUST_MATCH and found.get(key) != c["verdict"]:
            lines.append(f"claim {key[0]} ({key[1]}): {found.get(key, 'missing')}, the reference {c['verdict']}")
    return lines


def figure_misses(name: str, run: pd.DataFrame, reference: pd.DataFrame) -> list[str]:
    """A line per case of `reference` missing from `run` or outside CASE_RATIO, and one where the
    figure's geometric mean ratio is outside FIGURE_RATIO."""
    keys = [k for k in (*CASE, *FIGURES[name]) if k in reference.columns]
    if lacking := [k for k in [*keys, "value"] if k not in run.columns]:
        return [f"{name}: the run's figure data has no column {', '.join(lacking)}: render both with one membound "
                "version"]
    plotted = reference[keys + ["value"]].dropna(subset=["value"])
    both = plotted.merge(run[keys + ["value"]], on=keys, how="left", suffixes=("_ref", ""))
    ratio = both["value"] / both["value_ref"]
    lines = []
    for (_, row), r in zip(both.iterrows(), ratio):
        case = ", ".join(f"{k} {row[k]}" for k in keys)
        if math.isnan(r):
            lines.append(f"{name}: {case}: not plotted")
        elif not 1 / CASE_RATIO <= r <= CASE_RATIO:
            lines.append(f"{name}: {case}: {row['value']:.4g}, {r:.3g} times the reference's {row['value_ref']:.4g}")
    measured = ratio[ratio > 0].dropna()
    mean = float(np.exp(np.log(measured).mean())) if len(measured) else math.nan
    if len(measured) and not 1 / FIGURE_RATIO <= mean <= FIGURE_RATIO:
        lines.append(f"{name}: geometric mean ratio {mean:.3g}, outside a factor {FIGURE_RATIO:g}")
    return lines


def misses(run, reference) -> list[str]:
    """Every miss of the results folder `run` against `reference` (each with claims.json, figures/)."""
    run, reference = Path(run), Path(reference)
    lines = [f"{folder / 'claims.json'}: missing; render it first (`snakemake --profile reference all` for the "
             "reference)" for folder in (run, reference) if not (folder / "claims.json").is_file()]
    if lines:
        return lines
    lines = verdict_misses(*(json.loads((f / "claims.json").read_text()) for f in (run, reference)))
    for name in FIGURES:
        ref = reference / "figures" / f"{name}.csv"
        if ref.is_file():
            ours = run / "figures" / f"{name}.csv"
            lines += (figure_misses(name, pd.read_csv(ours), pd.read_csv(ref)) if ours.is_file()
                      else [f"{ours}: missing (the reference has {name})"])
    return lines


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m membound.ae reproduced", description=criteria())
    parser.add_argument("run", help="the run's results folder, e.g. results/h100")
    parser.add_argument("reference", help="the reference's, e.g. results/reference/h100")
    args = parser.parse_args(argv)
    lines = misses(args.run, args.reference)
    print("\n".join(lines) if lines else f"reproduced: {args.run} matches {args.reference} by the criteria")
    return 1 if lines else 0
