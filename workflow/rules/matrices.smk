# The 21 SpMV matrices (paper 000 Table 2): download, conversion to binary CSR, surrogates, the
# tensor-core SpMV's plans of each (made once, read by every SpMV job), and the statistics of the
# matrices a run used (raw/matrices.csv, rendered as Table 2 by tables.smk).

import functools

from membound.matrices import paths as matrix_paths

MATRIX = {m["name"]: m for m in MATRICES}
DATA = config["data_dir"]
NAMES = "|".join(MATRIX)


csr_file = functools.partial(matrix_paths.csr_path, config)  # csr_file(name): the CSR file to use
plan_file = functools.partial(matrix_paths.plans_path, config)  # plan_file(name): its SpMV plans


localrules:
    download_matrix,


rule download_matrix:
    output:
        f"{DATA}/tarballs/{{name}}.tar.gz",
    log:
        f"{DATA}/logs/download_matrix/{{name}}.log",
    wildcard_constraints:
        name=NAMES,
    conda:
        "../../envs/membound.yaml"
    params:
        entry=lambda wc: MATRIX[wc.name],
        download=config["download"],
        lockfile=config["lockfile"],
    script:
        "../../scripts/download_matrix.py"


rule convert_matrix:
    input:
        rules.download_matrix.output,
    output:
        f"{DATA}/csr/real/{{name}}.npz",
    log:
        f"{DATA}/logs/convert_matrix/{{name}}.log",
    wildcard_constraints:
        name=NAMES,
    conda:
        "../../envs/membound.yaml"
    resources:
        mem_mb=lambda wc: 1024 + MATRIX[wc.name]["nnz"] * 150 // 2**20,  # 8 GB peak for circuit5M
    params:
        entry=lambda wc: MATRIX[wc.name],
        lockfile=config["lockfile"],
    script:
        "../../scripts/convert_matrix.py"


rule surrogate_matrix:
    output:
        f"{DATA}/csr/surrogate-{{scale}}/{{name}}.npz",
    log:
        f"{DATA}/logs/surrogate_matrix/{{scale}}-{{name}}.log",
    wildcard_constraints:
        name=NAMES,
        scale=r"[0-9.]+(e-?[0-9]+)?",
    conda:
        "../../envs/membound.yaml"
    params:
        entry=lambda wc: MATRIX[wc.name],
        scale=lambda wc: float(wc.scale),
    script:
        "../../scripts/surrogate_matrix.py"


rule spmv_plans:
    input:
        csr=f"{DATA}/csr/{{source}}/{{name}}.npz",
        code=code("membound.kernels.spmv.plans"),
    output:
        f"{DATA}/plans/{{source}}/{{name}}.npz",
    log:
        f"{DATA}/logs/spmv_plans/{{source}}-{{name}}.log",
    wildcard_constraints:
        name=NAMES,
        source=r"real|surrogate-[0-9.]+(e-?[0-9]+)?",
    conda:
        "../../envs/membound.yaml"
    resources:
        mem_mb=lambda wc: 1024 + MATRIX[wc.name]["rows"] * 400 // 2**20,
    shell:
        "python -m membound.kernels.spmv.plans --matrix {input.csr:q} --out {output:q} > {log:q} 2>&1"


rule matrix_stats:
    input:
        csr=[csr_file(m["name"]) for m in MATRICES],
    output:
        f"{RESULTS}/raw/matrices.csv",
    log:
        f"{RESULTS}/logs/matrix_stats.log",
    conda:
        "../../envs/membound.yaml"
    script:
        "../../scripts/matrix_stats.py"
