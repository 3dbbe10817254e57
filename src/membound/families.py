"""The kernel families: the one registry the rules, the analytical model, the claims, the AE appendix,
the counters and the plots read (docs/architecture.md).

Per family: its name and title, its cases (from the config), the benchmark CLI's problem arguments,
the raw-path pattern, the code its measurement depends on (the rules' rerun triggers), the CUDA-core
and tensor-core roles the claims compare, and its analytical W and Q (membound.model). The
implementations themselves are the `IMPLS` of each module membound.kernels.<family>.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from membound.model import analytical
from membound.model.precision import PRECISIONS

KERNELS = "src/membound/kernels"
CODE_SUFFIXES = (".py", ".cu", ".cuh", ".yaml")   # a family's files that its jobs run (no caches)


def block(**keys: dict) -> dict:
    """The JSON-schema fragment of a family's config block: its own `keys`, and `warmup` and `reps`
    (untimed and timed calls per case), which every block has; all required, no other key but
    `warmup_s` (seconds the warm-up lasts at least; 0 when absent)."""
    keys = {"warmup": {"type": "integer", "minimum": 0}, "reps": {"type": "integer", "minimum": 1}, **keys}
    return {"type": "object", "properties": {**keys, "warmup_s": {"type": "number", "minimum": 0}},
            "required": list(keys), "additionalProperties": False}


@dataclass(frozen=True)
class Family:
    name: str                 # the rows' `kernel`, the package membound.kernels.<name> (its folder), its config block
    title: str                # as the AE appendix and the docs name it
    cc_role: str              # the CUDA-core baseline the claims set against the tensor-core role
    tc_role: str
    wq: Callable[[Mapping, dict, Mapping | None], dict]   # analytical W, Q, W_exec, items of one row
    schema: dict              # its config block (block()); the rules pass it to membound.run.config.assemble
    args: Callable[[Mapping, str | None, bool, int], str] = lambda config, case, counters, rep: ""   # the CLI's problem
    cases: Callable[[Mapping, list], list] | None = None  # its cases, one CLI call each in its job; else one call
    case_file: str = ""       # the CLI option that takes the case's CSR matrix file (the matrices rules make it)
    plan_file: str = ""       # the CLI option that takes the case's plans (SpMV: rule spmv_plans makes them)

    @property
    def per_case(self) -> bool:
        return self.cases is not None

    @property
    def code(self) -> list[str]:
        """The family's own files: every file of its folder src/membound/kernels/<name>/ (its modules,
        CUDA sources and data such as the stencils' tuned tiles); the rules add what its modules import
        (membound.run.codedeps), so that an edit of the harness reruns every family."""
        folder = Path(__file__).parent / "kernels" / self.name
        return sorted(f"{KERNELS}/{p.relative_to(folder.parent).as_posix()}" for p in folder.rglob("*")
                      if p.is_file() and p.suffix in CODE_SUFFIXES)

    def raw(self, results: str, case: str | None = None, rep: int | str = 0, prefix: str = "") -> str:
        """The raw CSV of repetition `rep` under <results>/raw/<prefix>, one job's: every case of the
        family (membound.kernels.batch). Repetition 0 is <stem>.csv, repetition r > 0
        <stem>.rep<r>.csv (a string `rep` is a wildcard pattern put in as it is). With `case`: that
        case's own file, <name>/<case>, as runs wrote them before a job ran every case (the
        reference profile still reads them)."""
        stem = f"{self.name}/{case}" if case else self.name
        suffix = rep if isinstance(rep, str) else (f".rep{rep}" if rep else "")
        return f"{results}/raw/{prefix}{stem}{suffix}.csv"


REP_SUFFIX = r"(\.rep[1-9][0-9]*)?"   # the `rep` wildcard of Family.raw: '' or '.rep<r>'


def rep_index(suffix: str) -> int:
    """The repetition index of a `rep` wildcard value ('' -> 0, '.rep3' -> 3)."""
    return int(suffix.removeprefix(".rep") or 0)


def stencil_fields(config: Mapping) -> list[int]:
    """The points of each configured stencil domain (2D, 3D) that a stencil runs on: SCALE times
    arrays of these sizes too, the copy each unblocked stencil is set against (rule bandwidth)."""
    stencil = config["stencil"]
    dims = sorted({k["dims"] for k in stencil["kernels"].values()})
    return [math.prod(stencil[f"domain_{d}d"]) for d in dims]


def _scale_args(config: Mapping, case: None, counters: bool, rep: int) -> str:
    """Array sizes 2^log2_min..2^log2_max and the stencils' fields (`stencil_fields`, a timed call as
    many launches as a stencil's has steps); counter runs config ncu.scale_log2_min..max every scale_log2_step."""
    if counters:
        ncu = config["ncu"]
        return (f"--log2-min {ncu['scale_log2_min']} --log2-max {ncu['scale_log2_max']}"
                f" --log2-step {ncu.get('scale_log2_step', 1)}")
    fields = "".join(f" {n}" for n in stencil_fields(config))
    return (f"--log2-min {config['scale']['log2_min']} --log2-max {config['scale']['log2_max']}"
            + (f" --sizes{fields} --launches {config['stencil']['steps']}" if fields else ""))


