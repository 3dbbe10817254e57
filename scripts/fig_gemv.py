"""Rule fig_gemv: GEMV bandwidth on CUDA and tensor cores, geometric means either side of the L2."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.plots import common, gemv

common.render(gemv, snakemake.input.raw, snakemake.input.gpu, snakemake.output,
              snakemake.params.precisions)
