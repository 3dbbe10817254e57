"""Kernel implementations and their command-line entry points.

One module per kernel family (scale, spmv, stencil), each runnable as
`python -m membound.kernels.<family> --backend {cuda,cpu} --out FILE.csv [--counters] ...`.
CUDA sources (*.cu) sit beside the modules and load through CuPy's RawModule (NVRTC), so nothing
needs a separate build step. The cpu backend runs the same algorithms on numpy/scipy.
"""

from __future__ import annotations

import argparse
import re
import sys
from functools import cache
from pathlib import Path

from membound import measure, outputs

SOURCES = Path(__file__).parent


@cache
def load_module(source: str, options: tuple[str, ...] = ()):
    """The compiled CuPy RawModule of SOURCES/<source> (compiled once per process)."""
    import cupy as cp

    return cp.RawModule(code=source_text(source), options=("--std=c++17", *options))


def source_text(source: str) -> str:
    """SOURCES/<source> with its local `#include "x.cuh"` lines replaced by the headers' text, so that
    CuPy's kernel cache, keyed on the code, sees a header's edits."""
    text = (SOURCES / source).read_text()
    return re.sub(r'^#include "([\w.]+\.cuh)"$', lambda m: source_text(m.group(1)), text, flags=re.MULTILINE)


def arg_parser(description: str) -> argparse.ArgumentParser:
    """A parser with the arguments every family shares."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--backend", choices=["cuda", "cpu"], required=True)
    parser.add_argument("--out", required=True, help="result CSV (written only when every check passed)")
    parser.add_argument("--warmup", type=int, required=True)
    parser.add_argument("--reps", type=int, required=True)
    parser.add_argument("--counters", action="store_true",
                        help="counter run: one checked launch per case inside an NVTX range (see measure.launch_tag)")
    return parser


def write_result(rows: list[dict], out) -> None:
    """Write result rows to `out` (measure.write_rows) atomically, so a failure leaves no partial file."""
    with outputs.atomic(out, ".csv") as tmp:
        measure.write_rows(rows, tmp)


def guarded(main):
    """Run `main()`; turn out-of-memory and failed checks into one-line errors (exit 1)."""
    try:
        main()
    except measure.CheckError as err:
        sys.exit(f"error: {err}")
    except MemoryError as err:
        sys.exit(f"error: out of memory: {err}")
    except Exception as err:  # CuPy's OutOfMemoryError is not a MemoryError subclass
        if type(err).__name__ == "OutOfMemoryError":
            sys.exit(f"error: out of GPU memory: {err}; shrink the problem in config/config.yaml")
        raise
