"""Rule table3: the stencils and the domains (temporal depth) each role ran (paper 000 Table 3)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.analysis import table3, wqi

table3.write(wqi.read_rows(snakemake.input.raw), snakemake.params.stencils, snakemake.output.csv,
             snakemake.output.md, snakemake.params.gpu)
