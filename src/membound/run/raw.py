"""The one reader of raw files (results/<gpu>/raw/: benchmark, counter and original codes' rows), each
checked as it is read: a file its job did not write whole, or that is not a table of its rows, is a
RawError, one line naming the file, what is wrong and the fix; never a frame with damaged numbers.

What is checked: the file against the row count and SHA-256 its job recorded beside it
(outputs.recorded, `<file>.meta.json`; where `recorded` is asked, as rule raw_check asks, a file with no
record is damaged too: one brought from another machine is recorded on purpose, RECORD), that it
ends where a line ends (a file cut mid-line does not), that every quoted field closes and every row
has the header's fields, the schema's columns, numbers where numbers belong, finite ones where a
row needs one, and the text every row names. Rows written before a column existed get its default
(Schema.later; benchmark rows: `later_columns`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from membound.run import outputs
from membound.run.measure import ROW_COLUMNS

FIX = "delete it and run `all` again (Snakemake reruns the job that writes it)"
RECORD = "python tools/record_raw.py"   # records a raw file on purpose (one from another machine)


class RawError(ValueError):
    """A damaged raw file: the message is one line, '<file>: <what is wrong>; <the fix>'."""


@dataclass(frozen=True)
class Schema:
    """What a raw file of one kind holds: `columns` every file has (besides `later` ones), `numbers`
    that are numbers where filled, `finite` ones every row fills with a finite number, `text` every
    row fills, and `later`, the defaults of the columns added after the first files were written."""

    name: str
    columns: tuple[str, ...]
    numbers: tuple[str, ...] = ()
    finite: tuple[str, ...] = ()
    text: tuple[str, ...] = ()
    later: Callable[[pd.DataFrame], pd.DataFrame] = lambda frame: frame


def later_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Benchmark rows written before a column existed, completed: `rep` 0 (one repetition), and
    `t_launch_median_s` = `t_median_s` (those runs timed every launch alone), `slurm_job` empty (not
    recorded), `precision` fp64 and `sparsity` dense (all there was), `device_index`, `device_uuid`,
    `mma`, `note` and `commit` empty (not recorded); an empty `precision` is fp64 too (the DGEMM counter
    check's rows). Other rows unchanged."""
    frame = frame.assign(precision=frame["precision"].astype(object).fillna("fp64") if "precision" in frame else "fp64")
    if "sparsity" not in frame:
        frame = frame.assign(sparsity="dense")
    if "rep" not in frame:
        frame = frame.assign(rep=0)
    if "t_launch_median_s" not in frame and "t_median_s" in frame:
        frame = frame.assign(t_launch_median_s=frame["t_median_s"])
    for column in ("slurm_job", "device_index", "device_uuid", "mma", "note", "commit"):
        if column not in frame:
            frame = frame.assign(**{column: None})
    return frame


LATER = ("precision", "sparsity", "rep", "t_launch_median_s", "slurm_job", "device_index", "device_uuid", "mma", "note",
         "commit")
# Benchmark rows (measure.ROW_COLUMNS), ours and the original codes' (membound.originals.run).
ROWS = Schema(
    "benchmark rows",
    columns=tuple(c for c in ROW_COLUMNS if c not in LATER),
    numbers=("n", "rows", "cols", "nnz", "depth", "steps", "work_items", "mma", "warmup", "reps", "rep", "t_min_s",
             "t_median_s", "t_max_s", "cv", "t_launch_median_s", "value", "rel_err", "sm_clock_mhz", "mem_clock_mhz",
             "l2_bytes"),
    finite=("work_items", "t_min_s", "t_median_s", "t_max_s", "value"),   # the original codes': no warmup, reps
    text=("kernel", "impl", "unit", "role", "precision", "problem", "metric"),
    later=later_columns,
)


def read(path, schema: Schema = ROWS, fix: str = FIX, recorded: bool = False) -> pd.DataFrame:
    """The rows of the raw CSV `path`, checked (see the module; `recorded`: its record required) and
    completed by `schema.later`; RawError '<path>: <what>; <fix>' where it is damaged."""
    try:
        return _checked(Path(path), schema, recorded)
    except _Damage as what:
        raise RawError(f"{path}: {what}; {fix}") from None


