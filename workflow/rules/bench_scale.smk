# STREAM SCALE on CUDA cores and FP64 tensor cores (paper 000 Sec. 5.1, Figure 6).


rule bench_scale:
    input:
        "src/membound/kernels/scale.py",
        "src/membound/kernels/scale.cu",
    output:
        f"{RESULTS}/raw/scale.csv",
    log:
        f"{RESULTS}/logs/bench_scale.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/bench_scale.tsv"
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        backend="cpu" if GPU["vendor"] == "cpu" else "cuda",  # amd: HIP; scale.py skips the tensor-core path
        log2_min=config["scale"]["log2_min"],
        log2_max=config["scale"]["log2_max"],
        warmup=config["scale"]["warmup"],
        reps=config["scale"]["reps"],
    shell:
        "python -m membound.kernels.scale --backend {params.backend} --log2-min {params.log2_min}"
        " --log2-max {params.log2_max} --warmup {params.warmup} --reps {params.reps} --out {output} > {log} 2>&1"
