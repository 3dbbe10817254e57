"""Rule fig7: SpMV GFLOP/s per matrix and geometric-mean speedups either side of the L2 (paper Figure 7)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.plots import common, fig7

common.render(fig7, snakemake.input.raw, snakemake.input.gpu, snakemake.output,
              snakemake.params.precisions)
