"""Rule fig2: the device's FP64 roofline with CUDA-core and tensor-core ceilings and every kernel's
analytical intensity (paper Figure 2); analytical, no measurement."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

from membound.plots import common, fig2
from membound.run import config
from membound.run.outputs import save_figure, write_csv

gpu = config.load_gpu(Path(snakemake.input.gpu).stem)
data = fig2.data(snakemake.params.config, gpu)
write_csv(data, snakemake.output.csv)
fig = fig2.figure(data, gpu, common.caption(gpu["name"], spec=snakemake.input.gpu))
save_figure(fig, snakemake.output.pdf, snakemake.output.png)
