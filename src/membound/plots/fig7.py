"""Figure 7: SpMV on CUDA cores (the cuSPARSE role) and tensor cores (the DASP role), a row per
precision: (a) effective GFLOP/s per matrix in D1..D21 order, (b) the median speedup of CUDA
cores over tensor cores (t_TC / t_CC) over the matrices larger and smaller than the L2 (size as
Table 2 counts it, with values, x and y of the precision's element size: a matrix beyond the L2 in
fp64 may fit in fp16), with its 95% interval (claim C3's), and C3's decomposition where the
tensor-core kernel has its CUDA-core twin: the tensor-core effect t_TC/t_twin and the format effect
t_twin/t_CC, each with its interval (lighter bars). Twins and repetitions: see paired.paper_sides. Where the original DASP ran (docs/originals.md), its rows and those of cuSPARSE
as its driver timed it stand beside the in-house ones, with their own medians (claim C3
originals)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from membound.analysis.claims import c3_spmv, pairs, verdicts
from membound.model import peaks
from membound.model.equations import size_mb
from membound.model.peaks import ELEMENT_BYTES
from membound.model.precision import PRECISIONS
from membound.originals.rows import is_original, split
from membound.plots import common, paired, style

TITLE = "Figure 7: SpMV (CSR)"


def title(data: pd.DataFrame) -> str:
    """The figure's title (the same for any data)."""
    return TITLE
WIDTHS, HEIGHT = (8.5, 4.0), 4.2
EFFECTS = {name: label.replace("t_", "") for name, (label, _, _) in c3_spmv.EFFECTS.items()}   # TC/twin, twin/CC
COLUMNS = ["code", "problem", "rows", "cols", "nnz", "size_MB", "L2_MB", "larger_than_L2", "unit", "role",
           "impl", "metric", "value", "t_median_s", "speedup", "median_speedup", "ci_low", "ci_high",
           *(f"{name}{end}" for name in EFFECTS for end in ("", "_low", "_high")), *common.KEEP]


