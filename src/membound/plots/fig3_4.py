"""Figures 3 and 4: SCALE's time breakdown at the largest measured size, fully overlapped (eq. 17,
T = max(T_mem, T_cmp, T_others)) and fully un-overlapped (eq. 18, T = T_mem + T_cmp + T_others), a
row per precision.

T_mem = Q / B and T_cmp = W / P from the GPU spec (W = n, Q = 2 D n, paper 000 Sec. 3.1, D the
precision's element size): P = P_CC of the precision on CUDA cores; on tensor cores A = B(qI) uses
equations.scale_mma_fraction of the MMA of the precision's shape (Sec. 5.1), so P = P_TC / 8 for m8n8k4
and m16n8k8, P_TC / 16 for m16n8k16 (equations.tc_scale_ceiling), P_CC where the spec has no tensor
cores in the precision. T_others is defined, not fitted: the unit's median time at the smallest
measured size, where T_mem and T_cmp are negligible (the fixed cost of a launch: start, ramp-up,
drain). The model's T then stands beside the measured T as a check of eq. 17 and 18.
"""

from __future__ import annotations

import pandas as pd

from membound.model import equations, peaks
from membound.model.precision import PRECISIONS
from membound.plots import common, paired, style
from membound.run import measure

WIDTHS, HEIGHT = (5.2, 5.2), 3.6
CASES = {"overlapped": ("Figure 3: fully overlapped (eq. 17)", equations.overlapped_time),
         "unoverlapped": ("Figure 4: fully un-overlapped (eq. 18)", equations.unoverlapped_time)}
PARTS = {"T_mem_s": ("T_mem", "0.35"), "T_cmp_s": ("T_cmp", "C1"), "T_others_s": ("T_others", "0.75")}
COLUMNS = ["case", "unit", "role", "impl", "n", "W", "Q", "P_FLOPs", "T_mem_s", "T_cmp_s", "T_others_s", "n_others",
           "T_model_s", "T_measured_s", *common.KEEP]


def compute_rate(gpu: dict, unit: str, precision: str = "fp64") -> float:
    """FLOP/s of SCALE's useful work on `unit` in `precision`: P_CC, or on tensor cores P_TC times
    the fraction of the precision's MMA shape that SCALE uses (paper 000 Sec. 5.1); P_CC where the
    spec has no tensor cores in the precision (NaN without a CUDA-core peak)."""
    p = peaks.at(gpu, precision)
    if unit == "tensor_core" and p.has_tensor_cores:
        return equations.tc_scale_ceiling(p.tensor_core * 1e12, p.mma_shape)
    return p.cuda_core * 1e12 if p.cuda_core else float("nan")


def data(raw: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """The plotted numbers: per precision, case and measured unit (the paper's two sides, medians
    over repetitions) at the precision's largest size, the model's T_mem, T_cmp and T_others, the
    equation's total T_model and the measured time (seconds)."""
    sides = paired.paper_sides(measure.sweep_rows(raw[raw["kernel"] == "scale"]))
    out = [row for precision, rows in sides.groupby("precision", sort=False) for row in _one(rows, gpu, precision)]
    return common.by_precision_order(pd.DataFrame(out, columns=COLUMNS), []) if out else pd.DataFrame(columns=COLUMNS)


def _one(rows: pd.DataFrame, gpu: dict, precision: str) -> list[dict]:
    n, n_small = int(rows["n"].max()), int(rows["n"].min())
    w, q = equations.scale_wq(n, peaks.at(gpu, precision).element_bytes)
    t_mem = q / (gpu["memory_bandwidth_TBs"] * 1e12)
    out = []
    for _, r in rows[rows["n"] == n].sort_values("unit").iterrows():
        p = compute_rate(gpu, r["unit"], precision)
        small = rows[(rows["n"] == n_small) & (rows["unit"] == r["unit"])]
        others = float(small["t_median_s"].iloc[0])
        for case, (_, equation) in CASES.items():
            out.append({"case": case, "unit": r["unit"], "role": r["role"], "impl": r["impl"], "n": n, "W": w, "Q": q,
                        "P_FLOPs": p, "T_mem_s": t_mem, "T_cmp_s": w / p, "T_others_s": others, "n_others": n_small,
                        "T_model_s": equation(t_mem, w / p, others), "T_measured_s": float(r["t_median_s"]),
                        "precision": precision, "gpu": gpu["name"], "device": r["device"], "date": r["date"],
                        "source": r["source"]})
    return out


def draw(axes, data: pd.DataFrame) -> None:
    """Draw Figure 3 (overlapped: the parts side by side from 0) and Figure 4 (un-overlapped: the
    parts one after another) into the two panels of `axes`."""
    scale, unit = (1e3, "ms") if data["T_measured_s"].max() >= 1e-2 else (1e6, "µs")
    for ax, (case, (title, _)) in zip(axes, CASES.items()):
        rows = data[data["case"] == case].reset_index(drop=True)
        for y, r in rows.iterrows():  # bars in y-0.4 .. y+0.15, the equation under them at y+0.3
            start = 0.0
            for k, (col, (label, color)) in enumerate(PARTS.items()):
                if case == "overlapped":
                    ax.barh(y - 0.3 + k * 0.18, r[col] * scale, 0.18, color=color, label=label if y == 0 else None)
                else:
                    ax.barh(y - 0.12, r[col] * scale, 0.54, left=start, color=color, label=label if y == 0 else None)
                    start += r[col] * scale
            ax.plot(r["T_measured_s"] * scale, y - 0.12, "kD", ms=5, label="measured T" if y == 0 else None)
            parts = [f"{r[col] * scale:.4g}" for col in PARTS]
            formula = f"max({', '.join(parts)})" if case == "overlapped" else " + ".join(parts)
            ax.text(0.01, y + 0.3, f"T = {formula} = {r['T_model_s'] * scale:.4g} {unit}; measured "
                    f"{r['T_measured_s'] * scale:.4g}", fontsize=7, va="center", transform=ax.get_yaxis_transform())
        ax.set_yticks([y - 0.12 for y in range(len(rows))], [style.UNIT_LABEL[u] for u in rows["unit"]])
        ax.set(xlabel=f"time ({unit})", ylim=(len(rows) - 0.5, -0.55))
        ax.set_xlim(0, max(rows["T_measured_s"].max(), rows["T_model_s"].max()) * scale * 1.1)
        ax.set_title(title, pad=18)
        ax.grid(axis="y", visible=False)
        style.legend_above(ax, 4)


def figure(data: pd.DataFrame, gpu: dict, caption: str, precisions=PRECISIONS):
    """Figures 3 and 4 of `data` (see `data`), a row per precision, with `caption` at its foot."""
    sizes = "; ".join(f"{p}: n = {g['n'].iloc[0]:,}, T_others at n = {g['n_others'].iloc[0]:,}"
                      for p, g in data.groupby("precision", sort=False))
    model_note = ("Model: T_mem = Q/B, T_cmp = W/P (CUDA cores: P_CC; tensor cores: P_TC times the fraction of the "
                  "precision's MMA that SCALE uses, Sec. 5.1, or P_CC without tensor cores in it); T_others: the "
                  f"measured time at the smallest n, where T_mem and T_cmp are negligible ({sizes or 'no rows'}).")
    return style.facets(draw, WIDTHS, HEIGHT, data, f"Figures 3 and 4: time breakdown of SCALE at the largest n on "
                        f"{gpu['name']}", f"{model_note}\n{caption}", precisions, lambda p: peaks.no_rows(gpu, p, "SCALE"))
