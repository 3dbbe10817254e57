# SpMV with cuSPARSE CSR and a DASP-style FP64 tensor-core kernel, one matrix per job (paper 000 Figure 7).


rule bench_spmv:
    input:
        matrix=lambda wildcards: csr_file(wildcards.name),
        code=["src/membound/kernels/spmv.py", "src/membound/kernels/spmv_tc.cu"],
    output:
        f"{RESULTS}/raw/spmv/{{name}}.csv",
    log:
        f"{RESULTS}/logs/bench_spmv/{{name}}.log",
    benchmark:
        f"{RESULTS}/raw/benchmarks/bench_spmv-{{name}}.tsv"
    conda:
        "../../envs/membound.yaml"
    resources:
        gpu=1,
    params:
        backend="cpu" if GPU["vendor"] == "cpu" else "cuda",  # amd: HIP; spmv.py skips the tensor-core path
        warmup=config["spmv"]["warmup"],
        reps=config["spmv"]["reps"],
    shell:
        "python -m membound.kernels.spmv --backend {params.backend} --matrix {input.matrix}"
        " --warmup {params.warmup} --reps {params.reps} --out {output} > {log} 2>&1"
