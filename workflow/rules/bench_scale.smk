# STREAM SCALE on CUDA cores and FP64 tensor cores (paper 000 Sec. 5.1, Figure 6).


rule bench_scale:
    input:
        code=bench_code("scale"),
    output:
        FAMILY["scale"].raw(RESULTS, rep="{rep}"),
    log:
        f"{RESULTS}/logs/bench_scale{{rep}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/bench_scale{{rep}}.tsv"
    wildcard_constraints:
        rep=families.REP_SUFFIX,
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        backend=BACKEND,
        args=families.cli_args("scale", config),
        rep=lambda wc: families.rep_index(wc.rep),
        warmup=config["scale"]["warmup"],
        reps=config["scale"]["reps"],
    shell:
        "python -m membound.kernels.scale --backend {params.backend} {params.args} --rep {params.rep}"
        " --warmup {params.warmup} --reps {params.reps} --out {output} > {log} 2>&1"
