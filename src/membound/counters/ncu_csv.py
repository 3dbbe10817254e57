"""ncu's CSV (membound.counters.ncu) as one row per profiled launch.

Two CSV layouts are read, after any preamble (==PROF== lines, the program's own output): the raw
page the workflow writes (`--csv --page raw`, one column per metric, a units row), and ncu's
default long layout (`ncu --csv`, one row per metric: Section Name, Metric Name, Metric Unit,
Metric Value), so that a user's own export (captured with --nvtx) can be read. Values in scaled
units (Kbyte, usecond, ...) are converted to bytes, nanoseconds and counts.

Every launch must lie inside a push/pop range named "membound:<kernel>:<impl>:<problem>[:<precision>]"
(measure.launch_tag; no precision part: fp64); the innermost one names it.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd

from membound.model.precision import FORMATS, PRECISIONS
from membound.run.measure import launch_tag

CUDA_CORE_OPS = {name: f.cc_ops for name, f in FORMATS.items() if f.cc_ops}   # precision -> ncu's SASS ops
METRICS = {  # ncu metric -> column of the parsed launches
    "gpu__time_duration.sum": "time_ns",
    **{f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum": op for ops in CUDA_CORE_OPS.values() for op in ops},
    **{f"{f.ncu_tensor}.sum": f.tensor_column for f in FORMATS.values()},
    "sm__inst_executed_pipe_tensor_op_dmma.sum": "dmma_inst",
    "sm__inst_executed_pipe_tensor_op_hmma.sum": "hmma_inst",
    "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum": "hfma2_mma_inst",
    "smsp__inst_executed.sum": "inst_executed",          # warp instructions: the issue-slot roof (analysis/roofs.py)
    "dram__bytes_read.sum": "dram_read",
    "dram__bytes_write.sum": "dram_write",
    "lts__t_bytes.sum": "l2_bytes",
    "l1tex__t_bytes.sum": "l1_bytes",
}
NVTX_FILTER = "regex:membound:.*/"                  # every push/pop range whose name starts membound:
NAME = r"[A-Za-z0-9_.\-]+"
PRECISION = "|".join(PRECISIONS)
TAG = re.compile(rf"membound:({NAME}):({NAME}):({NAME})(?::({PRECISION})(?![A-Za-z0-9_.\-]))?")  # ncu appends :none...


class CounterError(RuntimeError):
    """The profiler is absent, not permitted, or profiled nothing: the message says how to fix it."""


UNITS = {"": 1, "byte": 1, "inst": 1, "ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
         "s": 1e9, "second": 1e9}                        # to bytes, counts and nanoseconds (gpu__time_duration)
PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
LONG = ["Metric Name", "Metric Unit", "Metric Value"]   # ncu's default CSV: one row per metric
RAW_EXPORT = "ncu --import REPORT.ncu-rep --csv --page raw --print-units base"


def _factor(unit: str, metric: str) -> float:
    """The factor from `unit` (ncu's, e.g. 'Mbyte', 'usecond', 'inst') to bytes, counts or ns."""
    unit = unit.strip()
    if unit in UNITS:
        return UNITS[unit]
    if unit[:1] in PREFIX and unit[1:] in UNITS and unit[1:]:
        return PREFIX[unit[0]] * UNITS[unit[1:]]
    raise CounterError(f"ncu CSV: metric {metric} in unit '{unit}', which membound cannot convert; "
                       f"export the report again with `{RAW_EXPORT}`")


def _scaled(values: pd.Series, units: pd.Series, metric: str) -> pd.Series:
    """`values` (ncu's text, thousands separators allowed, 'n/a' empty) times their units' factors."""
    numbers = pd.to_numeric(values.str.replace(",", "", regex=False).replace({"": "nan", "n/a": "nan"}),
                            errors="coerce")
    factors = [_factor(u, metric) for u in units]
    return numbers * factors


def _read_raw(source) -> pd.DataFrame:
    """ncu's CSV (path or text), raw page or long layout, after any preamble: one row per launch,
    one column per metric, values in bytes, counts and ns (as floats)."""
    text = Path(source).read_text() if not isinstance(source, str) or "\n" not in source else source
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise CounterError('ncu CSV: no header line starting "ID", (export with --csv)')
    body = "\n".join(line for line in lines[start:] if line.startswith('"'))
    frame = pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False)
    if set(LONG) <= set(frame.columns):
        ids = [c for c in frame.columns if c not in (*LONG, "Section Name")]
        frame = frame.assign(_value=0.0)
        for metric, rows in frame.groupby("Metric Name"):
            frame.loc[rows.index, "_value"] = _scaled(rows["Metric Value"], rows["Metric Unit"], metric)
        wide = frame.set_index([*ids, "Metric Name"])["_value"].unstack("Metric Name")
        return wide.reset_index().rename_axis(columns=None)
    units = frame[frame["ID"].str.strip() == ""].iloc[:1]
    frame = frame[frame["ID"].str.strip() != ""].copy()
    for metric in set(METRICS) & set(frame.columns):
        unit = units[metric].iloc[0] if len(units) else ""
        frame[metric] = _scaled(frame[metric], pd.Series([unit] * len(frame), index=frame.index), metric)
    return frame


def parse_launches(source) -> pd.DataFrame:
    """One row per profiled launch: id, tag, kernel, impl, problem, precision, kernel_name and METRICS
    columns (NaN where a metric was not collected). A launch outside any membound range is an error."""
    raw = _read_raw(source)
    nvtx = [c for c in raw.columns if "Push/Pop_Range" in c]
    if not nvtx:
        raise CounterError("ncu CSV has no NVTX push/pop column: profile with --nvtx (membound.counters.ncu does)")
    out = pd.DataFrame({"id": raw["ID"].astype(int), "kernel_name": raw["Kernel Name"]}).reset_index(drop=True)
    raw = raw.reset_index(drop=True)
    tags = [TAG.findall(text) for text in raw[nvtx[0]]]
    if not all(tags):
        bad = raw["Kernel Name"][[not t for t in tags]].iloc[0]
        raise CounterError(f"ncu profiled kernel '{bad}' outside any membound:* NVTX range; "
                           f"profile with --nvtx-include '{NVTX_FILTER}'")
    innermost = [t[-1] for t in tags]
    out["tag"] = [launch_tag(k, i, p, precision=prec or "fp64") for k, i, p, prec in innermost]
    out["kernel"], out["impl"], out["problem"], out["precision"] = (
        [k for k, *_ in innermost], [i for _, i, *_ in innermost], [q for _, _, q, _ in innermost],
        [prec or "fp64" for *_, prec in innermost])
    for metric, column in METRICS.items():
        out[column] = raw[metric].astype(float) if metric in raw.columns else float("nan")
    return out
