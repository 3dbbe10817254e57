# Table 3, the paper's claims checked on the measurements, and the artifact-evaluation bundle: the
# appendix and the SHA-256 manifest of every input and output. Raw inputs are taken by path, so the
# reference profile renders them from committed raw CSVs.


rule table3:
    input:
        raw=raw("stencil") + originals_raw("stencil"),
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        code=code("scripts/table3.py"),
    output:
        csv=report(f"{RESULTS}/tables/table3_stencils.csv", caption="../report/table3.rst", **IN_TABLES),
        md=f"{RESULTS}/tables/table3_stencils.md",
    log:
        f"{RESULTS}/logs/table3.log",
    conda:
        "../../envs/membound.yaml"
    params:
        stencils=config["stencil"]["kernels"],
        gpu=GPU["name"],
    script:
        "../../scripts/table3.py"


rule claims:
    input:
        **({"counters": COUNTER_INPUTS["counters"]} if COUNTER_INPUTS else {}),  # C1: twins' DRAM bytes
        bench=rules.wqi.input.bench,
        checked=RAW_CHECKED,  # every raw file checked first (rule raw_check)
        originals=originals_raw("spmv") + originals_raw("stencil"),  # C3 and C4 on the original codes
        gpu=GPU_FILE,
        code=code("scripts/claims.py"),
    output:
        md=report(f"{RESULTS}/claims.md", caption="../report/claims.rst", **IN_CLAIMS),
        json=f"{RESULTS}/claims.json",
    log:
        f"{RESULTS}/logs/claims.log",
    conda:
        "../../envs/membound.yaml"
    params:
        stencils=config["stencil"]["kernels"],
        margin=config["claims"]["margin"],
        dram_fraction=config["claims"]["dram_fraction"],
        precisions=config["precisions"],
    script:
        "../../scripts/claims.py"


INVENTORY = f"{RESULTS}/raw/inventory.json"
# The committed reference runs (GPU -> folder), whose run times and hardware the appendix states.
REFERENCE_RUNS = {
    gpu: f"results/reference/{gpu}"
    for gpu in mbconfig.reference_gpus(GPU_NAME)
    if Path(f"results/reference/{gpu}/raw/benchmarks").is_dir()
}


rule ae:
    input:
        # the reference profile takes the committed inventory, where its raw results have one
        **({"inventory": INVENTORY} if MEASURES or Path(INVENTORY).exists() else {}),
        claims=rules.claims.output.json,
        originals=originals_raw(ext="json"),  # the original codes' run records
        matrices=rules.table2.input[0],  # the matrices' sizes (the check-list's disk)
        citation="CITATION.cff",  # the DOI, once minted
        references=[  # expected run time and hardware per GPU
            f
            for folder in REFERENCE_RUNS.values()
            for f in sorted(glob.glob(f"{folder}/raw/benchmarks/**/*.tsv", recursive=True))
        ],
        code=code("scripts/ae.py"),
        after_every_measurement=[rules.wqi.output.csv, rules.table2.output.csv],  # so every benchmark file exists
    output:
        report(f"{RESULTS}/ae/appendix.md", caption="../report/appendix.rst", **IN_AE),
    log:
        f"{RESULTS}/logs/ae.log",
    conda:
        "../../envs/membound.yaml"
    params:
        benchmarks=f"{RESULTS}/raw/benchmarks",  # Snakemake benchmark: files of the measurement rules
        families=[f for f in FAMILY if raw(f)],  # the kernel families this run has rows of
        profile="reference" if REFERENCE else GPU_NAME,
        gpu=GPU_NAME,
        precisions=config["precisions"],
        repeats=REPEATS,
        matrices=len(MATRICES) if raw("spmv") else 0,
        references=REFERENCE_RUNS,
        platforms=PLATFORMS,  # the device profiles of the checkout, for "How to run"
        repo=workflow.basedir,  # its pyproject.toml names the license, its CITATION.cff the DOI
    script:
        "../../scripts/ae.py"


# Not in the manifest: the job logs and the HTML report, which hold the run's times (rule archive
# carries them beside it); everything in it renders byte for byte from the raw rows (membound.ae verify).
rule manifest:
    input:
        config=["config/config.yaml", GPU_FILE, "config/matrices.yaml", config["lockfile"]],
        # all of `all` under this GPU's results (the reference profile's `all` has other GPUs' too)
        products=lambda wildcards: [
            f for f in rules.all.input if f.startswith(RESULTS) and f not in rules.manifest.output
        ],
    output:
        f"{RESULTS}/ae/manifest.sha256",
    log:
        f"{RESULTS}/logs/manifest.log",
    conda:
        "../../envs/membound.yaml"
    params:
        folders=[f"{RESULTS}/{d}" for d in ("raw", "tables", "figures")],  # every file under them, too
    script:
        "../../scripts/manifest.py"


# The bundle to upload (not part of `all`: `snakemake --profile <profile> archive`): the code at its
# commit, every file of each GPU's manifest (raw results, tables, figures, claims, appendix) with the
# manifest, the job logs, the HTML report and ARCHIVE.json (this command and its --config, which
# `python -m membound.ae verify` renders the unpacked archive with); once, in the main Snakefile (the
# reference profile: every GPU it renders; ARCHIVED and REPORT: common.smk).


rule archive:
    input:
        manifests=[f"results/reference/{gpu}/ae/manifest.sha256" for gpu in REFERENCE_GPUS] or rules.manifest.output,
        report=[REPORT] if Path(REPORT).exists() else [],  # missing: scripts/archive.py says how to make it
        code=code("scripts/archive.py"),
    output:
        f"results/archive/membound-{ARCHIVED}.tar.gz",
    log:
        f"results/archive/membound-{ARCHIVED}.log",
    conda:
        "../../envs/membound.yaml"
    params:
        repo=workflow.basedir,
        profile=ARCHIVED,
        report=REPORT,
        invocation=invocation(),  # the command and its --config, into ARCHIVE.json
    script:
        "../../scripts/archive.py"
