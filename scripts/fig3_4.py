"""Rule fig3_4: SCALE time breakdown, fully overlapped and un-overlapped (paper Figures 3 and 4)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.plots import common, fig3_4

common.render(fig3_4, snakemake.input.raw, snakemake.input.gpu, snakemake.output, snakemake.params.precisions)
