"""Rule fig6: SCALE bandwidth on CUDA and tensor cores, geometric means either side of L2/2 (paper Figure 6)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.plots import common, fig6

common.render(fig6, snakemake.input.raw, snakemake.input.gpu, snakemake.output,
              snakemake.params.precisions)
