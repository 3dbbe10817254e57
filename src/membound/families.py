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

from membound.model import analytical

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


FAMILIES = {f.name: f for f in (   # in the order of the raw rows every table reads
    Family("scale", "SCALE", "scale*.cu*", False, "STREAM", "STREAM", analytical.scale),
    Family("stencil", "stencils", "stencil*.cu*", True, "EBISU", "ConvStencil", analytical.stencil),
    Family("spmv", "SpMV", "spmv*.cu*", True, "cuSPARSE", "DASP", analytical.spmv),
    Family("gemv", "GEMV", "gemv*.cu*", False, "cuBLAS", "DMMA", analytical.gemv),
)}


def analytical_row(row: Mapping, gpu: dict, stencils: Mapping | None = None) -> dict:
    """Analytical W, Q, I (useful work), W_exec (work the unit executes) and the same per work
    item (element, nnz, or point and step) of one raw benchmark row, by its family's `wq`.

    `stencils` is config["stencil"]["kernels"] (shape, dims, radius per stencil name).
    """
    kernel = row["kernel"]
    if kernel not in FAMILIES:
        raise ValueError(f"unknown kernel '{kernel}' in a benchmark row (families: {', '.join(FAMILIES)})")
    return analytical.per_item(FAMILIES[kernel].wq(row, gpu, stencils))


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
        sweep = "".join(f" {t}" for t in st.get("depths", []) if t != st["depth"])
        return (f"--stencil {case} --shape {st['shape']} --dims {st['dims']} --radius {st['radius']}"
                f" --depth {st['depth']}{' --depths' + sweep if sweep else ''} --domain {domain}"
                f" --steps {stencil['steps']}")
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
