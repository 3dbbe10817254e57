# Achieved against analytical W, Q, I (paper 002 Table 2) and the achieved roofline. Raw inputs are
# taken by path, so the reference profile renders them from committed raw CSVs.

from membound.counters.workflow import why_not

WHY_NOT = why_not(config["counters"], GPU["profiler"])  # "": ncu runs; else the tables say why not
COUNTER_INPUTS = (
    {}
    if WHY_NOT
    else {
        "counters": raw(prefix="counters/", repeats=1),
        # the counter runs' own benchmark rows: what the counters measured (wqi's model side)
        "counted": [p.removesuffix(".csv") + ".rows.csv" for p in raw(prefix="counters/", repeats=1)],
        "dgemm_check": f"{RESULTS}/tables/dgemm_counter_check.csv",
    }
)

# the stencils' counters alone: each depth-1 stencil's pipe roofs (rule bandwidth)
STENCIL_COUNTERS = {
    k: [p for p in COUNTER_INPUTS[k] if os.path.basename(p).startswith("stencil.")]
    for k in ("counters", "counted")
    if COUNTER_INPUTS
}


rule raw_check:
    input:
        bench=raw(),
        originals=originals_raw(),
        counters=[] if WHY_NOT else [*COUNTER_INPUTS["counters"], f"{RESULTS}/raw/counters/dgemm.csv"],
        counted=[] if WHY_NOT else [*COUNTER_INPUTS["counted"], f"{RESULTS}/raw/counters/dgemm.rows.csv"],
        code=code("scripts/raw_check.py"),
    output:
        report(RAW_CHECKED, caption="../report/raw_check.rst", **IN_TABLES),
    log:
        f"{RESULTS}/logs/raw_check.log",
    conda:
        "../../envs/membound.yaml"
    params:
        # the rule that writes each kind of file, and the fix of a damaged one
        rules={"bench": "bench", "originals": "original", "counters": "counters", "counted": "counters"},
        fix=lambda wildcards: (  # a template of raw_check.py: {path} and {rule} are its
            "restore the committed file and its record: git checkout -- {path} {path}.meta.json"
            if REFERENCE
            else "delete it and run `all` again (rule {rule} writes it anew)"
        ),
    script:
        "../../scripts/raw_check.py"


rule dgemm_check:
    input:
        code=code("scripts/dgemm_check.py"),
        counters=f"{RESULTS}/raw/counters/dgemm.csv",
        rows=f"{RESULTS}/raw/counters/dgemm.rows.csv",
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
    output:
        report(f"{RESULTS}/tables/dgemm_counter_check.csv", caption="../report/dgemm_check.rst", **IN_TABLES),
    log:
        f"{RESULTS}/logs/dgemm_check.log",
    conda:
        "../../envs/membound.yaml"
    script:
        "../../scripts/dgemm_check.py"


rule wqi:
    input:
        **COUNTER_INPUTS,
        bench=raw(),
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        gpu=GPU_FILE,
        code=code("scripts/wqi.py"),
    output:
        csv=report(f"{RESULTS}/tables/wqi.csv", caption="../report/wqi.rst", **IN_TABLES),
        md=f"{RESULTS}/tables/wqi.md",
    log:
        f"{RESULTS}/logs/wqi.log",
    conda:
        "../../envs/membound.yaml"
    params:
        stencils=config["stencil"]["kernels"],
        why_not=WHY_NOT,
    script:
        "../../scripts/wqi.py"


rule bandwidth:
    input:
        **STENCIL_COUNTERS,
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
    params:
        why_not=WHY_NOT,
    script:
        "../../scripts/bandwidth.py"


rule roofline_achieved:
    input:
        wqi=rules.wqi.output.csv,
        gpu=GPU_FILE,
        code=code("scripts/roofline_achieved.py"),
    output:
        pdf=f"{RESULTS}/figures/roofline_achieved.pdf",
        png=report(f"{RESULTS}/figures/roofline_achieved.png", caption="../report/roofline_achieved.rst", **IN_FIGURES),
    log:
        f"{RESULTS}/logs/roofline_achieved.log",
    conda:
        "../../envs/membound.yaml"
    params:
        precisions=config["precisions"],
    script:
        "../../scripts/roofline_achieved.py"
