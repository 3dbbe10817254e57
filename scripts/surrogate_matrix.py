"""Rule surrogate_matrix: a labelled, deterministic stand-in with a real matrix's shape and nnz."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.matrices import MatrixError, csr, surrogate

try:
    csr.save(snakemake.output[0], *surrogate.generate(snakemake.params.entry, snakemake.params.scale))
except MatrixError as err:
    sys.exit(f"error: {err}")
