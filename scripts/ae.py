"""Rule ae: the artifact appendix (inventory, how to run, expected run time and results)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
import json
from pathlib import Path

from membound import ae
from membound.run.outputs import write_text

path = snakemake.input.get("inventory")
inventory = json.loads(Path(path).read_text()) if path else None
claims = json.loads(Path(snakemake.input.claims).read_text())
originals = [json.loads(Path(p).read_text()) for p in snakemake.input.get("originals", [])]
write_text(ae.appendix(inventory, claims, ae.run_times(snakemake.params.benchmarks, snakemake.params.families), snakemake.params.profile,
                       snakemake.params.gpu, Path(snakemake.input.claims).parent.as_posix(), originals=originals),
           snakemake.output[0])
