"""Every case of one family in one process, one raw CSV: `python -m membound.kernels.batch FAMILY
--out FILE [ARGS] -- CASE [-- CASE ...]` runs `python -m membound.kernels.FAMILY ARGS CASE` for each
CASE in turn, in this one process, so that the interpreter, the imports, the CUDA context and the
compiled kernels are paid once per job rather than once per case (docs/performance.md), and writes
every case's rows to FILE.

Each case is its family CLI's own run: its own arguments (its problem), its checks and its rows.
The device memory pool is emptied between cases, so that each starts with the device as a fresh
process would find it. FILE is written once every case has passed its checks (atomically: a failed
case leaves none). Repetitions stay independent: repetition r of a family is one job, a process
that measured no other repetition.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

from membound.kernels.harness import free_device_memory
from membound.run import outputs
from membound.run.measure import guarded


def split(argv: list[str]) -> tuple[list[str], list[list[str]]]:
    """(the arguments every case shares, each case's own) of FAMILY's arguments `argv`, cases after '--'."""
    groups, current = [], []
    for arg in argv:
        if arg == "--":
            groups.append(current)
            current = []
        else:
            current.append(arg)
    groups.append(current)
    return groups[0], [g for g in groups[1:] if g]


def concatenate(parts: list[Path], out) -> None:
    """The CSVs `parts` (one header, the same in each) as one CSV `out`, their lines as written."""
    texts = [p.read_text().splitlines(keepends=True) for p in parts]
    if len({t[0] for t in texts}) > 1:
        raise ValueError(f"the cases' CSVs {[str(p) for p in parts]} have different columns")
    with outputs.recorded(out) as tmp:
        Path(tmp).write_text("".join([texts[0][0], *(line for t in texts for line in t[1:])]))


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m membound.kernels.batch FAMILY --out FILE [ARGS...] -- CASE-ARGS [-- CASE-ARGS ...]"
    family, (shared, cases) = (argv or ["-"])[0], split(argv[1:])
    if family.startswith("-") or "--out" not in shared[:-1]:
        sys.exit(usage)
    at = shared.index("--out")
    out, shared = shared[at + 1], shared[:at] + shared[at + 2:]
    try:
        module = importlib.import_module(f"membound.kernels.{family}")
    except ModuleNotFoundError:
        sys.exit(f"error: no kernel family '{family}' (membound.kernels.{family}): see membound.families")
    with tempfile.TemporaryDirectory() as tmp:
        parts = []
        for i, case in enumerate(cases or [[]]):
            print(f"== {family} {' '.join(case)}", flush=True)
            parts.append(Path(tmp) / f"{i}.csv")
            module.main([*shared, *case, "--out", str(parts[-1])])
            free_device_memory()
        concatenate(parts, out)


if __name__ == "__main__":
    guarded(main)
