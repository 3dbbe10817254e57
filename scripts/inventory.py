"""Rule inventory: the hardware and software of the machine that runs the benchmarks."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
import json

from membound.run import inventory
from membound.run.outputs import write_text

write_text(json.dumps(inventory.collect(snakemake.params.repo), indent=2) + "\n", snakemake.output[0])
