"""The one place that writes result files: every file goes through a temporary file in its own
folder and an os.replace, so a failed job never leaves a partial output behind; it gets the mode
that the umask gives a new file (mkstemp alone would leave it readable by its owner only)."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pandas as pd


@contextmanager
def atomic(path, suffix: str = ""):
    """Yield a temporary path beside `path`; on success it replaces `path`, on failure it is removed."""
    folder = Path(path).resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=suffix or Path(path).suffix, dir=folder)
    os.fchmod(fd, 0o666 & ~umask())
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


@contextmanager
def recorded(path):
    """`atomic` for a raw CSV, which also records beside it, in `<path>.meta.json` (meta_path), the
    rows and SHA-256 of what it wrote, so that its reader (membound.run.raw) finds a file cut or
    changed since. The record is written first: a job killed between the two leaves a record that
    does not match the file, never a damaged file that passes."""
    with atomic(path, ".csv") as tmp:
        yield tmp
        record(tmp, path)


def record(source, path) -> None:
    """Write, as the record of the raw CSV `path`, the rows (CSV records after the header) and the
    SHA-256 of the file `source` (`path` itself, or the temporary file that is to replace it)."""
    with open(source, newline="") as fh:
        rows = sum(1 for line in csv.reader(fh) if line) - 1
    write_text(json.dumps({"rows": max(rows, 0), "sha256": sha256(source)}) + "\n", meta_path(path))


def meta_path(path) -> Path:
    """The record `recorded` writes beside the raw file `path`."""
    return Path(f"{path}.meta.json")


def umask() -> int:
    """The process's umask (read by setting it and back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text(text: str, path) -> None:
    """Write `text` to `path` atomically."""
    with atomic(path) as tmp:
        Path(tmp).write_text(text)


def write_csv(frame: pd.DataFrame, path, record: bool = False) -> None:
    """Write `frame` to `path` as CSV (no index) atomically; `record`: a raw file, its rows and
    SHA-256 recorded beside it (`recorded`)."""
    with (recorded if record else atomic)(path) as tmp:
        frame.to_csv(tmp, index=False)


def markdown(frame: pd.DataFrame, title: str, legend: str = "", level: int = 1) -> str:
    """`frame` as a Markdown table under a `# title` heading (`level` #s), with an optional legend paragraph."""
    table = frame.to_markdown(index=False, floatfmt=".4g").replace(" nan ", " n/a ")
    return f"{'#' * level} {title}\n\n" + (f"{legend}\n\n" if legend else "") + f"{table}\n"


def write_table(frame: pd.DataFrame, csv, md, title: str, legend: str = "") -> None:
    """Write `frame` as CSV and as a Markdown table (see `markdown`), each atomically."""
    write_csv(frame, csv)
    write_text(markdown(frame, title, legend), md)


# No creation date in a PDF: the same rows render the same bytes (`python -m membound.ae verify`).
REPRODUCIBLE = {"pdf": {"CreationDate": None}, "png": {}}


def save_figure(fig, pdf, png, dpi: int = 150) -> None:
    """Write a matplotlib figure as PDF and PNG, each atomically and byte-reproducibly, and close it."""
    import matplotlib.pyplot as plt

    for path, fmt in ((pdf, "pdf"), (png, "png")):
        with atomic(path, f".{fmt}") as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi, metadata=REPRODUCIBLE[fmt])
    plt.close(fig)


def sha256(path) -> str:
    """The SHA-256 of the file at `path`, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
