"""Rule table1: the paper's Table 1 for every device spec in config/gpus/."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.model import platforms
from membound.run import config
from membound.run.outputs import write_table

gpus = {name: config.load_gpu(name) for name in snakemake.params.profiles}
write_table(platforms.table1(gpus, snakemake.params.current), snakemake.output.csv, snakemake.output.md,
            "Table 1: specifications of the platforms (from config/gpus/*.yaml, with their sources)")
