"""Rule bandwidth: every stencil at depth 1 against B/(2D) and against the copy of its arrays (SCALE)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

from membound.analysis import bandwidth, wqi
from membound.run import config

bandwidth.write(wqi.read_rows(snakemake.input.stencil), wqi.read_rows(snakemake.input.scale),
                config.load_gpu(Path(snakemake.input.gpu).stem), snakemake.output.csv, snakemake.output.md)
