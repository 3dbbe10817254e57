# membound: reproduction workflow for "Can Tensor Cores Benefit Memory-Bound Kernels? (NO!)".
# This file is a table of contents; every stage lives in workflow/rules/. Data flow:
# config -> matrices -> benchmark runs (raw/) -> counter runs (raw/counters/) -> analysis -> tables, figures.


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/model.smk"


if MEASURES:  # the reference profile (and render_only) renders raw results already there, measures nothing

    include: "workflow/rules/matrices.smk"
    include: "workflow/rules/bench.smk"
    include: "workflow/rules/counters.smk"
    include: "workflow/rules/inventory.smk"


include: "workflow/rules/originals.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/ae.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/fusion.smk"
include: "workflow/rules/report.smk"


# The reference profile's other GPUs: each a module of this Snakefile with its own `gpu`, its rules
# prefixed '<gpu>_' (Snakemake's dynamic modules, a module named by a variable); the rules that gather
# every GPU (compare, intro, archive) run once, in the main Snakefile.
for ref_gpu, ref_module, ref_prefix in ((gpu, f"ref_{gpu}", f"{gpu}_") for gpu in REFERENCE_GPUS[1:]):

    module:
        name: ref_module
        snakefile:
            "Snakefile"
        config:
            {**config, "gpu": ref_gpu, "reference_gpus": [ref_gpu]}

    use rule * from ref_module exclude compare, intro, archive as ref_prefix*


# The files under results/<gpu>/ that the rules below read (raw files, raw_check's list of them, the DGEMM
# counter check): a target's input, as Snakemake remakes a missing file only where a target asks for it,
# not where it is the input of outputs that are up to date; so a raw file deleted (raw_check's fix) or
# lost with a killed or failed job is made again by `all`.
INTERMEDIATES = sorted(
    {f for r in (rules.raw_check, rules.table2, rules.wqi, rules.ae) for f in r.input if f.startswith(f"{RESULTS}/")}
)


rule all:
    default_target: True
    input:
        INTERMEDIATES,
        rules.table1.output,
        rules.bounds.output,
        rules.table2.output,
        rules.wqi.output,
        rules.roofline_achieved.output,
        rules.table3.output,
        rules.bandwidth.output,
        rules.claims.output,
        rules.ae.output,
        rules.fig2.output,
        rules.fig3_4.output,
        rules.fig6.output,
        rules.fig7.output,
        rules.fig8.output,
        rules.fusion.output,
        rules.classification.output,
        rules.intro.output if is_main_snakefile() else [],  # the report's opening text, once
        [getattr(rules, f"{gpu}_all").input for gpu in REFERENCE_GPUS[1:]],
        rules.compare.output if len(REFERENCE_GPUS) > 1 else [],
        rules.fig_gemv.output if raw("gemv") else [],  # GEMV rows exist (not in the committed reference run)
        rules.manifest.output,  # last: it checksums everything above (rule manifest, workflow/rules/ae.smk)
