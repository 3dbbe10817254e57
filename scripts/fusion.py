"""Rule fusion: paper 002's fusion sweep (Figure 11) of the stencils measured on this GPU."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

import pandas as pd

from membound.analysis import fusion
from membound.run import config
from membound.run import raw as raw_files
from membound.run.outputs import save_figure, write_csv
from membound.plots import common
from membound.plots import fusion as plot

gpu = config.load_gpu(Path(snakemake.input.gpu).stem)
raw = raw_files.read_all(snakemake.input.raw)
frame = fusion.table(raw, pd.read_csv(snakemake.input.wqi), snakemake.params.stencils, gpu)
write_csv(frame, snakemake.output.csv)
save_figure(plot.figure(frame, gpu, common.caption(gpu["name"], raw, snakemake.input.gpu)),
            snakemake.output.pdf, snakemake.output.png)
