"""Kernel implementations and their command-line entry points.

One package per kernel family (membound.families lists them), kernels/<family>/, each runnable as
`python -m membound.kernels.<family> --backend {cuda,cpu} --out FILE.csv [--rep R] [--counters] ...`;
the shared lifecycle of a case (check, timing, row, write) is kernels/harness.py.
A family's CUDA sources (*.cu, *.cuh) sit in its folder (the stencils': kernels/stencil/cuda/), each
file name unique under kernels/, and load through CuPy's RawModule (NVRTC), so nothing needs a
separate build step. The cpu backend runs the same algorithms on numpy/scipy.
"""

from __future__ import annotations

import argparse
import re
import sys
from functools import cache
from pathlib import Path

from membound.model.precision import PRECISIONS

SOURCES = Path(__file__).parent


@cache
def source_path(source: str) -> Path:
    """The path of CUDA source or header `source` (a file name) in its family's folder under SOURCES;
    ValueError where none or several have that name."""
    found = list(SOURCES.rglob(source))
    if len(found) != 1:
        raise ValueError(f"{len(found)} CUDA sources named '{source}' under {SOURCES}: need exactly one")
    return found[0]


@cache
def load_module(source: str, options: tuple[str, ...] = ()):
    """The compiled CuPy RawModule of CUDA source `source` (a file name, source_path; compiled once per
    process)."""
    import cupy as cp

    return cp.RawModule(code=source_text(source), options=("--std=c++17", *options))


def source_text(source: str) -> str:
    """Source `source` (source_path) with its local `#include "x.cuh"` lines replaced by the headers'
    text, so that CuPy's kernel cache, keyed on the code, sees a header's edits."""
    text = source_path(source).read_text()
    return re.sub(r'^#include "([\w.]+\.cuh)"$', lambda m: source_text(m.group(1)), text, flags=re.MULTILINE)


def seconds(text: str) -> float:
    """A number of seconds >= 0 (argparse type)."""
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text}: need a number of seconds >= 0")
    return value


def arg_parser(description: str) -> argparse.ArgumentParser:
    """A parser with the arguments every family shares, named as it was run (`python -m <module>`)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    prog = f"python -m {spec.name.removesuffix('.__main__')}" if spec else None
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--backend", choices=["cuda", "cpu"], required=True)
    parser.add_argument("--out", required=True, help="result CSV (written only when every check passed)")
    parser.add_argument("--warmup", type=int, required=True)
    parser.add_argument("--reps", type=int, required=True)
    parser.add_argument("--warmup-s", type=seconds, default=0.0,
                        help="warm up each case for at least this many seconds too (timing.warm_up; default 0)")
    parser.add_argument("--rep", type=int, default=0, help="index of this independent repetition (the rows' rep)")
    parser.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=["fp64"],
                        help="storage precisions to run (membound.model.precision); each impl runs those it has")
    parser.add_argument("--counters", action="store_true",
                        help="counter run: one checked launch per case inside an NVTX range (see measure.launch_tag)")
    return parser