def read_all(paths, schema: Schema = ROWS, fix: str = FIX) -> pd.DataFrame:
    """The rows of every raw CSV in `paths` (read), one frame; with none, an empty one of its columns."""
    frames = [read(p, schema, fix) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    if not frames:
        return schema.later(pd.DataFrame(columns=list(schema.columns)))
    return pd.concat(frames, ignore_index=True)


class _Damage(Exception):
    """What is wrong with a file (read adds the file and the fix)."""


def _checked(path: Path, schema: Schema, recorded: bool = False) -> pd.DataFrame:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise _Damage(f"cannot be read ({err.strerror})") from None
    _against_record(path, data, recorded)
    records = _records(data)
    if not records:
        raise _Damage("empty: no header, no rows")
    if not data.endswith(b"\n"):
        raise _Damage(f"cut: its last line ({len(records)}) ends without a newline, mid-row")
    header, rows = records[0], records[1:]
    for i, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise _Damage(f"row {i} has {len(row)} fields, the header {len(header)} (cut or malformed)")
    missing = [c for c in schema.columns if c not in header]
    if missing:
        raise _Damage(f"not {schema.name}: no column {', '.join(missing)}")
    try:
        frame = pd.read_csv(io.BytesIO(data), keep_default_na=False, na_values=[""], low_memory=False)
    except (ValueError, pd.errors.ParserError) as err:
        raise _Damage(f"not a readable CSV ({str(err).splitlines()[0]})") from None
    return _typed(schema.later(frame), schema)


def _records(data: bytes) -> list[list[str]]:
    """The CSV records of `data` (blank lines aside), or _Damage: not text, or a quoted field not closed."""
    try:
        reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""), strict=True)
        return [r for r in reader if r]
    except UnicodeDecodeError as err:
        raise _Damage(f"not UTF-8 text (byte {err.start})") from None
    except csv.Error as err:
        raise _Damage(f"malformed at line {reader.line_num} ({err}; a quoted field cut?)") from None


def _against_record(path: Path, data: bytes, required: bool) -> None:
    """_Damage where the record its job wrote (`<path>.meta.json`) says other rows or another SHA-256,
    or, `required`, where there is none."""
    meta = outputs.meta_path(path)
    if not meta.exists():
        if required:
            raise _Damage(f"no record {meta.name} beside it, so not a file its job wrote (one brought from another "
                          f"machine is used once recorded: {RECORD} {path})")
        return
    try:
        recorded = json.loads(meta.read_text())
        rows, digest = int(recorded["rows"]), str(recorded["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        raise _Damage(f"its record {meta.name} is not a record of rows and SHA-256") from None
    if hashlib.sha256(data).hexdigest() != digest:
        found = max(len(data.splitlines()) - 1, 0)   # lines: no field of a raw row spans two
        raise _Damage(f"not the file its job wrote ({found} rows, {rows} recorded; SHA-256 differs from {meta.name})")


def _typed(frame: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """`frame` with its number columns as numbers; _Damage at the first row that breaks the schema."""
    for column in (c for c in schema.numbers if c in frame):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() & frame[column].notna()
        if bad.any():
            raise _Damage(f"row {_first(bad)}: {column} '{frame[column][bad].iloc[0]}' is not a number")
        frame[column] = values
    for column in (c for c in schema.finite if c in frame):
        bad = ~np.isfinite(frame[column].astype(float))
        if bad.any():
            raise _Damage(f"row {_first(bad)}: {column} is {frame[column][bad].iloc[0]}, a finite number is required")
    for column in (c for c in schema.text if c in frame):
        bad = frame[column].isna()
        if bad.any():
            raise _Damage(f"row {_first(bad)}: {column} is empty")
    return frame


def _first(mask: pd.Series) -> int:
    """The 1-based row number of the first True of `mask`."""
    return int(np.flatnonzero(mask.to_numpy())[0]) + 1
