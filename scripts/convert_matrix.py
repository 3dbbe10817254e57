"""Rule convert_matrix: a verified tarball's <name>/<name>.mtx to the workflow's binary CSR."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.matrices import MatrixError, convert

try:
    convert.convert(snakemake.input[0], snakemake.params.entry, snakemake.output.csr, snakemake.params.lockfile,
                    snakemake.output.record)
except MatrixError as err:
    sys.exit(f"error: {err}")
