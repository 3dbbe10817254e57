"""The kernel families: the one registry the rules, the analytical model, the claims, the AE appendix,
the counters and the plots read (docs/architecture.md).

Per family: its name and title, its cases (from the config), the benchmark CLI's problem arguments,
the raw-path pattern, the code its measurement depends on (the rules' rerun triggers), the CUDA-core
and tensor-core roles the claims compare, and its analytical W and Q (membound.model). The
implementations themselves are the `IMPLS` of each module membound.kernels.<family>.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from membound.model import equations, geometry, peaks

KERNELS = "src/membound/kernels"


@dataclass(frozen=True)
class Family:
    name: str                 # the rows' `kernel`, the module membound.kernels.<name>
    title: str                # as the AE appendix and the docs name it
    sources: str              # glob of its CUDA sources and headers under src/membound/kernels/
    per_case: bool            # one job and raw CSV per case (raw/<name>/<case>.csv), else one (raw/<name>.csv)
    cc_role: str              # the CUDA-core baseline the claims set against the tensor-core role
    tc_role: str
    wq: Callable[[Mapping, dict, Mapping | None], dict]   # analytical W, Q, W_exec, items of one row

    @property
    def code(self) -> list[str]:
        """The family's own files (its module and CUDA sources); the rules add what the module
        imports (membound.run.codedeps), so that an edit of the harness reruns every family."""
        found = sorted(p.name for p in (Path(__file__).parent / "kernels").glob(self.sources))
        return [f"{KERNELS}/{self.name}.py", *(f"{KERNELS}/{s}" for s in found)]

    def raw(self, results: str, case: str | None = None, rep: int | str = 0, prefix: str = "") -> str:
        """The raw CSV of `case` (per-case families) and repetition `rep` under <results>/raw/<prefix>:
        repetition 0 is <stem>.csv, repetition r > 0 <stem>.rep<r>.csv (a string `rep` is a wildcard
        pattern put in as it is)."""
        stem = f"{self.name}/{case}" if self.per_case else self.name
        suffix = rep if isinstance(rep, str) else (f".rep{rep}" if rep else "")
        return f"{results}/raw/{prefix}{stem}{suffix}.csv"


REP_SUFFIX = r"(\.rep[1-9][0-9]*)?"   # the `rep` wildcard of Family.raw: '' or '.rep<r>'


def rep_index(suffix: str) -> int:
    """The repetition index of a `rep` wildcard value ('' -> 0, '.rep3' -> 3)."""
    return int(suffix.removeprefix(".rep") or 0)


# ------------------------------------------------------------------------ analytical W and Q
# Each takes the row's precision (membound.model.peaks.row_precision): its element size D for Q and its
# MMA shape for W_exec on tensor cores.


def _precision(row: Mapping, gpu: dict) -> peaks.Peaks:
    return peaks.at(gpu, peaks.row_precision(row))


def _scale_wq(row: Mapping, gpu: dict, stencils=None) -> dict:
    n, p = int(row["n"]), _precision(row, gpu)
    w, q = equations.scale_wq(n, p.element_bytes)
    w_exec = w if row["unit"] == "cuda_core" else 2 * n / equations.scale_mma_fraction(p.mma_shape)   # Sec. 5.1
    return {"W": w, "Q": q, "W_exec": w_exec, "items": n}


def _spmv_wq(row: Mapping, gpu: dict, stencils=None) -> dict:
    nnz, p = int(row["nnz"]), _precision(row, gpu)
    w, q = equations.csr_wq(int(row["rows"]), int(row["cols"]), nnz, p.element_bytes)
    m, n, k = p.mma_shape
    w_exec = w if row["unit"] == "cuda_core" else float(row.get("mma", "nan") or "nan") * 2 * m * n * k
    return {"W": w, "Q": q, "W_exec": w_exec, "items": nnz}


def _stencil_wq(row: Mapping, gpu: dict, stencils: Mapping) -> dict:
    spec = stencils[row["problem"]]
    shape, dims, radius = spec["shape"], spec["dims"], spec["radius"]
    k = equations.stencil_points(shape, dims, radius)
    depth, steps = int(row["depth"]), int(row["steps"])
    points = int(row["n"])
    launches = steps // depth
    w, q = equations.stencil_wq(points, k, t=depth, d=_precision(row, gpu).element_bytes)   # per launch (eq. 13)
    w, q = w * launches, q * launches
    w_exec = w
    if row["unit"] == "tensor_core":
        alpha = equations.fusion_redundancy(shape, dims, radius, depth)
        w_exec = w * alpha / geometry.tc_sparsity(shape, dims, radius, depth)    # paper 002, eq. 3
    return {"W": w, "Q": q, "W_exec": w_exec, "items": points * steps}


def _gemv_wq(row: Mapping, gpu: dict, stencils=None) -> dict:
    m, n, p = int(row["rows"]), int(row["cols"]), _precision(row, gpu)
    w, q = equations.gemv_wq(m, n, p.element_bytes)                                # paper 000, eq. 6-7
    w_exec = w if row["unit"] == "cuda_core" else w * p.mma_shape[1]   # x fills 1 of the MMA's n columns
    return {"W": w, "Q": q, "W_exec": w_exec, "items": m * n}


FAMILIES = {f.name: f for f in (   # in the order of the raw rows every table reads
    Family("scale", "SCALE", "scale*.cu*", False, "STREAM", "STREAM", _scale_wq),
    Family("stencil", "stencils", "stencil*.cu*", True, "EBISU", "ConvStencil", _stencil_wq),
    Family("spmv", "SpMV", "spmv*.cu*", True, "cuSPARSE", "DASP", _spmv_wq),
    Family("gemv", "GEMV", "gemv*.cu*", False, "cuBLAS", "DMMA", _gemv_wq),
)}


def cases(family: str, config: Mapping, matrices) -> list[str | None]:
    """The cases of `family` in a run: SCALE and GEMV have one job for all sizes (None), SpMV one per matrix in
    `matrices`, stencils one per config["stencil"]["kernels"] entry."""
    if family == "spmv":
        return [m["name"] for m in matrices]
    if family == "stencil":
        return list(config["stencil"]["kernels"])
    return [None]


def cli_args(family: str, config: Mapping, case: str | None = None, counters: bool = False) -> str:
    """The benchmark CLI's problem arguments of `case` from the config, with its --precisions (SpMV:
    its --matrix is the rule's input, not here). Counter runs of SCALE cover config
    ncu.scale_log2_min..max."""
    return f"{_problem_args(family, config, case, counters)} --precisions {' '.join(config['precisions'])}".strip()


def _problem_args(family: str, config: Mapping, case: str | None, counters: bool) -> str:
    if family == "scale":
        block, key = ("ncu", "scale_log2_") if counters else ("scale", "log2_")
        lo, hi = config[block][key + "min"], config[block][key + "max"]
        return f"--log2-min {lo} --log2-max {hi}"
    if family == "gemv":
        return "--sizes " + " ".join(map(str, config["gemv"]["sizes"]))
    if family == "stencil":
        stencil = config["stencil"]
        st = stencil["kernels"][case]
        domain = "x".join(map(str, stencil[f"domain_{st['dims']}d"]))
        return (f"--stencil {case} --shape {st['shape']} --dims {st['dims']} --radius {st['radius']}"
                f" --depth {st['depth']} --domain {domain} --steps {stencil['steps']}")
    return ""


def raw_paths(results: str, config: Mapping, matrices, prefix: str = "", repeats: int = 1,
              exists: Callable[[str], bool] | None = None) -> list[str]:
    """Every family's raw CSVs under <results>/raw/<prefix> for `repeats` repetitions (counter runs:
    one). With `exists`, repetitions r > 0 only where it says the file is there (the reference
    profile's committed raw data)."""
    paths = []
    for family in FAMILIES.values():
        for case in cases(family.name, config, matrices):
            for rep in range(repeats):
                path = family.raw(results, case, rep, prefix)
                if rep == 0 or exists is None or exists(path):
                    paths.append(path)
    return paths
