"""Several cases of one family in one process: `python -m membound.kernels.batch FAMILY [ARGS] -- CASE
[-- CASE ...]` runs `python -m membound.kernels.FAMILY ARGS CASE` for each CASE in turn, in this one
process, so that the interpreter, the imports, the CUDA context and the compiled kernels are paid
once per job rather than once per case (docs/performance.md).

Each case is its family CLI's own run: its own arguments (its problem and --out), its checks, its
rows and its atomic write. The device memory pool is emptied between cases, so that each starts
with the device as a fresh process would find it. Repetitions stay independent: every case of
repetition r runs in repetition r's job, a process that measured no other repetition of it.
"""

from __future__ import annotations

import importlib
import sys

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


def _free_device_memory() -> None:
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.cuda.Device().synchronize()
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-"):
        sys.exit("usage: python -m membound.kernels.batch FAMILY [ARGS...] -- CASE-ARGS [-- CASE-ARGS ...]")
    family, (shared, cases) = argv[0], split(argv[1:])
    try:
        module = importlib.import_module(f"membound.kernels.{family}")
    except ModuleNotFoundError:
        sys.exit(f"error: no kernel family '{family}' (membound.kernels.{family}): see membound.families")
    for case in cases or [[]]:
        print(f"== {family} {' '.join(case)}", flush=True)
        module.main([*shared, *case])
        _free_device_memory()


if __name__ == "__main__":
    guarded(main)
