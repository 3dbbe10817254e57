# Tables rendered from the raw results of a run (paper 000 Table 2).


rule table2:
    input:
        f"{RESULTS}/raw/matrices.csv",
        code=code("scripts/table2.py"),
    output:
        csv=report(f"{RESULTS}/tables/table2_matrices.csv", caption="../report/table2.rst", **IN_TABLES),
        md=f"{RESULTS}/tables/table2_matrices.md",
    log:
        f"{RESULTS}/logs/table2.log",
    conda:
        "../../envs/membound.yaml"
    params:
        gpu=GPU["name"],
        l2_mb=GPU["l2_MB"],
    script:
        "../../scripts/table2.py"


rule bandwidth:
    input:
        stencil=raw("stencil"),
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        scale=raw("scale"),
        gpu=GPU_FILE,
        code=code("scripts/bandwidth.py"),
    output:
        csv=report(f"{RESULTS}/tables/bandwidth_stencils.csv", caption="../report/bandwidth.rst", **IN_TABLES),
        md=f"{RESULTS}/tables/bandwidth_stencils.md",
    log:
        f"{RESULTS}/logs/bandwidth.log",
    conda:
        "../../envs/membound.yaml"
    script:
        "../../scripts/bandwidth.py"
