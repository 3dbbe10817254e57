"""The paper's stacked layout across devices, from each profile's plotted-data CSVs
(results/<gpu>/figures/<figure>.csv, results/reference/<gpu>/figures/): Figures 6, 7 and 8 one panel
row per GPU and precision, Figure 2 every GPU's roofline on one plot per
precision (as the paper's), and the claims of every GPU and precision in one table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from membound.model.precision import PRECISIONS
from membound.plots import common, fig2, style

GPU_COLORS = ("tab:blue", "tab:red", "tab:green", "tab:purple", "tab:brown")


def label(path: str) -> str:
    """The profile of a file <results>/<profile>/{figures/<name>, claims.json}: 'h100', 'reference/h100'."""
    parts = Path(path).parts
    return "/".join(parts[1:-2] if parts[-2] == "figures" else parts[1:-1])


def _with_precision(data: pd.DataFrame) -> pd.DataFrame:
    """Plotted data with a `precision` column (CSVs rendered before the precision axis: fp64)."""
    return data.assign(precision=data["precision"].fillna("fp64") if "precision" in data else "fp64")


def _caption(data: pd.DataFrame) -> str:
    gpu = data["gpu"].iloc[0]
    return common.caption(gpu, data) if "date" in data else common.caption(gpu, spec="its spec")


def _rows(panels: list[tuple[str, pd.DataFrame]], faceted: bool) -> list[tuple[str, pd.DataFrame]]:
    """One (label, data) per GPU, or per GPU and precision held by any panel where `faceted` (a GPU
    without a precision's rows keeps its empty row: label 'h100 fp16')."""
    if not faceted:
        return panels
    panels = [(name, _with_precision(data)) for name, data in panels]
    held = {p for _, data in panels for p in data["precision"]}
    return [(f"{name} {p}", part) for name, data in panels
            for p, part in style.by_precision(data, [p for p in PRECISIONS if p in held])]


def figure(module, panels: list[tuple[str, pd.DataFrame]], faceted: bool = True, precision: str | None = None):
    """`module`'s figure (fig6, fig7 or fig8: its title(data), WIDTHS, HEIGHT and draw) with one row per
    (label, data), and per precision where `faceted`; `precision`: that precision's rows alone, a row
    per (label, data) that has them (the others named at the foot)."""
    if not panels:
        raise ValueError(f"no plotted-data CSVs for '{module.title(pd.DataFrame())}': render it for a profile first")
    missing = []
    if precision:
        panels = [(name, data[data["precision"] == precision]) for name, data in
                  ((name, _with_precision(data)) for name, data in panels)]
        missing = [name for name, data in panels if data.empty]
        panels = [(name, data) for name, data in panels if not data.empty] or panels[:1]
    rows = _rows(panels, faceted and not precision)
    fig, axes = style.panels(len(rows), module.WIDTHS, module.HEIGHT)
    for row, (name, data) in zip(axes, rows):
        if data.empty:
            for ax in row:
                ax.text(0.5, 0.5, f"{name}: no rows in this precision", transform=ax.transAxes, ha="center")
            continue
        module.draw(row, data)
        # the row's GPU under its first panel, as the paper's subcaptions (the legends are above)
        row[0].set_xlabel(f"{row[0].get_xlabel()}\n{name}: {data['gpu'].iloc[0]}")
    title = module.title(pd.concat([data for _, data in panels]))
    fig.suptitle(f"{title}, {precision}" if precision else title)
    style.footer(fig, "\n".join([*(f"{name}: {_caption(data)}" for name, data in panels if not data.empty),
                                 *(f"{name}: no {precision} rows" for name in missing)]))
    return fig


def rooflines(panels: list[tuple[str, pd.DataFrame]]):
    """Figure 2 as in the paper, a plot per precision: every GPU's roofline (CUDA-core roof solid,
    tensor-core roof dashed) and its kernels on one plot, one colour per GPU, from Figure 2's plotted
    data."""
    if not panels:
        raise ValueError("no plotted-data CSVs for Figure 2: render it for a profile first")
    panels = [(name, _with_precision(d)) for name, d in panels]
    precisions = [p for p in PRECISIONS if any((d["precision"] == p).any() for _, d in panels)]
    fig, axes = style.panels(len(precisions), fig2.WIDTHS, fig2.HEIGHT)
    for row, precision in zip(axes, precisions):
        _roofline(row[0], [(name, d[d["precision"] == precision]) for name, d in panels], precision)
    fig.suptitle("Figure 2: rooflines per precision (solid: CUDA cores, dashed: tensor cores)")
    style.footer(fig, "\n".join(f"{name}: {_caption(data)}" for name, data in panels))
    return fig


def _roofline(ax, panels: list[tuple[str, pd.DataFrame]], precision: str) -> None:
    """Every GPU's roofline of one precision on `ax` (a GPU keeps its colour in every precision)."""
    colored = [(name, d, color) for (name, d), color in zip(panels, GPU_COLORS) if not d.empty]
    allk = pd.concat([d[d["item"] == "kernel"] for _, d, _ in colored])
    x = np.logspace(np.log10(allk["intensity_FLOP_per_B"].min() / 3),
                    np.log10(max(pd.concat([d for _, d, _ in colored])["intensity_FLOP_per_B"].max(), 1) * 3), 200)
    markers = dict(zip(allk["label"].str.split().str[0].unique(), fig2.MARKERS))
    for name, data, color in colored:
        bw = data["bandwidth_GBs"].iloc[0]
        gpu = data["gpu"].iloc[0]
        for _, c in data[data["item"] == "ceiling"].iterrows():
            ls = "-" if c["unit"] == "cuda_core" else "--"
            ax.plot(x, np.minimum(bw * x, c["GFLOPs"]), ls, color=color, lw=1.5,
                    label=f"{gpu}: {c['label']} ({c['GFLOPs'] / 1e3:g} TFLOP/s, {bw / 1e3:g} TB/s, "
                          f"B = {c['machine_balance']:.2f})")
        for _, k in data[data["item"] == "kernel"].iterrows():
            ax.plot(k["intensity_FLOP_per_B"], k["GFLOPs"], markers[k["label"].split()[0]], color=color, ms=5, mfc="none")
    for kernel, marker in markers.items():
        ax.plot([], [], marker, color="0.3", mfc="none", ls="none", label=kernel)
    ax.set(xscale="log", yscale="log", xlabel="operational intensity I (FLOP/byte)",
           ylabel=f"{precision}: attainable GFLOP/s")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)


def claims_table(paths: list[str]) -> pd.DataFrame:
    """One row per claim, precision and GPU from each profile's claims.json: the verdict and its
    numbers (claims.json from before the precision axis: fp64)."""
    rows = []
    for path in paths:
        result = json.loads(Path(path).read_text())
        for claim in result["claims"]:
            numbers = {k: claim[k] for k in ("estimate", "ci_low", "ci_high", "n") if k in claim}
            rows.append({"claim": claim["id"], "precision": claim.get("precision", "fp64"), "profile": label(path),
                         "device": result["device_spec"],
                         "matrices": result.get("matrix_source", ""),
                         "commit": ", ".join(result.get("measured", {}).get("commit", [])) or "unrecorded",
                         "verdict": claim["verdict"], **numbers,
                         "title": claim["title"]})
    order = {p: i for i, p in enumerate(PRECISIONS)}
    frame = pd.DataFrame(rows)
    return (frame.assign(_p=frame["precision"].map(order)).sort_values(["claim", "_p", "profile"], kind="stable")
            .drop(columns="_p").reset_index(drop=True))
