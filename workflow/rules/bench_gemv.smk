# Dense GEMV on CUDA cores (cuBLAS) and FP64 tensor cores (paper 000 eq. 6-7), the fourth family.


rule bench_gemv:
    input:
        code=bench_code("gemv"),
    output:
        FAMILY["gemv"].raw(RESULTS, rep="{rep}"),
    log:
        f"{RESULTS}/logs/bench_gemv{{rep}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/bench_gemv{{rep}}.tsv"
    wildcard_constraints:
        rep=families.REP_SUFFIX,
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        backend=BACKEND,
        args=families.cli_args("gemv", config),
        rep=lambda wc: families.rep_index(wc.rep),
        warmup=config["gemv"]["warmup"],
        reps=config["gemv"]["reps"],
    shell:
        "python -m membound.kernels.gemv --backend {params.backend} {params.args} --rep {params.rep}"
        " --warmup {params.warmup} --reps {params.reps} --out {output} > {log} 2>&1"
