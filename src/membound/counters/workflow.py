"""Small helpers of the counter and analysis rules (workflow/rules/counters.smk, analysis.smk)."""

from __future__ import annotations


def stencil_args(name: str, stencil: dict) -> str:
    """The stencil CLI's problem arguments for `name` from config["stencil"] (as rule bench_stencil)."""
    st = stencil["kernels"][name]
    domain = "x".join(map(str, stencil[f"domain_{st['dims']}d"]))
    return (f"--stencil {name} --shape {st['shape']} --dims {st['dims']} --radius {st['radius']}"
            f" --depth {st['depth']} --domain {domain} --steps {stencil['steps']}")


def raw_paths(results: str, prefix: str, stencils, matrices) -> list[str]:
    """Raw CSVs under <results>/raw/<prefix>: scale, every stencil, every matrix in `matrices`."""
    paths = [f"{results}/raw/{prefix}scale.csv"]
    paths += [f"{results}/raw/{prefix}stencil/{s}.csv" for s in stencils]
    return paths + [f"{results}/raw/{prefix}spmv/{m['name']}.csv" for m in matrices]


def why_not(counters: bool, profiler: str) -> str:
    """Why no counters are measured ('' when ncu runs): the tables' "not measured (...)" reason."""
    if not counters:
        return "counters: false"
    if profiler != "ncu":
        return f"profiler {profiler}: no counter runs in the workflow for it"
    return ""
