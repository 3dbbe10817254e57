# The six FP64 stencils on CUDA cores (naive, temporal blocking) and tensor cores (kernel fusion):
# paper 000 Sec. 5.3 / Figure 8, paper 002 Table 3 roles.


rule bench_stencil:
    input:
        code=bench_code("stencil"),
    output:
        FAMILY["stencil"].raw(RESULTS, "{stencil}", "{rep}"),
    log:
        f"{RESULTS}/logs/bench_stencil_{{stencil}}{{rep}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/bench_stencil-{{stencil}}{{rep}}.tsv"
    wildcard_constraints:
        stencil="|".join(config["stencil"]["kernels"]),
        rep=families.REP_SUFFIX,
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        backend=BACKEND,
        args=lambda wc: families.cli_args("stencil", config, wc.stencil),
        rep=lambda wc: families.rep_index(wc.rep),
        warmup=config["stencil"]["warmup"],
        reps=config["stencil"]["reps"],
    shell:
        "python -m membound.kernels.stencil --backend {params.backend} {params.args} --rep {params.rep}"
        " --warmup {params.warmup} --reps {params.reps} --out {output} > {log} 2>&1"
