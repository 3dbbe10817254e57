"""What each configured original runs, one job per code, case and repetition, and where its rows go.

config `originals.problems` picks the problems: `ours` (the default) gives every code the in-house
kernels' problems (stencil.domain_2d/3d and stencil.steps, the configured matrices, the SCALE
sizes); `paper` gives each stencil code its domain of paper 000's Table 3 (PAPER). A code's
temporal depth is its own (compiled in, or fixed by its kernels): the rows record the depth it ran.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

from membound.originals.codes import CODES, Problem

# Paper 000 Table 3, per code and stencil: (domain in membound's order, slowest axis first, depth).
# The paper prints EBISU's 3D domain as 234 x 312 x 2560: y 234, x 312 (EBISU's A100 experiment
# setting: 9 and 12 tiles of 26) and z 2560. It ran no LoRAStencil (it took the published figures,
# Sec. 5.3): LoRAStencil gets ConvStencil's domains, the suite it comes with.
_CS2, _CS3, _EB2, _EB3 = (10240, 10240), (1024, 1024, 1024), (9000, 9000), (2560, 234, 312)
PAPER = {
    "convstencil": {"2d5pt": (_CS2, 3), "2d13pt": (_CS2, 1), "2d9pt": (_CS2, 3), "2d49pt": (_CS2, 1),
                    "3d7pt": (_CS3, 3), "3d27pt": (_CS3, 3)},
    "brick": {"3d7pt": ((512, 512, 512), 1), "3d27pt": ((512, 512, 512), 1)},
    "ebisu": {"2d5pt": (_EB2, 3), "2d13pt": (_EB2, 1), "2d9pt": (_EB2, 3), "2d49pt": (_EB2, 1),
              "3d7pt": (_EB3, 3), "3d27pt": (_EB3, 3)},
}
PAPER["lorastencil"] = PAPER["convstencil"]


def configured(config: Mapping) -> list[str]:
    """The codes config `originals` names, in CODES order."""
    return [name for name in CODES if name in config.get("originals", {})]


def executable(config: Mapping, code: str, case: str) -> tuple[str, str]:
    """The executable the user gave for `case` of `code` (absolute: a relative path is taken from the
    working directory, the checkout) and the commit it was built from ('' if not given)."""
    entry = config["originals"][code]
    path = entry["executables"][case] if CODES[code].per_stencil else entry["executable"]
    return os.path.abspath(os.path.expanduser(path)), str(entry.get("commit", ""))


def cases(config: Mapping, code: str, matrices) -> list[str]:
    """The cases of `code`: SpMV the configured matrices, SCALE '2^k' for every configured size,
    stencils those with an executable (in stencil.kernels order)."""
    kernel = CODES[code].kernel
    if kernel == "spmv":
        return [m["name"] for m in matrices]
    if kernel == "scale":
        return [f"2^{k}" for k in range(config["scale"]["log2_min"], config["scale"]["log2_max"] + 1)]
    return [s for s in config["stencil"]["kernels"] if s in config["originals"][code]["executables"]]


def jobs(config: Mapping, matrices) -> list[tuple[str, str]]:
    """(code, case) of every original job (before repetitions); [] without `originals` codes."""
    return [(code, case) for code in configured(config) for case in cases(config, code, matrices)]


def problem(config: Mapping, code: str, case: str) -> Problem:
    """The Problem of `case` of `code` under config `originals.problems` (SpMV: its matrix name)."""
    kernel = CODES[code].kernel
    if kernel == "spmv":
        return Problem(case)
    if kernel == "scale":
        return Problem(case, n=2 ** int(case.removeprefix("2^")), reps=config["scale"]["reps"])
    stencil, st = config["stencil"], config["stencil"]["kernels"][case]
    domain, depth = tuple(stencil[f"domain_{st['dims']}d"]), st["depth"]
    if config["originals"]["problems"] == "paper":
        domain, depth = PAPER[code][case]
    return Problem(case, st["shape"], st["dims"], st["radius"], depth, domain, stencil["steps"])


def cli_args(config: Mapping, code: str, case: str) -> str:
    """The runner's arguments for `case` of `code` (membound.originals.run): the code, its executable
    and commit, and the problem."""
    path, commit = executable(config, code, case)
    p = problem(config, code, case)
    fields = {"shape": p.shape, "dims": p.dims, "radius": p.radius, "depth": p.depth,
              "domain": "x".join(map(str, p.domain)), "steps": p.steps, "n": p.n, "reps": p.reps}
    problem_args = " ".join(f"--{key} {value}" for key, value in fields.items() if value)
    return (f"--code {code} --case {shlex.quote(case)} --executable {shlex.quote(path)} --commit {shlex.quote(commit)} "
            f"{problem_args}").strip()


def raw(results: str, code: str, case: str, rep: int | str = 0, ext: str = "csv") -> str:
    """The raw rows (ext csv) or run record (ext json) of one job: <results>/raw/originals/<code>/<case>.csv
    for repetition 0, <case>.rep<r>.csv for repetition r (a string `rep` is a wildcard pattern)."""
    suffix = rep if isinstance(rep, str) else (f".rep{rep}" if rep else "")
    return f"{results}/raw/originals/{code}/{case}{suffix}.{ext}"
