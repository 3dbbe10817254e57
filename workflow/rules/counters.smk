# Hardware counters: every benchmark rerun under ncu on its NVTX-tagged launches only (one measured
# call per case, --counters; stencils: depth steps), with a minimal metric list; docs/counters.md.
# Pulled in by rule wqi. One rule over the registry, as rule bench (bench.smk: every case of a family
# in one process), and the DGEMM that checks the FP64 tensor-core counter; `counters_<family>` names
# a family's counter job as a target.

from membound.counters.workflow import mma_shapes

NCU = f"--mma-shapes {mma_shapes(GPU)} {config['ncu']['options']}"
NCU_CODE = code("membound.counters.ncu")


rule counters:
    input:
        unpack(lambda wildcards: bench_inputs(wildcards, counters=True)),
    output:
        counters=f"{RESULTS}/raw/counters/{{family}}.csv",
        rows=f"{RESULTS}/raw/counters/{{family}}.rows.csv",
    log:
        f"{RESULTS}/logs/counters_{{family}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/counters_{{family}}.tsv"
    wildcard_constraints:
        family=FAMILY_NAMES,
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        ncu=NCU,
        cases=lambda wc: bench_args(wc, counters=True),
    shell:
        "python -m membound.run.gpu_slot -- python -m membound.counters.ncu {params.ncu} --out {output.counters}"
        " -- python -m membound.kernels.batch {wildcards.family} --out {output.rows} --backend cuda --warmup 0"
        " --reps 1 --counters {params.cases} > {log} 2>&1"


for _family in FAMILY:

    rule:
        name:
            f"counters_{_family}"
        input:
            raw(_family, prefix="counters/", repeats=1),


rule counters_dgemm:
    input:
        code=[*code("membound.counters.dgemm", "membound.run.gpu_slot"), *NCU_CODE],
    output:
        counters=f"{RESULTS}/raw/counters/dgemm.csv",
        rows=f"{RESULTS}/raw/counters/dgemm.rows.csv",
    log:
        f"{RESULTS}/logs/counters_dgemm.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/counters_dgemm.tsv"
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        ncu=NCU,
    shell:
        "python -m membound.run.gpu_slot -- python -m membound.counters.ncu {params.ncu} --out {output.counters}"
        " -- python -m membound.counters.dgemm --out {output.rows} > {log} 2>&1"
