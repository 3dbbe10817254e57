"""The paper's stacked layout across devices: one row of a figure's panels per GPU profile, each
drawn from that profile's plotted-data CSV (results/<gpu>/figures/<figure>.csv, also
results/reference/<gpu>/figures/)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from membound.plots import common, style


def csvs(results: str, name: str) -> list[str]:
    """The plotted-data CSVs `name` of every profile under `results` that has one, sorted."""
    root = Path(results)
    found = [*root.glob(f"*/figures/{name}"), *root.glob(f"reference/*/figures/{name}")]
    return sorted(str(p) for p in found)


def label(path: str) -> str:
    """The profile of a plotted-data CSV <results>/<profile>/figures/<name>: 'h100', 'reference/h100'."""
    return "/".join(Path(path).parts[1:-2])


def figure(module, panels: list[tuple[str, pd.DataFrame]]):
    """`module`'s figure (fig6 or fig7: its TITLE, WIDTHS, HEIGHT and draw) with one row per (label, data)."""
    if not panels:
        raise ValueError(f"no plotted-data CSVs for '{module.TITLE}': render it for a profile first")
    fig, axes = style.panels(len(panels), module.WIDTHS, module.HEIGHT)
    for row, (name, data) in zip(axes, panels):
        module.draw(row, data)
        row[0].set_title(f"{name}: {data['gpu'].iloc[0]}", loc="left", pad=22, fontsize=9)
    fig.suptitle(module.TITLE)
    style.footer(fig, "\n".join(f"{name}: {common.caption(data['gpu'].iloc[0], data)}" for name, data in panels))
    return fig
