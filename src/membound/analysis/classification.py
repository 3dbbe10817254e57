"""Paper 002's classification (Sec. 4.1-4.2, Figure 10): the four scenarios of eq. 13-19 for stencils
over shape x radius x depth on each GPU spec and precision, from the model alone, and for each measured
configuration whether its prediction held.

A configuration (shape, dims, radius, depth t) on a GPU: I_CU = tK/D (eq. 8) against the CUDA-core
balance P_CU/B and I_TC = t (alpha/S) K/D (eq. 11) against the tensor-core balance P_TC/B give the
scenario (equations.scenario); eq. 13 gives the speedup P_TC,actual / P_CU,actual, whose side of 1 is the
prediction: tensor cores faster (scenario 3; scenario 4 inside the sweet spot of eq. 19), CUDA cores
faster (scenario 2; scenario 4 outside it) or equal (scenario 1, eq. 14). S is that of this
workflow's tensor-core transformation in each precision's MMA shape (geometry.tc_sparsity,
STENCIL_MMA: m8n8k4, TF32 m16n8k8, f16 m16n8k16), so the grid covers each spec and precision whose
MMA has that shape. In fp16 P_CU is the spec's fp16 CUDA-core peak (half2), which the stencil kernels,
summing in fp32, do not reach: the fp32 peak bounds them (docs/kernels_stencil.md).

A measured configuration is a stencil at depth t timed with temporal blocking (CUDA cores; at t = 1
without it, the unblocked kernel) and kernel fusion (tensor cores) in the same repetitions. Its
speedup t_CC/t_TC: the geometric mean over repetitions with its 95% t-interval, decided
against 1 on the predicted side with config claims.margin (the claims' `interval` and `decide`,
analysis/claims/verdicts.py). `held`: yes (SUPPORTED;
for a predicted tie, LEVEL), no (CONTRADICTED, or a tie predicted and the interval off 1), level (a
winner predicted, the interval within the margin of 1), inconclusive; n/a from one repetition or
without tensor cores. The rule's table and figure replace `held` by the C5 claim's own decision
(`with_readings`: eq. 14 as stated, with the run's noise band and the model's uncertainty) and add
`held_summary` (paper 002's summary reading), so that they count what claims.json counts.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from membound.analysis.claims import verdicts as stats
from membound.analysis.claims.pairs import TWIN, with_rep
from membound.model import equations
from membound.model import peaks as spec_peaks
from membound.model.analytical import stencil_model
from membound.model.geometry import STENCIL_MMA
from membound.model.precision import FORMATS, PRECISIONS, fmt
from membound.originals.rows import split
from membound.run import outputs

SPARSE_PRECISIONS = tuple(p for p in PRECISIONS if FORMATS[p].mma_sp)   # with mma.sp: TF32 and f16 (no FP64)
GRID = {2: {"radii": (1, 2, 3), "depths": range(1, 9)}, 3: {"radii": (1, 2), "depths": range(1, 5)}}
SHAPES = ("star", "box")
TC_FASTER, CC_FASTER, EQUAL = "tensor cores faster", "CUDA cores faster", "equal"
HELD = ("yes", "no", "level", "inconclusive", "n/a")
GRID_COLUMNS = ["gpu", "spec", "precision", "sparsity", "shape",
                "dims", "radius", "depth", "K", "alpha", "S", "I_CU", "I_TC",
                "balance_CU", "balance_TC", "scenario", "speedup_model", "sweet_spot", "prediction"]
VERDICT_COLUMNS = ["problem", "shape", "dims", "radius", "depth", "precision", "sparsity",
                   "cc_impl", "scenario", "I_CU", "I_TC",
                   "alpha", "S", "speedup_model", "prediction", "speedup", "ci_low", "ci_high", "reps", "verdict",
                   "held"]


def peaks(gpu: dict, precision: str = "fp64") -> tuple[float | None, float | None]:
    """(P_CU, P_TC) of `gpu` in `precision`, TFLOP/s (None where the spec has none: no tensor cores
    in that precision), through the spec's one accessor (membound.model.peaks)."""
    p = spec_peaks.at(gpu, precision)
    return p.cuda_core, p.tensor_core


def precisions(gpu: dict) -> list[str]:
    """The precisions the classification covers on `gpu`: those with both peaks whose MMA is this
    workflow's tensor-core stencil layout in that precision (geometry.STENCIL_MMA: fp64 m8n8k4, fp32
    TF32 m16n8k8, fp16 and bf16 m16n8k16; bf16 with fp16's peaks where the spec lists none, peaks.covered)."""
    return [p for p in STENCIL_MMA if p in spec_peaks.covered(gpu) and all(peaks(gpu, p))
            and spec_peaks.at(gpu, p).mma_shape == STENCIL_MMA[p]]


