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
    matrix_lock,


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
        csr=f"{DATA}/csr/real/{{name}}.npz",
        record=f"{DATA}/csr/real/{{name}}.sha256.tsv",  # the tarball's hash, for rule matrix_lock
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


# The one writer of the lock file: it merges the conversions' records on the node that runs snakemake
# (a localrule), so that conversions on other nodes of a shared file system cannot overwrite each
# other's hashes (docs/matrices.md, "Lock file"). Its output: the recorded hashes of these matrices.
rule matrix_lock:
    input:
        [f"{DATA}/csr/real/{m['name']}.sha256.tsv" for m in MATRICES],
    output:
        f"{DATA}/csr/real/lock.tsv",
    log:
        f"{DATA}/logs/matrix_lock.log",
    conda:
        "../../envs/membound.yaml"
    params:
        lockfile=config["lockfile"],
    script:
        "../../scripts/matrix_lock.py"


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
        lock=rules.matrix_lock.output if config["matrix_source"] == "real" else [],  # hashes recorded first
    output:
        f"{RESULTS}/raw/matrices.csv",
    log:
        f"{RESULTS}/logs/matrix_stats.log",
    conda:
        "../../envs/membound.yaml"
    script:
        "../../scripts/matrix_stats.py"
