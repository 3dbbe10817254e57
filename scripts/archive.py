"""Rule archive: one .tar.gz to upload, the code at its commit and every file of the run's manifests."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

from membound.run import artifact
from membound.run.outputs import atomic

files = [line.split("  ", 1)[1] for m in snakemake.input.manifests for line in Path(m).read_text().splitlines()]
files += [*snakemake.input.manifests]
try:
    with atomic(snakemake.output[0], ".tar.gz") as tmp:
        names = artifact.write(tmp, snakemake.params.repo, files)
except artifact.ArtifactError as err:
    sys.exit(f"error: {err}")
print(f"{snakemake.output[0]}: {len(names)} files", file=sys.stderr)