def variants(gpu: dict) -> list[tuple[str, str]]:
    """(precision, sparsity) the classification covers on `gpu`: every precision of `precisions` dense,
    and "2:4" (sparse tensor cores, mma.sp: paper 002 Sec. 4.3, eq. 20) in each precision whose spec
    gives a sparse tensor-core peak beside its CUDA-core one."""
    sparse = [p for p in SPARSE_PRECISIONS if p in spec_peaks.covered(gpu) and spec_peaks.at(gpu, p).sparse_tensor_core
              and spec_peaks.at(gpu, p).cuda_core]
    return [(p, "dense") for p in precisions(gpu)] + [(p, "2:4") for p in sparse]


def point(gpu: dict, precision: str, shape: str, dims: int, radius: int, t: int, sparsity: str = "dense") -> dict:
    """One configuration on `gpu`: K, alpha, S, both intensities and balances, the scenario, eq. 13's
    speedup, the sweet spot of eq. 19 and the prediction; sparsity "2:4": the sparse tensor cores'
    peak and the S of the 2:4 transform (membound.model.sparse24), eq. 20 in place of eq. 11-12."""
    cu, tc = (p * 1e12 for p in peaks(gpu, precision))
    if sparsity == "2:4":
        tc = spec_peaks.at(gpu, precision).sparse_tensor_core * 1e12
    bw, d = gpu["memory_bandwidth_TBs"] * 1e12, fmt(precision).bytes
    m_tc = stencil_model(shape, dims, radius, t, "tensor_core", d, precision, sparsity)
    k, alpha, s = m_tc["K"], m_tc["alpha"], m_tc["S"]
    speedup = equations.stencil_tc_speedup(cu, tc, bw, k, t, alpha, s, d)
    return {"shape": shape, "dims": dims, "radius": radius, "depth": t, "K": k, "alpha": alpha, "S": s,
            "I_CU": stencil_model(shape, dims, radius, t, "cuda_core", d, precision)["I"], "I_TC": m_tc["I"],
            "balance_CU": equations.machine_balance(cu, bw), "balance_TC": equations.machine_balance(tc, bw),
            "scenario": equations.scenario(cu, tc, bw, k, t, alpha, s, d), "speedup_model": speedup,
            "sweet_spot": equations.sweet_spot(cu, tc, alpha, s), "prediction": prediction(speedup)}


def prediction(speedup: float, tie: float = 1e-9) -> str:
    """The side of 1 of eq. 13's modelled speedup."""
    return TC_FASTER if speedup > 1 + tie else CC_FASTER if speedup < 1 - tie else EQUAL


def grid(specs: Mapping[str, dict]) -> pd.DataFrame:
    """Every configuration of GRID on every spec (name -> spec) with a matrix unit of this workflow's
    MMA shape, in each precision it gives peaks for."""
    rows = []
    for name, gpu in specs.items():
        for p, sp in variants(gpu):
            rows += [{"gpu": gpu["name"], "spec": name, "precision": p, "sparsity": sp,
                      **point(gpu, p, shape, dims, r, t, sp)}
                     for dims, g in GRID.items() for r in g["radii"] for shape in SHAPES for t in g["depths"]]
    return pd.DataFrame(rows, columns=GRID_COLUMNS)


def pairs(raw: pd.DataFrame) -> pd.DataFrame:
    """Per stencil, depth, precision and repetition timed on both units: the CUDA-core impl and t_CC
    (temporal blocking; the unblocked kernel at t = 1 without it), t_TC and the speedup t_CC/t_TC."""
    ours = split(raw)[0]                                       # the in-house kernels, not the original codes
    st = ours[(ours["kernel"] == "stencil") & ~ours["impl"].astype(str).str.endswith(TWIN)]
    st = with_rep(st).assign(depth=st["depth"].astype(int))
    st = st.assign(sparsity=st["sparsity"].astype(object).fillna("dense") if "sparsity" in st else "dense")
    keys = ["problem", "depth", "precision", "rep"]
    cc = (st[st["unit"] == "cuda_core"].assign(blocked=st["impl"] != "cc_naive")
          .sort_values("blocked", ascending=False, kind="stable").drop_duplicates(keys))
    tc = st[st["unit"] == "tensor_core"].drop_duplicates(keys + ["sparsity"])
    both = cc.drop(columns="sparsity").merge(tc[keys + ["sparsity", "t_median_s"]], on=keys, suffixes=("_cc", "_tc"))
    return pd.DataFrame({**{k: both[k] for k in keys}, "sparsity": both["sparsity"], "kernel": "stencil",
                         "cc_impl": both["impl"],
                         "t_cc_s": both["t_median_s_cc"], "t_tc_s": both["t_median_s_tc"],
                         "speedup": both["t_median_s_cc"] / both["t_median_s_tc"]})


