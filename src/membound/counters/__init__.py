"""Hardware counters: what the GPU actually did (FLOPs, bytes, time) per measured kernel launch.

ncu.py runs a benchmark CLI under Nsight Compute and parses its CSV; rocprof.py writes rocprof's
counter input and parses rocprof v1 and rocprofv3 CSVs; dgemm.py is the DGEMM of known size that
checks what one unit of the FP64 tensor-core counter is worth.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd


def write_csv(frame: pd.DataFrame, path) -> None:
    """Write `frame` to `path` through a temp file in the same folder, so a failure leaves no partial file."""
    folder = Path(path).resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".csv", dir=folder)
    os.close(fd)
    try:
        frame.to_csv(tmp, index=False)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
