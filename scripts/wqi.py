"""Rule wqi: achieved against analytical W, Q, I per kernel, implementation and problem."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

import pandas as pd

from membound import config, wqi

gpu = config.load_gpu(Path(snakemake.input.gpu).stem)
bench = wqi.read_rows(snakemake.input.bench)
paths = snakemake.input.get("counters", [])
counters = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True) if paths else None
frame = wqi.table(bench, counters, gpu, snakemake.params.stencils, snakemake.params.why_not)
wqi.write(frame, snakemake.output.csv, snakemake.output.md,
          f"Achieved against analytical W, Q, I on {gpu['name']} (paper 002 Table 2)")
