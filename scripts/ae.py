"""Rule ae: the artifact appendix (inventory, the ACM check-list, licenses, how to run, expected run
time, expected results and what counts as reproduced)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
import json
from pathlib import Path

import pandas as pd

from membound import ae, families
from membound.ae import tables
from membound.run.outputs import write_text

p = snakemake.params
path = snakemake.input.get("inventory")
inventory = json.loads(Path(path).read_text()) if path else None
claims = json.loads(Path(snakemake.input.claims).read_text())
originals = [json.loads(Path(f).read_text()) for f in snakemake.input.get("originals", [])]
results = Path(snakemake.input.claims).parent.as_posix()
matrices = pd.read_csv(snakemake.input.matrices) if snakemake.input.get("matrices") else pd.DataFrame()
setup = {"families": [families.FAMILIES[f].title for f in p.families], "precisions": p.precisions,
         "repeats": p.repeats, "matrices": p.matrices, "license": tables.license_of(p.repo), "doi": tables.doi_of(p.repo),
         # raw results as recorded and the matrices by their size in raw/matrices.csv: not the disk's state
         "disk_bytes": tables.disk_bytes(f"{results}/raw") + int(matrices.get("size_MB", pd.Series(dtype=float)).sum() * 2**20),
         "gpu": p.gpu}
times = ae.run_times(p.benchmarks, p.families)
write_text(ae.appendix(inventory, claims, times, p.profile, p.gpu, results, originals=originals, setup=setup,
                       references=p.references, platforms=p.platforms), snakemake.output[0])
