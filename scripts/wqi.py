"""Rule wqi: achieved against analytical W, Q, I per kernel, implementation and problem."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

from membound.analysis import wqi
from membound.counters import ncu
from membound.run import config

gpu = config.load_gpu(Path(snakemake.input.gpu).stem)
bench = wqi.read_rows(snakemake.input.bench)
counters = ncu.read_rows(snakemake.input.get("counters", []))
counted = wqi.read_rows(snakemake.input.counted) if snakemake.input.get("counted") else None
frame = wqi.table(bench, counters, gpu, snakemake.params.stencils, snakemake.params.why_not, counted)
wqi.write(frame, snakemake.output.csv, snakemake.output.md,
          f"Achieved against analytical W, Q, I on {gpu['name']} (paper 002 Table 2)")
