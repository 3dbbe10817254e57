"""Achieved against analytical W, Q, I (as paper 002's Table 2): one row per benchmark row (kernel,
implementation, problem, precision), joined to the counter rows of its launch tag (measure.launch_tag),
plus one row per helper kernel.

Achieved work is compared with the work the unit executes by the model (W_exec: tensor-core
padding included, paper 002 eq. 3), traffic with the compulsory DRAM traffic Q; I_exec = W_exec / Q.
The model's side takes the row's precision (its element size D and MMA shape); the achieved FLOPs
count every precision the counters saw (an fp16 kernel accumulating in fp32 does both).
Per-item columns divide by the row's work items (element, nnz, or point and step).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from membound.families import analytical_row
from membound.model.precision import fmt
from membound.run import measure, outputs, raw

NOT_MEASURED = "not measured"
PACKED_INSTRUCTIONS = "measured; W counts fp16 instructions, not FLOPs (docs/counters.md)"
COLUMNS = ["kernel", "impl", "unit", "problem", "precision", "depth", "part", "kernel_name", "launches", "work_items",
           "W", "W_exec", "Q", "I", "I_exec", "W_ach", "Q_ach", "I_ach", "dW_pct", "dQ_pct", "dI_pct",
           "W_exec_per_item", "Q_per_item", "W_ach_per_item", "Q_ach_per_item",
           "Q_l2_ach", "Q_l1_ach", "I_l2_ach", "time_s", "GFLOPs_ach", "flops_tensor", "dmma_inst", "hmma_inst",
           "tensor_flops_from", "clock_control", "cache_control", "status"]
MD_COLUMNS = ["kernel", "impl", "problem", "precision", "depth", "part", "W_exec_per_item", "Q_per_item", "I_exec",
              "W_ach_per_item", "Q_ach_per_item", "I_ach", "dW_pct", "dQ_pct", "dI_pct", "status"]


def read_rows(paths) -> pd.DataFrame:
    """Benchmark rows (measure.ROW_COLUMNS) of every CSV in `paths`, checked and completed by
    membound.run.raw (rows from before a column: fp64, dense, rep 0), with their launch tag."""
    rows = raw.read_all(paths)
    rows["tag"] = measure.row_tags(rows)
    return rows


def _pct(achieved, model):
    return 100.0 * (achieved - model) / model if model and np.isfinite(model) else np.nan


def _achieved(c: pd.Series, items: float, a: dict) -> dict:
    w, q = float(c["flops"]), float(c["dram_bytes"])
    out = {"part": c["part"], "kernel_name": c["kernel_name"], "launches": int(c["launches"]),
           "W_ach": w, "Q_ach": q, "I_ach": w / q if q else np.nan,
           "W_ach_per_item": w / items, "Q_ach_per_item": q / items,
           "Q_l2_ach": c["l2_bytes"], "Q_l1_ach": c["l1_bytes"],
           "I_l2_ach": w / c["l2_bytes"] if c["l2_bytes"] else np.nan, "time_s": c["time_s"],
           "GFLOPs_ach": w / c["time_s"] / 1e9 if c["time_s"] else np.nan,
           "flops_tensor": c["flops_tensor"], "dmma_inst": c["dmma_inst"], "hmma_inst": c.get("hmma_inst"),
           "tensor_flops_from": c["tensor_flops_from"], "clock_control": c["clock_control"],
           "cache_control": c["cache_control"], "status": "measured"}
    f = fmt(c.get("precision") or "fp64")
    if f.bytes == 2 and np.nansum([c.get(op, np.nan) for op in f.cc_ops]) > 0:
        out["status"] = PACKED_INSTRUCTIONS   # 16-bit ops: a packed op counts once, a conversion as an add
    if c["part"] == "main" and a:
        out.update(dW_pct=_pct(w, a["W_exec"]), dQ_pct=_pct(q, a["Q"]), dI_pct=_pct(out["I_ach"], a["I_exec"]))
    return out


def table(bench: pd.DataFrame, counters: pd.DataFrame | None, gpu: dict, stencils, why_not: str = "",
          counted: pd.DataFrame | None = None) -> pd.DataFrame:
    """wqi rows: each benchmark row with analytical and achieved W, Q, I (the achieved side "not
    measured" where `counters` is None or has no row of its tag), then its helper kernels' rows. One
    row per case (kernel, impl, problem, precision, depth): its first repetition, since the counters run
    each case once. `counted`: the counter run's own rows (read_rows); where one has the tag, the model
    is taken for what the counters measured (a stencil's counter run times fewer steps than its benchmark)."""
    if "rep" in bench:
        bench = bench.sort_values("rep", kind="stable").drop_duplicates(["kernel", "impl", "problem", "precision",
                                                                          "depth"])
    counters = measure.completed_tags(counters, bench)
    measured = {} if counted is None else {r["tag"]: r for r in counted.to_dict("records")}
    out = []
    for _, bench_row in bench.iterrows():
        row = measured.get(bench_row["tag"], bench_row)
        a = analytical_row(row, gpu, stencils)
        a["I_exec"] = a["W_exec"] / a["Q"]
        items = float(row["work_items"])
        base = {"kernel": row["kernel"], "impl": row["impl"], "unit": row["unit"], "problem": row["problem"],
                "precision": row["precision"], "depth": row["depth"],
                "work_items": items, **{k: a[k] for k in ("W", "W_exec", "Q", "I", "I_exec")},
                "W_exec_per_item": a["W_exec_per_item"], "Q_per_item": a["Q_per_item"]}
        mine = counters[counters["tag"] == row["tag"]] if counters is not None else counters
        if mine is None or mine.empty:
            reason = why_not or "no counter run of this case: config ncu.scale_log2_*, ncu.stencil_sweep"
            out.append({**base, "part": "main", "status": f"{NOT_MEASURED} ({reason})"})
            continue
        for _, c in mine.sort_values("part", key=lambda s: s != "main").iterrows():
            if c["part"] == "main":
                out.append({**base, **_achieved(c, items, a)})
            else:   # a helper kernel: its own row, no analytical side
                out.append({**{k: base[k] for k in ("kernel", "impl", "unit", "problem", "precision", "depth",
                                                    "work_items")},
                            **_achieved(c, items, {})})
    return pd.DataFrame(out).reindex(columns=COLUMNS)


def markdown(frame: pd.DataFrame, title: str) -> str:
    """The per-item columns of `frame` as a Markdown table; achieved cells say "not measured"."""
    md = frame[MD_COLUMNS].copy()
    for col in ("W_ach_per_item", "Q_ach_per_item", "I_ach"):
        md[col] = [NOT_MEASURED if s.startswith(NOT_MEASURED) else v for s, v in zip(md["status"], md[col])]
    md["status"] = [s.split(" (")[0] if s.startswith(NOT_MEASURED) else s for s in md["status"]]
    body = md.to_markdown(index=False, floatfmt=".4g").replace(" nan ", " n/a ")
    return (f"# {title}\n\nPer work item (element for SCALE, nnz for SpMV, point and step for stencils). "
            "Model: W_exec (work the unit executes), Q (compulsory DRAM bytes), I_exec = W_exec / Q. "
            "Achieved: FLOPs (every precision, CUDA and tensor cores) and DRAM bytes from the counters; d*: "
            "deviation in %.\n\n" + body + "\n")


def write(frame: pd.DataFrame, csv: str, md: str, title: str) -> None:
    """Write the CSV and the Markdown table, each atomically."""
    outputs.write_csv(frame, csv)
    outputs.write_text(markdown(frame, title), md)
