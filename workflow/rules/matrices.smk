# The 21 SpMV matrices (paper 000 Table 2): download, conversion to binary CSR, surrogates, Table 2.

import functools

from membound.matrices import paths as matrix_paths

MATRIX = {m["name"]: m for m in MATRICES}
DATA = config["data_dir"]
NAMES = "|".join(MATRIX)


csr_file = functools.partial(matrix_paths.csr_path, config)  # csr_file(name): the CSR file to use


localrules:
    download_matrix,


rule download_matrix:
    wildcard_constraints:
        name=NAMES,
    output:
        f"{DATA}/tarballs/{{name}}.tar.gz",
    log:
        f"{DATA}/logs/download_matrix/{{name}}.log",
    conda:
        "../../envs/membound.yaml"
    params:
        entry=lambda wc: MATRIX[wc.name],
        download=config["download"],
        lockfile=config["lockfile"],
    script:
        "../../scripts/download_matrix.py"


rule convert_matrix:
    wildcard_constraints:
        name=NAMES,
    input:
        rules.download_matrix.output,
    output:
        f"{DATA}/csr/real/{{name}}.npz",
    log:
        f"{DATA}/logs/convert_matrix/{{name}}.log",
    conda:
        "../../envs/membound.yaml"
    params:
        entry=lambda wc: MATRIX[wc.name],
        lockfile=config["lockfile"],
    resources:
        mem_mb=lambda wc: 1024 + MATRIX[wc.name]["nnz"] * 150 // 2**20,  # 8 GB peak for circuit5M
    script:
        "../../scripts/convert_matrix.py"


rule surrogate_matrix:
    wildcard_constraints:
        name=NAMES,
        scale=r"[0-9.]+(e-?[0-9]+)?",
    output:
        f"{DATA}/csr/surrogate-{{scale}}/{{name}}.npz",
    log:
        f"{DATA}/logs/surrogate_matrix/{{scale}}-{{name}}.log",
    conda:
        "../../envs/membound.yaml"
    params:
        entry=lambda wc: MATRIX[wc.name],
        scale=lambda wc: float(wc.scale),
    script:
        "../../scripts/surrogate_matrix.py"


rule table2:
    input:
        csr=[csr_file(m["name"]) for m in MATRICES],
    output:
        csv=report(f"{RESULTS}/tables/table2_matrices.csv", caption="../report/table2.rst", category="Tables"),
        md=f"{RESULTS}/tables/table2_matrices.md",
    log:
        f"{RESULTS}/logs/table2.log",
    conda:
        "../../envs/membound.yaml"
    params:
        gpu=GPU["name"],
        l2_mb=GPU["l2_MB"],
    script:
        "../../scripts/table2.py"
