# membound: reproduction workflow for "Can Tensor Cores Benefit Memory-Bound Kernels? (NO!)".
# This file is a table of contents; every stage lives in workflow/rules/. Data flow:
# config -> matrices -> benchmark runs (raw/) -> counter runs (raw/counters/) -> analysis -> tables, figures.


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/model.smk"


if not REFERENCE:  # the reference profile renders committed raw results and measures nothing

    include: "workflow/rules/matrices.smk"
    include: "workflow/rules/bench_scale.smk"
    include: "workflow/rules/bench_spmv.smk"
    include: "workflow/rules/bench_stencil.smk"
    include: "workflow/rules/counters.smk"
    include: "workflow/rules/inventory.smk"


include: "workflow/rules/tables.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/ae.smk"
include: "workflow/rules/figures.smk"


rule all:
    default_target: True
    input:
        rules.table1.output,
        rules.bounds.output,
        rules.table2.output,
        rules.wqi.output,
        rules.roofline_achieved.output,
        rules.table3.output,
        rules.claims.output,
        rules.ae.output,
        rules.fig2.output,
        rules.fig3_4.output,
        rules.fig6.output,
        rules.fig7.output,
        rules.fig8.output,
        rules.manifest.output,  # last: it checksums everything above (rule manifest, workflow/rules/ae.smk)
