"""Rule matrix_lock: the conversions' one-row records merged into the lock file, by one writer."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from membound.matrices import MatrixError, lock

try:
    rows = lock.collect(snakemake.input, snakemake.params.lockfile)
except MatrixError as err:
    sys.exit(f"error: {err}")
lock.write(rows, snakemake.output[0])
print(f"{snakemake.params.lockfile}: {len(rows)} matrices recorded", file=sys.stderr)
