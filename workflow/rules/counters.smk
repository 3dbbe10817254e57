# Hardware counters: every benchmark rerun under ncu on its NVTX-tagged launches only (one measured
# launch per case, --counters), with a minimal metric list; docs/counters.md. Pulled in by rule wqi.

from membound.counters.workflow import stencil_args

NCU = f"--mma-shape {' '.join(map(str, GPU['mma_shape']))} {config['ncu']['options']}"


rule counters_scale:
    input:
        "src/membound/kernels/scale.py",
        "src/membound/kernels/scale.cu",
    output:
        counters=f"{RESULTS}/raw/counters/scale.csv",
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
        sizes=f"--log2-min {config['ncu']['scale_log2_min']} --log2-max {config['ncu']['scale_log2_max']}",
    shell:
        "python -m membound.counters.ncu {params.ncu} --out {output.counters}"
        " -- python -m membound.kernels.scale --backend cuda {params.sizes} --warmup 0 --reps 1 --counters"
        " --out {output.rows} > {log} 2>&1"


rule counters_spmv:
    input:
        csr=lambda wc: csr_file(wc.name),
    output:
        counters=f"{RESULTS}/raw/counters/spmv/{{name}}.csv",
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
    shell:
        "python -m membound.counters.ncu {params.ncu} --out {output.counters}"
        " -- python -m membound.kernels.spmv --backend cuda --matrix {input.csr} --warmup 0 --reps 1 --counters"
        " --out {output.rows} > {log} 2>&1"


rule counters_stencil:
    input:
        "src/membound/kernels/stencil.py",
        "src/membound/kernels/stencil_cc.cu",
        "src/membound/kernels/stencil_cc3.cu",
        "src/membound/kernels/stencil_tb3.cu",
        "src/membound/kernels/stencil_strip.cuh",
        "src/membound/kernels/stencil_async.cuh",
        "src/membound/kernels/stencil_tc.cu",
    output:
        counters=f"{RESULTS}/raw/counters/stencil/{{stencil}}.csv",
        rows=f"{RESULTS}/raw/counters/stencil/{{stencil}}.rows.csv",
    log:
        f"{RESULTS}/logs/counters_stencil_{{stencil}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/counters_stencil-{{stencil}}.tsv"
    wildcard_constraints:
        stencil="|".join(STENCILS),
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        ncu=NCU,
        args=lambda wc: stencil_args(wc.stencil, config["stencil"]),
    shell:
        "python -m membound.counters.ncu {params.ncu} --out {output.counters}"
        " -- python -m membound.kernels.stencil --backend cuda {params.args} --warmup 0 --reps 1 --counters"
        " --out {output.rows} > {log} 2>&1"


rule counters_dgemm:
    input:
        "src/membound/counters/dgemm.py",
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
