"""Rule compare: Figures 6 and 7 stacked, one row per GPU profile, from each profile's plotted CSVs."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
import pandas as pd

from membound.outputs import save_figure
from membound.plots import compare, fig6, fig7

for name, module in (("fig6_scale", fig6), ("fig7_spmv", fig7)):
    panels = [(compare.label(p), pd.read_csv(p)) for p in getattr(snakemake.input, name)]
    fig = compare.figure(module, panels)
    save_figure(fig, getattr(snakemake.output, f"{name}_pdf"), getattr(snakemake.output, f"{name}_png"))
