"""What the paper's figures share besides their look: rendering raw rows (read by membound.run.raw), the caption line, and the
geometric-mean speedup of CUDA cores over tensor cores on either side of a cache-size split
(Figures 6 and 7 take theirs, with the claims' intervals, from plots/paired.py).

Rows are always told apart by `unit` (cuda_core | tensor_core) and `role`, never by `impl`, so
GPU and CPU-profile results plot alike.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from membound.model.precision import PRECISIONS
from membound.run import config
from membound.run import raw as raw_files
from membound.run.measure import geomean
from membound.run.outputs import save_figure, write_csv

UNITS = ("cuda_core", "tensor_core")
KEEP = ["precision", "gpu", "device", "date", "source"]   # the axis and provenance columns of every plotted-data CSV


def medians(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per case `keys` (in order of appearance): the median time and value over its
    repetitions, the first of every other column."""
    firsts = {c: "first" for c in rows.columns if c not in keys}
    return rows.groupby(keys, sort=False, as_index=False).agg({**firsts, "t_median_s": "median", "value": "median"})


def by_precision_order(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """`frame` sorted by precision (PRECISIONS order: a figure's facets), then by `keys`."""
    order = frame["precision"].map({p: i for i, p in enumerate(PRECISIONS)})
    return (frame.assign(_facet=order).sort_values(["_facet", *keys], kind="stable").drop(columns="_facet")
            .reset_index(drop=True))


def with_speedups(rows: pd.DataFrame, key: str, side: str) -> pd.DataFrame:
    """`rows` (one per problem `key`, precision and unit) with `speedup`, t_TC / t_CC of the row's
    problem in its precision (the speedup of CUDA cores over tensor cores, from median times), and
    `geomean_speedup`, the geometric mean of the speedups of all problems of its precision on the same
    side of the boolean column `side` (no interval: Figures 6 and 7 use paired.with_intervals, the
    claims' numbers)."""
    keys = [key, "precision"]
    t = rows.pivot_table(index=keys, columns="unit", values="t_median_s").reindex(columns=list(UNITS))
    out = rows.join((t["tensor_core"] / t["cuda_core"]).rename("speedup"), on=keys)
    per_side = out.drop_duplicates(keys).groupby(["precision", side])["speedup"].agg(geomean).rename("geomean_speedup")
    return out.join(per_side, on=["precision", side])


def caption(gpu_name: str, rows: pd.DataFrame | None = None, spec: str | None = None) -> str:
    """The caption line of a figure: the GPU (spec name and file), then for measured `rows` the
    measured devices, the dates and, where rows are matrices, REAL or SURROGATE; without rows,
    'analytical, from <spec>'."""
    if rows is None:
        return f"GPU: {gpu_name}; analytical, from {spec}"
    parts = [f"GPU: {gpu_name}" + (f" ({spec})" if spec else "")]
    if rows.empty:
        return "; ".join(parts + ["no measured rows"])
    days = sorted(rows["date"].dropna().astype(str).str[:10].unique())
    parts.append("measured on: " + ", ".join(sorted(rows["device"].dropna().astype(str).unique())))
    parts.append("date: " + (days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"))
    matrices = rows.drop_duplicates("problem")["source"] if "problem" in rows else rows["source"]
    surrogates = int((matrices == "surrogate").sum())
    if surrogates:
        parts.append(f"matrices: SURROGATE ({surrogates} of {len(matrices)} are surrogate stand-ins, "
                     "not the SuiteSparse matrices)")
    elif (matrices == "real").any():
        parts.append("matrices: REAL (SuiteSparse)")
    return "; ".join(parts)


def render(module, raw_paths, gpu_file: str, output, precisions=None, **data_args) -> None:
    """A measured figure: read the raw CSVs, write `module`'s plotted numbers (module.data, given
    `data_args` too) to `output.csv` and its figure, captioned, to `output.pdf` and `output.png`; a
    figure that facets by precision gets a row for each of `precisions`."""
    gpu = config.load_gpu(Path(gpu_file).stem)
    try:
        raw = raw_files.read_all(raw_paths)
    except raw_files.RawError as err:   # rule raw_check finds it first; a figure run by hand, here
        raise SystemExit(f"error: {err}") from None
    data = module.data(raw, gpu, **data_args)
    write_csv(data, output.csv)
    facets = {"precisions": precisions} if precisions else {}
    save_figure(module.figure(data, gpu, caption(gpu["name"], raw, gpu_file), **facets), output.pdf, output.png)
