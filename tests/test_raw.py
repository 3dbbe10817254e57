"""The one reader of raw files (membound.run.raw): every kind of damage to every raw family stops with
one line naming the file, what is wrong and the fix; the committed reference files read whole."""

import re
from pathlib import Path

import pandas as pd
import pytest

from membound.counters import rows as counter_rows
from membound.run import measure, outputs, raw

REPO = Path(__file__).resolve().parents[1]
H100 = REPO / "results" / "reference" / "h100" / "raw"
FIX = "delete it and rerun"
# Each raw family: a committed file of it (its first rows) and its schema; the original codes' rows are
# benchmark rows as membound.originals.run writes them (no cv, no rel_err).
FAMILIES = {
    "scale": (H100 / "scale.csv", raw.ROWS),
    "spmv": (H100 / "spmv.csv", raw.ROWS),
    "gemv": (H100 / "gemv.csv", raw.ROWS),
    "stencil": (H100 / "stencil.csv", raw.ROWS),
    "counters": (H100 / "counters" / "stencil.csv", counter_rows.SCHEMA),
    "counted": (H100 / "counters" / "stencil.rows.csv", raw.ROWS),
    "originals": (H100 / "stencil.csv", raw.ROWS),
}
NUMBER = {"counters": "time_s"}   # a column every row fills with a finite number (rows: value)


def written(tmp_path: Path, family: str, recorded: bool) -> Path:
    """A raw file of `family` as its job writes it (with its record, or as before there were records)."""
    source, _ = FAMILIES[family]
    frame = pd.read_csv(source, keep_default_na=False, na_values=[""]).head(20)
    if family == "originals":
        frame = frame.assign(impl="ebisu_original", cv=None, rel_err=None)
    path = tmp_path / family / source.name
    path.parent.mkdir(parents=True, exist_ok=True)
    outputs.write_csv(frame, path, record=recorded)
    return path


def damage_message(path: Path, family: str) -> str:
    """read's one line for the file at `path`, asserted to name it and the fix."""
    with pytest.raises(raw.RawError) as caught:
        raw.read(path, FAMILIES[family][1], FIX)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: ") and message.endswith(f"; {FIX}")
    return message


