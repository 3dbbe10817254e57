"""Rule compare: Figures 2, 6, 7 and 8 and the claims of several GPUs in the paper's stacked layout, per precision
(Figures 6, 7 and 8: a figure per precision, a row per GPU)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
import pandas as pd

from membound.plots import compare, fig6, fig7, fig8
from membound.run.outputs import save_figure, write_table


def panels(key):
    return [(compare.label(p), pd.read_csv(p)) for p in snakemake.input[key]]


out = snakemake.output
save_figure(compare.rooflines(panels("fig2_roofline")), out.fig2_roofline_pdf, out.fig2_roofline_png)
for key, module in (("fig6_scale", fig6), ("fig7_spmv", fig7), ("fig8_stencil", fig8)):
    for precision in snakemake.params.precisions:  # a figure per precision, a row per GPU
        save_figure(compare.figure(module, panels(key), precision=precision), out[f"{key}_{precision}_pdf"],
                    out[f"{key}_{precision}_png"])
write_table(compare.claims_table(snakemake.input.claims), *out.claims, "Claims of paper 000 on every GPU")
