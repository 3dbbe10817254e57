"""Paper 002's fusion sweep (Sec. 3-4, Figure 11) on the measured stencils: each stencil at each
temporal depth t on CUDA cores (temporal blocking) and on tensor cores (kernel fusion), with

- GStencil/s, the median over repetitions of the benchmark rows;
- C, M and I per output point and launch of depth t (t steps), as paper 002's Table 2 counts them:
  the model's (analytical.stencil_model: eq. 8 on CUDA cores, eq. 3 and 11-12 with alpha of
  eq. 9-10 and this workflow's S on tensor cores) beside the counters' (tables/wqi: executed FP64
  FLOPs and DRAM bytes per point and step, times t), with the deviations in %;
- GFLOP/s for the roofline: the measured rate times the model's or the counters' executed work;
- the copy of the stencil's arrays in the same run (analysis/bandwidth.py), GB/s: a measured roof.

The CUDA-core point at depth t is the temporal-blocking row; at t = 1 without one, the unblocked
row (the same kernel at depth 1). Twins and the original codes' rows are left out.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from membound.analysis.bandwidth import copies
from membound.model.analytical import stencil_model
from membound.model.precision import fmt
from membound.originals.rows import split

KEYS = ["problem", "unit", "depth", "precision"]
COLUMNS = ["problem", "shape", "dims", "radius", "K", "depth", "unit", "impl", "role", "precision", "alpha", "S",
           "C_model", "M_model", "I_model", "C_ach", "M_ach", "I_ach", "dC_pct", "dM_pct", "dI_pct", "GStencil_s",
           "GFLOPs_model", "GFLOPs_ach", "copy_GBs", "reps", "status", "gpu"]
NOT_MEASURED = "not measured"


def points(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per (stencil, unit, depth, precision): the median GStencil/s over repetitions and their
    number; on CUDA cores the temporal-blocking row, the unblocked one where the depth has no other."""
    ours = split(raw)[0]                                       # the in-house kernels, not the original codes
    st = ours[(ours["kernel"] == "stencil") & ~ours["impl"].astype(str).str.endswith("_twin")]
    st = st.assign(depth=st["depth"].astype(int), blocked=st["impl"] != "cc_naive")
    med = (st.groupby([*KEYS, "impl", "role", "blocked"], sort=False, as_index=False)
             .agg(GStencil_s=("value", "median"), reps=("value", "size")))
    return (med.sort_values("blocked", ascending=False, kind="stable").drop_duplicates(KEYS)
               .drop(columns="blocked").reset_index(drop=True))


def _pct(achieved: float, model: float) -> float:
    return 100.0 * (achieved - model) / model


def table(raw: pd.DataFrame, wqi: pd.DataFrame | None, stencils: Mapping, gpu: dict) -> pd.DataFrame:
    """The sweep: `points` of the raw rows with the model's and the counters' C, M, I (the wqi table's
    measured main rows, joined by kernel, impl, problem, precision and depth; "not measured" where it
    has none; a wqi table without precisions is fp64) and the copy of the stencil's arrays (SCALE's
    rows among `raw`, at the stencil's points; empty where there is none);
    `stencils` is config["stencil"]["kernels"]."""
    ach = {}
    if wqi is not None:
        main = wqi[(wqi["part"] == "main") & (wqi["kernel"] == "stencil")]
        ach = {(r["impl"], r["problem"], r.get("precision") if isinstance(r.get("precision"), str) else "fp64",
                int(r["depth"])): r for _, r in main.iterrows()}
    scale = raw[raw["kernel"] == "scale"]
    copy = copies(scale)["value"] if len(scale) else pd.Series(dtype=float)
    fields = pd.to_numeric(raw.loc[raw["kernel"] == "stencil", "n"], errors="coerce")
    fields = fields.groupby([raw["problem"], raw["precision"]]).first().dropna().astype("int64")
    out = []
    for _, p in points(raw).iterrows():
        spec, t = stencils[p["problem"]], int(p["depth"])
        m = stencil_model(spec["shape"], spec["dims"], spec["radius"], t, p["unit"], fmt(p["precision"]).bytes)
        row = {**p, **{k: spec[k] for k in ("shape", "dims", "radius")}, "K": m["K"], "alpha": m["alpha"],
               "S": m["S"], "C_model": m["C"], "M_model": m["M"], "I_model": m["I"],
               "GFLOPs_model": p["GStencil_s"] * m["C"] / t, "gpu": gpu["name"],
               "copy_GBs": copy.get((p["precision"], fields.get((p["problem"], p["precision"]))))}
        w = ach.get((p["impl"], p["problem"], p["precision"], t))
        if w is None or w["status"] != "measured":
            row["status"] = w["status"] if w is not None else f"{NOT_MEASURED} (no wqi row)"
        else:
            c, q = w["W_ach_per_item"] * t, w["Q_ach_per_item"] * t
            row.update(C_ach=c, M_ach=q, I_ach=c / q, dC_pct=_pct(c, m["C"]), dM_pct=_pct(q, m["M"]),
                       dI_pct=_pct(c / q, m["I"]), GFLOPs_ach=p["GStencil_s"] * c / t, status="measured")
        out.append(row)
    frame = pd.DataFrame(out).reindex(columns=COLUMNS)
    order = frame["problem"].map({name: i for i, name in enumerate(stencils)})
    return frame.assign(order=order).sort_values(["order", "unit", "depth"], kind="stable", ignore_index=True)[COLUMNS]