def data(raw: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """The plotted numbers: one row per matrix, precision and unit (GFLOP/s), with the matrix's size
    in that precision, its speedup and the median of its side of the L2 with C3's
    decomposition there (`tensor_core_effect`, `format_effect`, each with `_low` and `_high`; NaN
    without twins); `source` says real or surrogate."""
    rows = raw[raw["kernel"] == "spmv"]
    d = rows["precision"].map(ELEMENT_BYTES)
    out = rows.assign(size_MB=size_mb(rows["rows"], rows["cols"], rows["nnz"], d), L2_MB=gpu["l2_MB"], gpu=gpu["name"])
    out = out.assign(larger_than_L2=out["size_MB"] > out["L2_MB"], order=out["code"].str[1:].astype(int))
    ours, originals = split(out)
    out = pd.concat([paired.with_intervals(part, gpu, "larger_than_L2") for part in (ours, originals)
                     if part is ours or not part.empty])
    effects = _effects(ours, gpu)
    out = out.join(effects, on=["precision", "larger_than_L2"]) if len(effects) else out
    return common.by_precision_order(out.reindex(columns=[*out.columns, *(c for c in COLUMNS if c not in out)]),
                                     ["order", "unit"])[COLUMNS]


def _effects(rows: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """C3's decomposition (c3_spmv.with_twins) per precision and side of the L2 of the in-house `rows`:
    each effect's median and interval (verdicts.interval, as the claims)."""
    out = {}
    for precision, part in rows.groupby("precision", sort=False):
        both = c3_spmv.with_twins(pairs.pairs(part, gpu, None), pairs.pairs(part, gpu, None, twins=True))
        side = both["problem"].map(part.drop_duplicates("problem").set_index("problem")["larger_than_L2"])
        for larger, g in both.groupby(side):
            out[precision, larger] = {f"{name}{end}": verdicts.interval(g, name)[key] for name in EFFECTS
                                      for end, key in (("", "estimate"), ("_low", "ci_low"), ("_high", "ci_high"))}
    return pd.DataFrame.from_dict(out, orient="index").rename_axis(["precision", "larger_than_L2"]) if out else \
        pd.DataFrame()


def draw(axes, data: pd.DataFrame, codes=()) -> None:
    """Draw Figure 7 (one precision) into the two panels of `axes`: (a) GFLOP/s per matrix, naming the
    matrices of `codes` (those of every precision) that have no row here, (b) the medians."""
    if data.empty:
        for ax in axes:
            ax.text(0.5, 0.5, "no SpMV rows", transform=ax.transAxes, ha="center")
        return
    _per_matrix(axes[0], data, data.drop_duplicates("problem"), [c for c in codes if c not in set(data["code"])])
    _medians(axes[1], data)


def _per_matrix(ax, data: pd.DataFrame, matrices: pd.DataFrame, absent: list) -> None:
    """(a): a bar per matrix and (unit, role), on a grey background where the matrix exceeds the L2; the
    x label names the `absent` matrices (not run in this precision: the SpMV job's log says why)."""
    larger = matrices.loc[matrices["larger_than_L2"], "problem"]
    x, _ = style.grouped_bars(ax, data, "problem")
    for i in x[larger]:
        ax.axvspan(i - 0.5, i + 0.5, color="0.92", lw=0, zorder=0)
    ax.set_xticks(x, [c + ("*" if s == "surrogate" else "") for c, s in zip(matrices["code"], matrices["source"])],
                  rotation=90)
    surrogate = "; * surrogate" if (matrices["source"] == "surrogate").any() else ""
    missing = f"; not run in {data['precision'].iloc[0]}: {', '.join(absent)} (see the SpMV log)" if absent else ""
    ax.set(xlabel=f"matrix (Table 2 code{surrogate}{missing})", ylabel=f"effective {data['metric'].iloc[0]}")
    style.bar_yscale(ax, data["value"])
    style.legend_above(ax, 2 if is_original(data).any() else 3, [Patch(color="0.92", label="matrix larger than the L2")])
    ax.set_title("(a) effective GFLOP/s per matrix", fontsize=9, loc="left", pad=_pad(data))


def _medians(ax, data: pd.DataFrame) -> None:
    """(b): the median of t_TC / t_CC over the matrices larger and smaller than the L2, of the
    in-house kernels and, where they ran, of the original codes (hatched; shorter labels), and beside
    the in-house ones, lighter, C3's decomposition into TC/twin and twin/CC where twins ran."""
    l2 = data["L2_MB"].iloc[0]
    parts = list(data.groupby(is_original(data)))
    stats, labels, hatched, shade = [], [], [], []
    for original, part in parts:
        matrices = part.drop_duplicates("problem")
        for larger in (True, False):
            side = matrices[matrices["larger_than_L2"] == larger]
            stats.append(side[["median_speedup", "ci_low", "ci_high"]].max().to_numpy(float))
            sign = ">" if larger else "≤"
            labels.append(f"{sign} L2\n{'orig.' if original else 'ours'}\n{len(side)}" if len(parts) > 1 else
                          f"{sign} L2 ({l2:g} MB)\n{len(side)} matrices")
            hatched.append(original)
            shade.append("0.6")
            for name, short in EFFECTS.items() if not original and side[list(EFFECTS)].notna().any().any() else ():
                stats.append(side[[name, f"{name}_low", f"{name}_high"]].max().to_numpy(float))
                labels.append(f"{sign} L2\n{short}")
                hatched.append(False)
                shade.append("0.85")
    g, lo, hi = np.array(stats).T
    lo, hi = (np.where(np.isfinite(hi), v, g) for v in (lo, hi))   # one ratio alone: no interval to draw
    bars = ax.bar(labels, g, 0.6, color=shade, yerr=[g - lo, hi - g], capsize=4, ecolor="0.1")
    for bar, original in zip(bars, hatched):
        bar.set_hatch("///" if original else None)
    ax.bar_label(bars, [style.interval(*s) for s in stats], label_type="center", rotation=90, fontsize=7)
    ax.axhline(1, color="0.3", lw=1, ls="--")
    ax.set(ylabel="t_TC / t_CC, 95% CI (> 1: CUDA cores faster)", ylim=(0, np.nanmax([*hi, 1]) * 1.2))
    ax.grid(axis="x", visible=False)
    ax.tick_params(axis="x", labelsize=7)
    split = "; TC/twin, twin/CC" if len(set(shade)) > 1 else ""
    ax.set_title(f"(b) MEDIAN of t_TC / t_CC{split}", fontsize=9, loc="left", pad=_pad(data))


def _pad(data: pd.DataFrame) -> int:
    """The panel titles' distance from the axes: above (a)'s legend (three rows with the original codes')."""
    return 48 if is_original(data).any() else 24


def figure(data: pd.DataFrame, gpu: dict, caption: str, precisions=PRECISIONS):
    """Figure 7 of `data` (see `data`), a row per precision, with `caption` at its foot."""
    codes = sorted(data["code"].unique(), key=lambda c: int(c[1:]))   # D1..D21
    return style.facets(partial(draw, codes=codes), WIDTHS, HEIGHT, data, f"{TITLE} on {gpu['name']}", caption,
                        precisions, lambda p: peaks.no_rows(gpu, p, "SpMV"))
