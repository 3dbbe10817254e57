"""Rule bounds: tensor-core speedup bounds (paper 000 eq. 22-24) of every kernel on this device."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
import yaml

from membound.model import platforms
from membound.run.outputs import write_table

gpu = yaml.safe_load(open(snakemake.input.gpu))
write_table(platforms.bounds(snakemake.params.config, gpu), snakemake.output.csv, snakemake.output.md,
            f"Tensor-core speedup bounds on {gpu['name']} (paper 000 eq. 22-24; analytical, no measurement)")
