# SpMV with cuSPARSE CSR and a DASP-style FP64 tensor-core kernel, one matrix per job (paper 000 Figure 7).


rule bench_spmv:
    input:
        matrix=lambda wildcards: csr_file(wildcards.name),
        code=bench_code("spmv"),
    output:
        FAMILY["spmv"].raw(RESULTS, "{name}", "{rep}"),
    log:
        f"{RESULTS}/logs/bench_spmv/{{name}}{{rep}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/bench_spmv-{{name}}{{rep}}.tsv"
    wildcard_constraints:
        name=NAMES,
        rep=families.REP_SUFFIX,
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        backend=BACKEND,
        args=families.cli_args("spmv", config),
        rep=lambda wc: families.rep_index(wc.rep),
        warmup=config["spmv"]["warmup"],
        reps=config["spmv"]["reps"],
    shell:
        "python -m membound.kernels.spmv --backend {params.backend} --matrix {input.matrix} {params.args}"
        " --rep {params.rep}"
        " --warmup {params.warmup} --reps {params.reps} --out {output} > {log} 2>&1"
