# Model outputs: tables that come from the device specs and the papers' equations alone.


rule table1:
    input:
        specs=expand("config/gpus/{gpu}.yaml", gpu=PLATFORMS),
        code=code("scripts/table1.py"),
    output:
        csv=report(f"{RESULTS}/tables/table1_platforms.csv", caption="../report/table1.rst", **IN_TABLES),
        md=f"{RESULTS}/tables/table1_platforms.md",
    log:
        f"{RESULTS}/logs/table1.log",
    conda:
        "../../envs/membound.yaml"
    params:
        profiles=PLATFORMS,
        current=GPU_NAME,
    script:
        "../../scripts/table1.py"


rule bounds:
    input:
        gpu=GPU_FILE,
        code=code("scripts/bounds.py"),
    output:
        csv=report(f"{RESULTS}/tables/bounds.csv", caption="../report/bounds.rst", **IN_TABLES),
        md=f"{RESULTS}/tables/bounds.md",
    log:
        f"{RESULTS}/logs/bounds.log",
    conda:
        "../../envs/membound.yaml"
    params:
        config={"stencil": config["stencil"], "precisions": config["precisions"]},
    script:
        "../../scripts/bounds.py"