def held(predicted: str, verdict: str) -> str:
    """Whether a prediction held, from its verdict (module docstring)."""
    if verdict not in stats.WORSE:
        return "n/a"
    if predicted == EQUAL:
        return {stats.LEVEL: "yes", stats.INCONCLUSIVE: "inconclusive"}.get(verdict, "no")
    return {stats.SUPPORTED: "yes", stats.CONTRADICTED: "no", stats.LEVEL: "level",
            stats.INCONCLUSIVE: "inconclusive"}[verdict]


def verdicts(raw: pd.DataFrame, gpu: dict, stencils: Mapping, margin: float) -> pd.DataFrame:
    """One row per measured configuration (`pairs`) of the stencils of `stencils` (config
    stencil.kernels) on `gpu`: the model's side (`point`), the measured speedup with its interval,
    the verdict and whether the prediction held."""
    out = []
    for (name, t, p, sp), g in pairs(raw).groupby(["problem", "depth", "precision", "sparsity"], sort=False):
        spec = stencils[name]
        est = stats.interval(g, "speedup")
        row = {"problem": name, "precision": p, "sparsity": sp, "cc_impl": g["cc_impl"].iloc[0],
               "speedup": est["estimate"],
               "reps": len(g), **{k: spec[k] for k in ("shape", "dims", "radius")}, "depth": t}
        if (p, sp) in variants(gpu):
            row.update(point(gpu, p, spec["shape"], spec["dims"], spec["radius"], t, sp))
            side = "below" if row["prediction"] == CC_FASTER else "above"
            verdict = stats.decide(est["ci_low"], est["ci_high"], 1.0, margin, side) if len(g) > 1 else ""
        else:
            row["prediction"], verdict = "n/a (no tensor-core peak)", stats.NOT_APPLICABLE
        out.append({**row, "ci_low": est["ci_low"] if len(g) > 1 else float("nan"),
                    "ci_high": est["ci_high"] if len(g) > 1 else float("nan"),
                    "verdict": verdict, "held": held(row["prediction"], verdict)})
    return pd.DataFrame(out, columns=VERDICT_COLUMNS)


def with_readings(table: pd.DataFrame, claims: list[dict]) -> pd.DataFrame:
    """`table` (verdicts) with `held` and `held_summary` of each configuration as the claims decided
    them (claims.json's records "C5" and "C5 summary", analysis/claims/c5_scenarios.py); n/a where a
    reading made no prediction or has no case."""
    keys = ["problem", "depth", "precision", "sparsity"]
    out = table.drop(columns="held")
    for cid, column in (("C5", "held"), ("C5 summary", "held_summary")):
        cases = pd.DataFrame([{**case, "precision": c["precision"]} for c in claims if c["id"] == cid
                              for case in c.get("cases") or []], columns=[*keys, "held"])
        out = out.merge(cases.astype({"depth": int}).rename(columns={"held": column}), on=keys, how="left")
        out[column] = out[column].fillna("n/a")
    return out[[*VERDICT_COLUMNS, "held_summary"]]


def write_table(frame: pd.DataFrame, csv, md, gpu_name: str, margin: float) -> None:
    """The verdict table as CSV and Markdown with its legend."""
    counts = lambda column: ", ".join(f"{k} {v}" for k, v in frame[column].value_counts().reindex(HELD).dropna()  # noqa: E731
                                      .astype(int).items())
    legend = ("Per measured configuration (stencil, depth t): paper 002's scenario (eq. 14-19) from the spec's "
              "peaks and bandwidth, I_CU (eq. 8) and I_TC (eq. 11; alpha eq. 9-10, S of this workflow's "
              "transformation), eq. 13's modelled speedup P_TC,actual/P_CU,actual and its prediction, against "
              "the measured speedup t_CC/t_TC (temporal blocking against kernel fusion at equal depth; "
              "cc_impl names the CUDA-core kernel): geometric mean over repetitions with its 95% "
              f"t-interval, decided against 1 with the claims' margin ({100 * margin:g}%). "
              + (f"held: {counts('held')}." if "held_summary" not in frame else
                 "held and held_summary are the claims' C5 and C5 summary decisions (eq. 14 as stated with the "
                 "run's noise band; paper 002's summary: tensor cores not faster in scenarios 1-2): held "
                 f"{counts('held')}; held_summary {counts('held_summary')}."))
    outputs.write_table(frame, csv, md, f"Paper 002's classification checked on {gpu_name}", legend)
