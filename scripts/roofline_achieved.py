"""Rule roofline_achieved: measured kernels on the GPU's roofline (DRAM and L2 intensities)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

import pandas as pd

from membound.plots import roofline_achieved
from membound.run import config
from membound.run.outputs import save_figure

gpu = config.load_gpu(Path(snakemake.input.gpu).stem)
fig = roofline_achieved.figure(pd.read_csv(snakemake.input.wqi), gpu)
save_figure(fig, snakemake.output.pdf, snakemake.output.png)
