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
