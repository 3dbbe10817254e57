"""Where the workflow keeps a matrix's files under config data_dir."""


def csr_path(config: dict, name: str) -> str:
    """The CSR file of matrix `name` for the configured matrix_source (real, or surrogate at its scale)."""
    if config["matrix_source"] == "real":
        return f"{config['data_dir']}/csr/real/{name}.npz"
    return f"{config['data_dir']}/csr/surrogate-{config['spmv']['surrogate_scale']}/{name}.npz"


def plans_path(config: dict, name: str) -> str:
    """The tensor-core SpMV's plans of matrix `name` (rule spmv_plans): beside the CSR file, under plans/."""
    return csr_path(config, name).replace(f"{config['data_dir']}/csr/", f"{config['data_dir']}/plans/", 1)
