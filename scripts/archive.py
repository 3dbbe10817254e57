"""Rule archive: one .tar.gz to upload: the code at its commit, every file of the run's manifests,
the job logs, the HTML report, the --configfile files and ARCHIVE.json (the command, its --config and
--configfile, the membound version)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
import json
from pathlib import Path

import membound
from membound.run import artifact
from membound.run.outputs import atomic

p = snakemake.params
if not Path(p.report).is_file():
    sys.exit(f"error: {p.report}: no report to archive; make it with `snakemake --profile {p.profile} --report "
             f"{p.report}` (after `all`), then run archive again")
manifests = list(snakemake.input.manifests)
files = [line.split("  ", 1)[1] for m in manifests for line in Path(m).read_text().splitlines()]
logs = [f.as_posix() for m in manifests for f in sorted(Path(m).parents[1].joinpath("logs").rglob("*")) if f.is_file()]
try:
    inside, outside, configfiles = artifact.configfiles(p.repo, p.invocation["configfiles"])
    record = {"membound": membound.__version__, "profile": p.profile, **p.invocation, "configfiles": configfiles,
              "manifests": manifests, "report": p.report}
    with atomic(snakemake.output[0], ".tar.gz") as tmp:
        names = artifact.write(tmp, p.repo, [*files, *manifests, *logs, p.report, *inside],
                               {**outside, artifact.RECORD: json.dumps(record, indent=2, default=str) + "\n"})
except artifact.ArtifactError as err:
    sys.exit(f"error: {err}")
print(f"{snakemake.output[0]}: {len(names)} files", file=sys.stderr)