def cut_mid_number(data: bytes) -> bytes:
    """`data` cut inside a number of a row in its second half (its last line ends mid-field)."""
    at = next(m.start() + 2 for m in re.finditer(rb"\d\.\d\d", data) if m.start() > len(data) // 2)
    return data[:at]


def cut_in_quotes(data: bytes) -> bytes:
    """`data` cut inside a quoted field of a row in its second half."""
    at = data.find(b',"', len(data) // 2)
    if at < 0:
        pytest.skip("this family's rows quote no field")
    return data[: at + 10]


def extra_field(data: bytes) -> bytes:
    """`data` with one field more in its third row."""
    lines = data.split(b"\n")
    lines[3] += b",extra"
    return b"\n".join(lines)


def drop_rows(data: bytes) -> bytes:
    """`data` without its last rows, cut where a line ends."""
    return data[: data.rfind(b"\n", 0, len(data) // 2) + 1]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_whole_file_reads_with_or_without_its_record(tmp_path, family):
    for recorded in (True, False):
        rows = raw.read(written(tmp_path / str(recorded), family, recorded), FAMILIES[family][1])
        assert len(rows) == 20


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("damage, expected", [
    (cut_mid_number, r"ends without a newline, mid-row"),
    (cut_in_quotes, r"malformed at line \d+ \(.*a quoted field cut\?\)"),
    (extra_field, r"row 3 has (\d+) fields, the header (?!\1)\d+"),
    (lambda d: b"", r"empty: no header, no rows"),
    (lambda d: d[:100] + b"\xff" + d[101:], r"not UTF-8 text"),
])
def test_a_cut_or_malformed_file_is_one_line(tmp_path, family, damage, expected):
    path = written(tmp_path, family, recorded=False)
    path.write_bytes(damage(path.read_bytes()))
    assert re.search(expected, damage_message(path, family))


@pytest.mark.parametrize("family", FAMILIES)
def test_a_renamed_column_is_one_line(tmp_path, family):
    path = written(tmp_path, family, recorded=False)
    column = NUMBER.get(family, "value")
    data = path.read_bytes()
    path.write_bytes(data.replace(column.encode(), b"renamed", 1))
    assert f"no column {column}" in damage_message(path, family)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("value, expected", [
    ("abc", r"row 3: {column} 'abc' is not a number"),
    ("inf", r"row 3: {column} is inf, a finite number is required"),
    ("", r"row 3: {column} is nan, a finite number is required"),
])
def test_a_wrong_type_or_non_finite_number_is_one_line(tmp_path, family, value, expected):
    path = written(tmp_path, family, recorded=False)
    column = NUMBER.get(family, "value")
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype=str)
    frame.loc[2, column] = value
    frame.to_csv(path, index=False)
    assert re.search(expected.format(column=column), damage_message(path, family))


@pytest.mark.parametrize("family", FAMILIES)
def test_an_empty_name_is_one_line(tmp_path, family):
    path = written(tmp_path, family, recorded=False)
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype=str)
    frame.loc[4, "kernel"] = ""
    frame.to_csv(path, index=False)
    assert "row 5: kernel is empty" in damage_message(path, family)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("damage", [cut_mid_number, drop_rows, lambda d: d.replace(b"1", b"2", 1)])
def test_any_change_to_a_recorded_file_is_one_line_with_its_rows(tmp_path, family, damage):
    path = written(tmp_path, family, recorded=True)
    path.write_bytes(damage(path.read_bytes()))
    assert re.search(r"not the file its job wrote \(\d+ rows, 20 recorded; SHA-256 differs from "
                     rf"{path.name}\.meta\.json\)", damage_message(path, family))


def test_rows_dropped_whole_are_found_through_the_record_only(tmp_path):
    """A file cut where a line ends is a table of fewer rows: its record alone tells."""
    path = written(tmp_path, "gemv", recorded=True)
    path.write_bytes(drop_rows(path.read_bytes()))
    assert "20 recorded" in damage_message(path, "gemv")
    outputs.meta_path(path).unlink()
    assert 0 < len(raw.read(path)) < 20


def test_a_broken_record_is_one_line(tmp_path):
    path = written(tmp_path, "scale", recorded=True)
    outputs.meta_path(path).write_text("{\"rows\": 3")
    assert "its record scale.csv.meta.json is not a record" in damage_message(path, "scale")


def test_a_job_that_fails_leaves_neither_file_nor_record(tmp_path):
    with pytest.raises(KeyError):
        measure.write_result([{"kernel": "scale", "nosuch": 1}], tmp_path / "x.csv")
    assert not list(tmp_path.iterdir())


def test_rows_written_before_a_column_read_with_its_default(tmp_path):
    """Old raw rows (no precision, sparsity, rep, ...) get their defaults in the reader, and only there."""
    path = written(tmp_path, "scale", recorded=False)
    frame = pd.read_csv(path).drop(columns=list(raw.LATER))
    frame.to_csv(path, index=False)
    rows = raw.read(path)
    assert (rows["precision"] == "fp64").all() and (rows["sparsity"] == "dense").all() and (rows["rep"] == 0).all()
    assert rows["t_launch_median_s"].equals(rows["t_median_s"])


def test_every_committed_reference_file_reads_whole_against_its_record():
    files = sorted(p for p in (REPO / "results" / "reference").glob("*/raw/**/*.csv") if p.name != "matrices.csv")
    assert len(files) >= 60
    for path in files:
        assert outputs.meta_path(path).exists(), f"{path}: no record (python tools/record_raw.py {path})"
        schema = counter_rows.SCHEMA if path.parent.name == "counters" and ".rows" not in path.name else raw.ROWS
        assert len(raw.read(path, schema)) > 0
