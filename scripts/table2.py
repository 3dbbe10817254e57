"""Rule table2: the paper's Table 2 from the converted (or surrogate) CSR files."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.matrices import table2

frame = table2.table(snakemake.input.csr, snakemake.params.l2_mb)
table2.write(frame, snakemake.output.csv, snakemake.output.md, snakemake.params.gpu, snakemake.params.l2_mb)
