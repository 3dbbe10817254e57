"""Rule matrix_stats: rows, nnz and nnz-per-row statistics of the CSR files this run used."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.matrices import table2
from membound.run.outputs import write_csv

write_csv(table2.stats(snakemake.input.csr), snakemake.output[0])
