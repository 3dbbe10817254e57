"""Rule download_matrix: one SuiteSparse tarball (staged copy or download), checked against the lock file where recorded."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # progress and errors go to the rule's log
from membound.matrices import MatrixError, download

try:
    origin, known = download.fetch(snakemake.params.entry, snakemake.output[0], lockfile=snakemake.params.lockfile,
                            **snakemake.params.download)
except MatrixError as err:
    sys.exit(f"error: {err}")
state = "matches" if known else "is new: recorded once the tarball converts"
print(f"{snakemake.output[0]}: from {origin}, SHA-256 {state} ({snakemake.params.lockfile})", file=sys.stderr)
