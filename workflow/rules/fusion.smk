# Paper 002 on the measured stencils: the fusion sweep on the roofline (its Figure 11) and the
# classification into its four scenarios (Figure 10) with a verdict per measured configuration.
# Raw inputs are taken by path, so the reference profile renders them from committed raw CSVs.


rule fusion:
    input:
        raw=raw("stencil") + raw("scale"),  # SCALE: the copy of the stencils' arrays, a measured roof
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        wqi=rules.wqi.output.csv,
        gpu=GPU_FILE,
        code=code("scripts/fusion.py"),
    output:
        pdf=f"{RESULTS}/figures/fusion.pdf",
        png=report(f"{RESULTS}/figures/fusion.png", caption="../report/fusion.rst", **IN_FIGURES),
        csv=f"{RESULTS}/figures/fusion.csv",
    log:
        f"{RESULTS}/logs/fusion.log",
    conda:
        "../../envs/membound.yaml"
    params:
        stencils=config["stencil"]["kernels"],
    script:
        "../../scripts/fusion.py"


rule classification:
    input:
        raw=raw("stencil"),
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        specs=expand("config/gpus/{gpu}.yaml", gpu=PLATFORMS),
        gpu=GPU_FILE,
        code=code("scripts/classification.py"),
    output:
        pdf=f"{RESULTS}/figures/classification.pdf",
        png=report(f"{RESULTS}/figures/classification.png", caption="../report/classification.rst", **IN_FIGURES),
        specs_pdf=f"{RESULTS}/figures/classification_specs.pdf",
        specs_png=report(
            f"{RESULTS}/figures/classification_specs.png", caption="../report/classification_specs.rst", **IN_FIGURES
        ),
        grid=f"{RESULTS}/figures/classification.csv",
        csv=report(f"{RESULTS}/tables/classification.csv", caption="../report/classification_table.rst", **IN_TABLES),
        md=f"{RESULTS}/tables/classification.md",
    log:
        f"{RESULTS}/logs/classification.log",
    conda:
        "../../envs/membound.yaml"
    params:
        stencils=config["stencil"]["kernels"],
        margin=config["claims"]["margin"],
    script:
        "../../scripts/classification.py"
