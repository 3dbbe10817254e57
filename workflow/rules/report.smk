# The report's opening text (workflow/report/workflow.rst includes it), written from the run: rule
# about per GPU (the reference profile's other GPUs have theirs through their modules), rule intro
# once, in the main Snakefile.


rule about:
    input:
        raw=raw() + originals_raw(),
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        counters=[] if WHY_NOT else raw(prefix="counters/", repeats=1),
        matrices=rules.table2.input[0],
        gpu=GPU_FILE,
        code=code("scripts/about.py"),
    output:
        f"{RESULTS}/report/about.rst",
    log:
        f"{RESULTS}/logs/about.log",
    conda:
        "../../envs/membound.yaml"
    params:
        label=REPORT_GPU,
        why_not=WHY_NOT,
    script:
        "../../scripts/about.py"


rule intro:
    input:
        about=[f"results/reference/{gpu}/report/about.rst" for gpu in REFERENCE_GPUS] or rules.about.output,
        code=code("scripts/intro.py"),
    output:
        f"{RESULTS}/report/intro.rst",  # the path workflow/report/workflow.rst includes
    log:
        f"{RESULTS}/logs/intro.log",
    conda:
        "../../envs/membound.yaml"
    params:
        profile="reference" if REFERENCE else GPU_NAME,
        reference=REFERENCE,
        compared=len(REFERENCE_GPUS) > 1,
        cpu=GPU["vendor"] == "cpu",
    script:
        "../../scripts/intro.py"
