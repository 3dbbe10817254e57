"""Rule manifest: SHA-256 of every input and output of the run, checkable with `sha256sum -c`."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound import ae
from membound.run.outputs import write_text

write_text(ae.manifest(snakemake.input, snakemake.params.folders), snakemake.output[0])
