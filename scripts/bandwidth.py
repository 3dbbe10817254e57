"""Rule bandwidth: every stencil at depth 1 against B/(2D), the copy of its arrays (SCALE) and its own roof."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

from membound.analysis import bandwidth, wqi
from membound.counters import ncu
from membound.run import config

counted = snakemake.input.get("counted")
bandwidth.write(wqi.read_rows(snakemake.input.stencil), wqi.read_rows(snakemake.input.scale),
                config.load_gpu(Path(snakemake.input.gpu).stem), snakemake.output.csv, snakemake.output.md,
                ncu.read_rows(snakemake.input.get("counters", [])), wqi.read_rows(counted) if counted else None,
                snakemake.params.why_not)
