# membound: reproduction workflow for "Can Tensor Cores Benefit Memory-Bound Kernels? (NO!)".
# This file is a table of contents; every stage lives in workflow/rules/.


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/matrices.smk"
include: "workflow/rules/model.smk"
include: "workflow/rules/bench_scale.smk"
include: "workflow/rules/bench_stencil.smk"
include: "workflow/rules/counters.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/bench_spmv.smk"


rule all:
    default_target: True
    input:
        rules.table1.output,
        rules.bounds.output,
        rules.table2.output,
        rules.wqi.output,
        rules.roofline_achieved.output,
        rules.fig2.output,
        rules.fig3_4.output,
        rules.fig6.output,
        rules.fig7.output,
        rules.fig8.output,
