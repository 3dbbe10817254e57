# The six FP64 stencils on CUDA cores (naive, temporal blocking) and tensor cores (kernel fusion):
# paper 000 Sec. 5.3 / Figure 8, paper 002 Table 3 roles.


STENCILS = config["stencil"]["kernels"]


rule bench_stencil:
    input:
        "src/membound/kernels/stencil.py",
        "src/membound/kernels/stencil_cc.cu",
        "src/membound/kernels/stencil_cc3.cu",
        "src/membound/kernels/stencil_tb3.cu",
        "src/membound/kernels/stencil_strip.cuh",
        "src/membound/kernels/stencil_async.cuh",
        "src/membound/kernels/stencil_tc.cu",
        "src/membound/kernels/stencil_tc3.cu",
        "src/membound/kernels/stencil_mma.cuh",
        "src/membound/kernels/stencil_plane.cuh",
    output:
        f"{RESULTS}/raw/stencil/{{stencil}}.csv",
    log:
        f"{RESULTS}/logs/bench_stencil_{{stencil}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/bench_stencil-{{stencil}}.tsv"
    wildcard_constraints:
        stencil="|".join(STENCILS),
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        backend="cpu" if GPU["vendor"] == "cpu" else "cuda",
        shape=lambda wc: STENCILS[wc.stencil]["shape"],
        dims=lambda wc: STENCILS[wc.stencil]["dims"],
        radius=lambda wc: STENCILS[wc.stencil]["radius"],
        depth=lambda wc: STENCILS[wc.stencil]["depth"],
        domain=lambda wc: "x".join(map(str, config["stencil"][f"domain_{STENCILS[wc.stencil]['dims']}d"])),
        steps=config["stencil"]["steps"],
        warmup=config["stencil"]["warmup"],
        reps=config["stencil"]["reps"],
    shell:
        "python -m membound.kernels.stencil --backend {params.backend} --stencil {wildcards.stencil}"
        " --shape {params.shape} --dims {params.dims} --radius {params.radius} --depth {params.depth}"
        " --domain {params.domain} --steps {params.steps} --warmup {params.warmup} --reps {params.reps}"
        " --out {output} > {log} 2>&1"
