"""Rule claims: paper 000's claims checked on the measured raw rows in every precision, each with a 95% interval and a verdict."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

from membound.analysis import claims, wqi
from membound.counters import ncu
from membound.run import config

gpu = config.load_gpu(Path(snakemake.input.gpu).stem)
counters = ncu.read_rows(snakemake.input.get("counters", []))
result = claims.check(wqi.read_rows([*snakemake.input.bench, *snakemake.input.originals]), gpu, snakemake.params.stencils,
                      snakemake.params.margin, snakemake.params.dram_fraction, counters, snakemake.params.precisions)
claims.write(result, snakemake.output.json, snakemake.output.md)
