"""Rule classification: paper 002's scenarios (Figure 10) on every GPU spec, and whether the prediction
held for each configuration measured on this GPU."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

from membound.analysis import classification
from membound.run import config
from membound.run import raw as raw_files
from membound.run.outputs import save_figure, write_csv
from membound.plots import classification as plot
from membound.plots import common

gpu = config.load_gpu(Path(snakemake.input.gpu).stem)
specs = {Path(p).stem: config.load_gpu(Path(p).stem) for p in snakemake.input.specs}
raw = raw_files.read_all(snakemake.input.raw)
grid = classification.grid(specs)
table = classification.verdicts(raw, gpu, snakemake.params.stencils, snakemake.params.margin)
write_csv(grid, snakemake.output.grid)
classification.write_table(table, snakemake.output.csv, snakemake.output.md, gpu["name"], snakemake.params.margin)
caption = f"{common.caption(gpu['name'], raw, snakemake.input.gpu)}; grid: analytical, from config/gpus/*.yaml"
save_figure(plot.figure(grid, plot.overlay(table), gpu["name"], caption), snakemake.output.pdf, snakemake.output.png)
save_figure(plot.specs_figure(grid, gpu["name"], "analytical, from config/gpus/*.yaml: nothing here is measured"),
            snakemake.output.specs_pdf, snakemake.output.specs_png)
