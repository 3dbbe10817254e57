"""Rule claims: paper 000's claims checked on the measured raw rows (PASS/FAIL/N/A/NO DATA)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

from membound import claims, config, wqi

gpu = config.load_gpu(Path(snakemake.input.gpu).stem)
result = claims.check(wqi.read_rows(snakemake.input.bench), gpu, snakemake.params.stencils,
                      snakemake.params.tolerance)
claims.write(result, snakemake.output.json, snakemake.output.md)
