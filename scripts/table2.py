"""Rule table2: the paper's Table 2 from the matrix statistics of the run, against this GPU's L2."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
import pandas as pd

from membound.matrices import table2

frame = table2.table(pd.read_csv(snakemake.input[0], keep_default_na=False, na_values=[""]), snakemake.params.l2_mb)
table2.write(frame, snakemake.output.csv, snakemake.output.md, snakemake.params.gpu, snakemake.params.l2_mb)
