"""Rules fig3_4, fig6, fig7, fig8 and fig_gemv (workflow/rules/figures.smk): a measured figure drawn by
the plot module the rule names (params.module, membound.plots.<module>) from the rule's raw CSVs."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from importlib import import_module

from membound.plots import common

common.render(import_module(f"membound.plots.{snakemake.params.module}"), snakemake.input.raw, snakemake.input.gpu,
              snakemake.output, snakemake.params.precisions, **snakemake.params.options)