def _stencil_args(config: Mapping, case: str, counters: bool, rep: int) -> str:
    """The stencil's shape, depths, domain and steps; the fusion sweep's depths in repetitions
    0..stencil.sweep_repeats - 1 only (Table 3's depth in every one). Counter runs time 1 step, which
    the CLI rounds up to each depth: one launch per role and depth, as every launch of a call moves
    the same bytes (docs/counters.md), at Table 3's depth only unless config ncu.stencil_sweep."""
    stencil = config["stencil"]
    st = stencil["kernels"][case]
    domain = "x".join(map(str, stencil[f"domain_{st['dims']}d"]))
    if counters:
        swept = config.get("ncu", {}).get("stencil_sweep", False)
    else:
        swept = rep < stencil["sweep_repeats"]
    sweep = "".join(f" {t}" for t in st.get("depths", []) if t != st["depth"] and swept)
    steps = 1 if counters else stencil["steps"]     # the CLI rounds it up to each depth: one launch per call
    return (f"--stencil {case} --shape {st['shape']} --dims {st['dims']} --radius {st['radius']}"
            f" --depth {st['depth']}{' --depths' + sweep if sweep else ''} --domain {domain}"
            f" --steps {steps}")


_LOG2 = {"type": "integer", "minimum": 4, "maximum": 34}
_DOMAIN = {"type": "array", "items": {"type": "integer", "minimum": 8}}
_STENCIL = {"type": "object", "required": ["shape", "dims", "radius", "depth"], "additionalProperties": False,
            "properties": {"shape": {"type": "string", "enum": ["star", "box"]}, "dims": {"type": "integer", "enum": [2, 3]},
                           "radius": {"type": "integer", "minimum": 1}, "depth": {"type": "integer", "minimum": 1},
                           "depths": {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1,
                                      "uniqueItems": True,
                                      "description": "the fusion sweep: depths of cc_tb and tc; must hold depth"}}}

FAMILIES = {f.name: f for f in (   # in the order of the raw rows every table reads
    Family("scale", "SCALE", "STREAM", "STREAM", analytical.scale, block(log2_min=_LOG2, log2_max=_LOG2),
           args=_scale_args),
    Family("stencil", "stencils", "EBISU", "ConvStencil", analytical.stencil,
           block(steps={"type": "integer", "minimum": 1}, sweep_repeats={"type": "integer", "minimum": 1},
                 domain_2d={**_DOMAIN, "minItems": 2, "maxItems": 2},
                 domain_3d={**_DOMAIN, "minItems": 3, "maxItems": 3},
                 kernels={"type": "object", "additionalProperties": _STENCIL}),
           args=_stencil_args, cases=lambda config, matrices: list(config["stencil"]["kernels"])),
    Family("spmv", "SpMV", "cuSPARSE", "DASP", analytical.spmv,
           block(surrogate_scale={"type": "number", "exclusiveMinimum": 0, "maximum": 1}),
           cases=lambda config, matrices: [m["name"] for m in matrices], case_file="--matrix", plan_file="--plans"),
    Family("gemv", "GEMV", "cuBLAS", "DMMA", analytical.gemv,
           block(sizes={"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1,
                        "description": "square sizes n of A"}),
           args=lambda config, case, counters, rep: "--sizes " + " ".join(map(str, config["gemv"]["sizes"]))),
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


def config_blocks() -> dict[str, dict]:
    """Every family's config block schema by its key, and `precisions` with the precision records' names
    (membound.model.precision: the config schema itself types no precision), for
    membound.run.config.assemble(blocks=...)."""
    precisions = {"type": "array", "items": {"type": "string", "enum": list(PRECISIONS)}, "minItems": 1,
                  "uniqueItems": True, "description": "storage precisions of every family (membound.model.precision)"}
    return {**{f.name: f.schema for f in FAMILIES.values()}, "precisions": precisions}


def cases(family: str, config: Mapping, matrices) -> list[str | None]:
    """The cases of `family` in a run, each one call of its CLI in the family's job (e.g. SpMV one per
    matrix in `matrices`, stencils one per config["stencil"]["kernels"] entry), or [None] for one
    call of all its sizes."""
    found = FAMILIES[family].cases
    return [None] if found is None else found(config, matrices)


def cli_args(family: str, config: Mapping, case: str | None = None, counters: bool = False, rep: int = 0) -> str:
    """The benchmark CLI's problem arguments of `case` in repetition `rep` from the config, with its
    --precisions (a `case_file` option such as SpMV's --matrix is the rule's input, not here)."""
    problem = FAMILIES[family].args(config, case, counters, rep)
    return f"{problem} --precisions {' '.join(config['precisions'])}".strip()


def batch_args(family: str, config: Mapping, cases, case_files=(), counters: bool = False, rep: int = 0,
               plan_files=()) -> str:
    """The case groups of one job that runs every case of `family` in one process
    (membound.kernels.batch): per case '-- <its problem arguments>', with its case file and its plans
    (SpMV: the matrix of `case_files` and its plans of `plan_files`, in the order of `cases`) first."""
    f = FAMILIES[family]
    files = [(f.case_file, case_files), (f.plan_file, plan_files)]
    return " ".join("-- " + "".join(f"{option} {paths[i]} " for option, paths in files if option)
                    + cli_args(family, config, case, counters, rep) for i, case in enumerate(cases))


def raw_paths(results: str, config: Mapping, matrices, prefix: str = "", repeats: int = 1,
              exists: Callable[[str], bool] | None = None, names=None) -> list[str]:
    """The raw CSVs of the families `names` (default every one) under <results>/raw/<prefix>, one per
    job, so per repetition (counter runs: one). With `exists` (the reference profile's committed
    data): repetitions r > 0 only where it says the file is there, and a per-case family whose file
    of repetition 0 is not there in its older layout, a file per case (of `matrices` for SpMV)."""
    paths = []
    for family in (FAMILIES[n] for n in (names or FAMILIES)):
        older = family.per_case and exists is not None and not exists(family.raw(results, None, 0, prefix))
        for case in cases(family.name, config, matrices) if older else [None]:
            for rep in range(repeats):
                path = family.raw(results, case, rep, prefix)
                if rep == 0 or exists is None or exists(path):
                    paths.append(path)
    return paths
