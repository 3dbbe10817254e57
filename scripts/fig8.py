"""Rule fig8: stencil GStencil/s per implementation role (paper Figure 8), a row per precision."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.plots import common, fig8

# the bars at the stencils' role depths (C4's equal depth): config stencil.kernels
common.render(fig8, snakemake.input.raw, snakemake.input.gpu, snakemake.output,
              snakemake.params.precisions, stencils=snakemake.config["stencil"]["kernels"])
