"""Figures 3 and 4: SCALE's time breakdown at the largest measured size, fully overlapped (eq. 17,
T = max(T_mem, T_cmp, T_others)) and fully un-overlapped (eq. 18, T = T_mem + T_cmp + T_others).

T_mem = Q / B and T_cmp = W / P from the GPU spec (W = n, Q = 16n, paper 000 Sec. 3.1): P = P_CC on
CUDA cores; on tensor cores A = B(qI) uses 1/max(m, n) of the MMA (Sec. 5.1), so P = P_TC / 8 for
m8n8k4 (equations.tc_scale_ceiling: the 16 executed FLOPs per element at P_TC), P_CC where the spec
has no FP64 matrix unit. T_others is defined, not fitted: the unit's median time at the smallest
measured size, where T_mem and T_cmp are negligible (the fixed cost of a launch: start, ramp-up,
drain). The model's T then stands beside the measured T as a check of eq. 17 and 18.
"""

from __future__ import annotations

import pandas as pd

from membound.model import equations
from membound.plots import common, paired, style

WIDTHS, HEIGHT = (5.2, 5.2), 3.6
CASES = {"overlapped": ("Figure 3: fully overlapped (eq. 17)", equations.overlapped_time),
         "unoverlapped": ("Figure 4: fully un-overlapped (eq. 18)", equations.unoverlapped_time)}
PARTS = {"T_mem_s": ("T_mem", "0.35"), "T_cmp_s": ("T_cmp", "C1"), "T_others_s": ("T_others", "0.75")}
COLUMNS = ["case", "unit", "role", "impl", "n", "W", "Q", "P_FLOPs", "T_mem_s", "T_cmp_s", "T_others_s", "n_others",
           "T_model_s", "T_measured_s", *common.KEEP]


def compute_rate(gpu: dict, unit: str) -> float:
    """FLOP/s of SCALE's useful work on `unit`: P_CC, or on tensor cores P_TC / max(m, n) of the
    spec's MMA shape (paper 000 Sec. 5.1); P_CC where the spec has no FP64 matrix unit."""
    if unit == "tensor_core" and gpu.get("fp64_matrix_TFLOPs"):
        return equations.tc_scale_ceiling(gpu["fp64_matrix_TFLOPs"] * 1e12, tuple(gpu["mma_shape"]))
    return gpu["fp64_vector_TFLOPs"] * 1e12


def data(raw: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """The plotted numbers: per case and measured unit (the paper's two sides, medians over
    repetitions) at the largest size, the model's T_mem, T_cmp and T_others, the equation's total
    T_model and the measured time (seconds)."""
    rows = paired.paper_sides(raw[raw["kernel"] == "scale"])
    n, n_small = int(rows["n"].max()), int(rows["n"].min())
    w, q = equations.scale_wq(n)
    t_mem = q / (gpu["memory_bandwidth_TBs"] * 1e12)
    out = []
    for _, r in rows[rows["n"] == n].sort_values("unit").iterrows():
        p = compute_rate(gpu, r["unit"])
        small = rows[(rows["n"] == n_small) & (rows["unit"] == r["unit"])]
        others = float(small["t_median_s"].iloc[0])
        for case, (_, equation) in CASES.items():
            out.append({"case": case, "unit": r["unit"], "role": r["role"], "impl": r["impl"], "n": n, "W": w, "Q": q,
                        "P_FLOPs": p, "T_mem_s": t_mem, "T_cmp_s": w / p, "T_others_s": others, "n_others": n_small,
                        "T_model_s": equation(t_mem, w / p, others), "T_measured_s": float(r["t_median_s"]),
                        "gpu": gpu["name"], "device": r["device"], "date": r["date"], "source": r["source"]})
    return pd.DataFrame(out, columns=COLUMNS)


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


def figure(data: pd.DataFrame, gpu: dict, caption: str):
    """Figures 3 and 4 of `data` (see `data`) with `caption` at its foot."""
    r = data.iloc[0]
    rate = ("tensor cores: P_TC/max(m, n) of the MMA, Sec. 5.1" if gpu.get("fp64_matrix_TFLOPs")
            else "the spec has no FP64 matrix unit: P_CC on both")
    model_note = (f"Model: T_mem = Q/B, T_cmp = W/P (CUDA cores: P_CC; {rate}); T_others: the measured time at "
                  f"n = {r['n_others']:,}, where T_mem and T_cmp are negligible.")
    return style.single(draw, WIDTHS, HEIGHT, data,
                        f"Figures 3 and 4: time breakdown of SCALE at n = {r['n']:,} on {gpu['name']}",
                        f"{model_note}\n{caption}")
