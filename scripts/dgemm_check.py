"""Rule dgemm_check: what one unit of ncu's FP64 tensor counters is worth, from DGEMMs of known size."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.counters import dgemm
from membound.counters import rows as counter_rows
from membound.run import raw
from membound.run.outputs import write_csv

check = dgemm.check_counter(raw.read(snakemake.input.rows), raw.read(snakemake.input.counters, counter_rows.SCHEMA))
print(check.to_string(index=False), file=sys.stderr)
if not check["ok"].all():
    sys.exit("error: the FP64 tensor-path op counter is not 1 FLOP per unit on this GPU (see the log); "
             "tensor-core FLOPs in wqi.csv would be wrong")
write_csv(check, snakemake.output[0])
