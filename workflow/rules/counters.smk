# Hardware counters: every benchmark rerun under ncu on its NVTX-tagged launches only (one measured
# launch per case, --counters), with a minimal metric list; docs/counters.md. Pulled in by rule wqi.

from membound.counters.workflow import mma_shapes

NCU = f"--mma-shapes {mma_shapes(GPU)} {config['ncu']['options']}"
NCU_CODE = code("membound.counters.ncu")


rule counters_scale:
    input:
        code=[*bench_code("scale"), *NCU_CODE],
    output:
        counters=FAMILY["scale"].raw(RESULTS, prefix="counters/"),
        rows=f"{RESULTS}/raw/counters/scale.rows.csv",
    log:
        f"{RESULTS}/logs/counters_scale.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/counters_scale.tsv"
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        ncu=NCU,
        sizes=families.cli_args("scale", config, counters=True),
    shell:
        "python -m membound.counters.ncu {params.ncu} --out {output.counters}"
        " -- python -m membound.kernels.scale --backend cuda {params.sizes} --warmup 0 --reps 1 --counters"
        " --out {output.rows} > {log} 2>&1"


rule counters_spmv:
    input:
        csr=lambda wc: csr_file(wc.name),
        code=[*bench_code("spmv"), *NCU_CODE],
    output:
        counters=FAMILY["spmv"].raw(RESULTS, "{name}", prefix="counters/"),
        rows=f"{RESULTS}/raw/counters/spmv/{{name}}.rows.csv",
    log:
        f"{RESULTS}/logs/counters_spmv_{{name}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/counters_spmv-{{name}}.tsv"
    wildcard_constraints:
        name=NAMES,
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        ncu=NCU,
        args=families.cli_args("spmv", config),
    shell:
        "python -m membound.counters.ncu {params.ncu} --out {output.counters}"
        " -- python -m membound.kernels.spmv --backend cuda --matrix {input.csr} {params.args} --warmup 0 --reps 1"
        " --counters"
        " --out {output.rows} > {log} 2>&1"


rule counters_stencil:
    input:
        code=[*bench_code("stencil"), *NCU_CODE],
    output:
        counters=FAMILY["stencil"].raw(RESULTS, "{stencil}", prefix="counters/"),
        rows=f"{RESULTS}/raw/counters/stencil/{{stencil}}.rows.csv",
    log:
        f"{RESULTS}/logs/counters_stencil_{{stencil}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/counters_stencil-{{stencil}}.tsv"
    wildcard_constraints:
        stencil="|".join(config["stencil"]["kernels"]),
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        ncu=NCU,
        args=lambda wc: families.cli_args("stencil", config, wc.stencil),
    shell:
        "python -m membound.counters.ncu {params.ncu} --out {output.counters}"
        " -- python -m membound.kernels.stencil --backend cuda {params.args} --warmup 0 --reps 1 --counters"
        " --out {output.rows} > {log} 2>&1"


rule counters_gemv:
    input:
        code=[*bench_code("gemv"), *NCU_CODE],
    output:
        counters=FAMILY["gemv"].raw(RESULTS, prefix="counters/"),
        rows=f"{RESULTS}/raw/counters/gemv.rows.csv",
    log:
        f"{RESULTS}/logs/counters_gemv.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/counters_gemv.tsv"
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        ncu=NCU,
        args=families.cli_args("gemv", config),
    shell:
        "python -m membound.counters.ncu {params.ncu} --out {output.counters}"
        " -- python -m membound.kernels.gemv --backend cuda {params.args} --warmup 0 --reps 1 --counters"
        " --out {output.rows} > {log} 2>&1"


rule counters_dgemm:
    input:
        code=[*code("membound.counters.dgemm"), *NCU_CODE],
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
        "python -m membound.counters.ncu {params.ncu} --out {output.counters}"
        " -- python -m membound.counters.dgemm --out {output.rows} > {log} 2>&1"
