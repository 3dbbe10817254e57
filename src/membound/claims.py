"""The paper's claims (paper 000 Sec. 4.2 and 5.4) checked on the measured raw rows.

Each claim compares, per problem, a CUDA-core side (the baseline role of CC_ROLE) with the
tensor-core side (unit tensor_core) by median time: speedup = t_CC / t_TC (> 1: tensor cores
faster), ratio = t_TC / t_CC (> 1: CUDA cores faster).

Verdicts: PASS or FAIL on a device with tensor cores; N/A on one without (the CPU profile's
tensor-core side is a numpy emulation of the MMA tiles, so its timings test the workflow, not the
paper; `holds` still says what the arithmetic gives); NO DATA where no measured pair qualifies.
A FAIL is a finding, reported like a PASS, never an error.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from membound import model, outputs
from membound.analytical import analytical
from membound.families import CC_ROLES as CC_ROLE
from membound.model import MB, size_mb
from membound.measure import geomean

PASS, FAIL, NOT_APPLICABLE, NO_DATA = "PASS", "FAIL", "N/A", "NO DATA"
SURROGATE = ("**SURROGATE MATRICES.** The SpMV rows were measured on labelled surrogate stand-ins (the rows "
             "and nnz of each SuiteSparse matrix times spmv.surrogate_scale, a structure of its family), not "
             "the SuiteSparse data.")
PAIR_COLUMNS = ["kernel", "problem", "code", "source", "cc_impl", "tc_impl", "cc_role", "tc_role", "depth_cc",
                "depth_tc", "equal_depth", "size_MB", "I", "bound", "t_cc_s", "t_tc_s", "speedup", "ratio"]
PAPER = 'Zhang et al., "Can Tensor Cores Benefit Memory-Bound Kernels? (NO!)", GPGPU \'25 (paper 000)'


def has_tensor_cores(gpu: dict) -> bool:
    """True when the device spec gives an FP64 matrix-unit peak (the CPU spec gives null)."""
    return bool(gpu.get("fp64_matrix_TFLOPs"))


def pairs(rows: pd.DataFrame, gpu: dict, stencils) -> pd.DataFrame:
    """One row per (kernel, problem) timed on both sides: median times, speedup and ratio, the
    CUDA-core row's analytical I, memory- or compute-bound by eq. 4 against the CUDA-core machine
    balance (eq. 1), both sides' temporal depth, and size_MB (SCALE: the input array, 8n bytes;
    SpMV: Table 2's size; stencils: n/a)."""
    cc = rows[(rows["unit"] == "cuda_core") & (rows["role"] == rows["kernel"].map(CC_ROLE))]
    tc = rows[rows["unit"] == "tensor_core"]
    for side in (cc, tc):
        dup = side[side.duplicated(["kernel", "problem"])]
        if not dup.empty:
            raise ValueError(f"raw rows: more than one {dup['unit'].iloc[0]} row for "
                             f"{dup['kernel'].iloc[0]} {dup['problem'].iloc[0]}")
    tc = tc.set_index(["kernel", "problem"])
    balance = model.machine_balance(gpu["fp64_vector_TFLOPs"], gpu["memory_bandwidth_TBs"])
    out = []
    for _, c in cc.iterrows():
        if (c["kernel"], c["problem"]) not in tc.index:
            continue
        t = tc.loc[(c["kernel"], c["problem"])]
        i = analytical(c, gpu, stencils)["I"]
        size = (model.D_FP64 * c["n"] / MB if c["kernel"] == "scale" else
                size_mb(c["rows"], c["cols"], c["nnz"]) if c["kernel"] == "spmv" else math.nan)
        out.append({
            "kernel": c["kernel"], "problem": c["problem"], "code": c["code"], "source": c["source"],
            "cc_impl": c["impl"], "tc_impl": t["impl"], "cc_role": c["role"], "tc_role": t["role"],
            "depth_cc": c["depth"], "depth_tc": t["depth"],
            "equal_depth": bool((pd.isna(c["depth"]) and pd.isna(t["depth"])) or c["depth"] == t["depth"]),
            "size_MB": size, "I": i, "bound": "memory" if model.is_memory_bound(i, balance) else "compute",
            "t_cc_s": c["t_median_s"], "t_tc_s": t["t_median_s"],
            "speedup": c["t_median_s"] / t["t_median_s"], "ratio": t["t_median_s"] / c["t_median_s"],
        })
    return pd.DataFrame(out, columns=PAIR_COLUMNS)


def _sources(frame: pd.DataFrame) -> list[str]:
    return sorted(set(frame["source"].dropna()))


def _labels(frame: pd.DataFrame) -> list[str]:
    return [f"{k} {q}" for k, q in zip(frame["kernel"], frame["problem"])]


def speedup_bound(p: pd.DataFrame, gpu: dict) -> dict:
    """C1: no memory-bound pair's speedup exceeds eq. 23's bound 2 - 2/(1 + alpha), alpha = P_TC/P_CC."""
    tensor = has_tensor_cores(gpu)
    alpha = gpu["fp64_matrix_TFLOPs"] / gpu["fp64_vector_TFLOPs"] if tensor else math.nan
    bound = model.tc_upper_bound(alpha) if tensor else math.nan
    same = p[p["equal_depth"]]
    memory, compute = same[same["bound"] == "memory"], same[same["bound"] == "compute"]
    over = memory[memory["speedup"] > bound]
    top = memory.loc[memory["speedup"].idxmax()] if not memory.empty else None
    holds = over.empty if tensor and not memory.empty else None
    numbers = {
        "alpha": alpha, "eq23_bound": bound,
        "balance_cc": model.machine_balance(gpu["fp64_vector_TFLOPs"], gpu["memory_bandwidth_TBs"]),
        "memory_bound_pairs": len(memory),
        "max_speedup": top["speedup"] if top is not None else math.nan,
        "max_speedup_at": f"{top['kernel']} {top['problem']}" if top is not None else "",
        "exceeding": _labels(over),
        "compute_bound_not_covered": [{"pair": f"{k} {q}", "speedup": s}
                                      for k, q, s in zip(compute["kernel"], compute["problem"], compute["speedup"])],
        "unequal_depth_excluded": _labels(p[~p["equal_depth"]]),
    }
    summary = (f"max speedup {numbers['max_speedup']:.3g} ({numbers['max_speedup_at']}) over {len(memory)} "
               "memory-bound pairs" if top is not None else "no memory-bound pair measured")
    summary += (f"; bound {bound:.3f} (alpha = {alpha:.3g}), {len(over)} exceed it" if tensor
                else "; bound undefined: no FP64 tensor-core peak")
    summary += f"; {len(compute)} compute-bound pairs not covered by the bound"
    covered = (same["bound"] == "memory") & tensor
    cases = same.assign(eq23_bound=bound, within_bound=(same["speedup"] <= bound).astype(object).where(covered, None))
    return {"id": "C1", "title": "No memory-bound kernel's tensor-core speedup exceeds eq. 23's bound",
            "where": "Sec. 4.2, eq. 23",
            "text": "Tensor Core Upper Bound: For memory-bound kernel, we have T_cmp -> T_mem: "
                    "Speedup < 1 + (alpha - 1)/(1 + alpha) = 2 - 2/(1 + alpha). Example: FP64 Nvidia GPUs "
                    "(with alpha = 2): Speedup < 1.33.",
            "test": "every speedup t_CC/t_TC (median times) of a memory-bound pair (eq. 4: I < P_CC/B, analytical I) "
                    "does not exceed 2 - 2/(1 + alpha), alpha = P_TC/P_CC of the device spec; SCALE per size, SpMV per "
                    "matrix, stencils (EBISU vs ConvStencil role) per stencil at equal depth",
            "holds": holds, "summary": summary, "numbers": numbers, "sources": _sources(p),
            "cases": cases[["kernel", "problem", "source", "I", "bound", "t_cc_s", "t_tc_s", "speedup",
                            "eq23_bound", "within_bound"]]}


def scale_l2(p: pd.DataFrame, gpu: dict) -> dict:
    """C2: CUDA-core SCALE at least as fast as tensor-core SCALE, geometric mean of t_TC/t_CC >= 1,
    separately for inputs (8n bytes) within and beyond half the L2."""
    s = p[p["kernel"] == "scale"]
    half = gpu["l2_MB"] / 2
    parts = {"within_half_L2": s[s["size_MB"] <= half], "beyond_half_L2": s[s["size_MB"] > half]}
    sides = {key: {"sizes": len(part), "geomean_tc_over_cc": geomean(part["ratio"]), "min_ratio": part["ratio"].min(),
                   "holds": None if part.empty else geomean(part["ratio"]) >= 1} for key, part in parts.items()}
    known = [side["holds"] for side in sides.values() if side["holds"] is not None]
    summary = "; ".join(f"{key.replace('_', ' ')}: geomean t_TC/t_CC {side['geomean_tc_over_cc']:.3g} over "
                        f"{side['sizes']} sizes" for key, side in sides.items())
    return {"id": "C2", "title": "CUDA-core SCALE is at least as fast as tensor-core SCALE, within and beyond half the L2",
            "where": "Sec. 5.4, Figure 6",
            "text": "SCALE: Figure 6 reveals consistent, though modest, performance degradation when using tensor "
                    "cores compared to CUDA cores. (Figure 6 reports the geometric mean for input sizes larger and "
                    "smaller than half of the L2 cache.)",
            "test": f"geometric mean of t_TC/t_CC >= 1, separately for inputs (8n bytes) within half the L2 "
                    f"(<= {half:g} MB) and beyond it",
            "holds": all(known) if known else None, "summary": summary, "numbers": {"half_L2_MB": half, **sides},
            "sources": _sources(s),
            "cases": s.assign(within_half_L2=s["size_MB"] <= half)[
                ["problem", "size_MB", "within_half_L2", "t_cc_s", "t_tc_s", "ratio"]]}


def spmv_l2(p: pd.DataFrame, gpu: dict) -> dict:
    """C3: cuSPARSE beats the tensor-core SpMV on matrices larger than the L2 (geometric mean of t_TC/t_CC > 1)."""
    s = p[p["kernel"] == "spmv"]
    larger, fitting = s[s["size_MB"] > gpu["l2_MB"]], s[s["size_MB"] <= gpu["l2_MB"]]
    g = geomean(larger["ratio"])
    numbers = {"l2_MB": gpu["l2_MB"], "larger_than_L2": len(larger), "geomean_tc_over_cc": g,
               "cuda_core_faster_on": int((larger["ratio"] > 1).sum()),
               "fitting_in_L2": len(fitting), "geomean_tc_over_cc_fitting": geomean(fitting["ratio"])}
    summary = (f"geomean t_TC/t_CC {g:.3g} over {len(larger)} matrices larger than the {gpu['l2_MB']:g} MB L2 "
               f"(cuSPARSE faster on {numbers['cuda_core_faster_on']}); "
               f"{numbers['geomean_tc_over_cc_fitting']:.3g} over the {len(fitting)} that fit")
    return {"id": "C3", "title": "cuSPARSE beats the tensor-core SpMV on matrices larger than the L2",
            "where": "Sec. 5.4, Figure 7",
            "text": "SpMV: Figure 7 demonstrates that for datasets exceeding the L2 cache size, cuSPARSE "
                    "(CUDA core) outperforms DASP (tensor core) on average.",
            "test": "geometric mean of t_TC/t_CC > 1 over the matrices whose Table 2 size (CSR arrays + x, y) "
                    "exceeds the L2",
            "holds": None if larger.empty else g > 1, "summary": summary, "numbers": numbers,
            "sources": _sources(s),
            "cases": s.assign(larger_than_L2=s["size_MB"] > gpu["l2_MB"])[
                ["code", "problem", "source", "size_MB", "larger_than_L2", "t_cc_s", "t_tc_s", "ratio"]]}


def stencils_match(p: pd.DataFrame, tolerance: float) -> dict:
    """C4: per stencil at equal depth, CUDA cores (EBISU role) match or beat tensor cores (ConvStencil
    role): t_TC/t_CC >= 1 - tolerance."""
    s = p[(p["kernel"] == "stencil") & p["equal_depth"]]
    ok = s["ratio"] >= 1 - tolerance
    numbers = {"match_tolerance": tolerance, "stencils": len(s), "matching_or_faster": int(ok.sum()),
               "failing": list(s.loc[~ok, "problem"]), "geomean_tc_over_cc": geomean(s["ratio"]),
               "unequal_depth_excluded": list(p.loc[(p["kernel"] == "stencil") & ~p["equal_depth"], "problem"])}
    summary = (f"CUDA cores match or beat tensor cores on {int(ok.sum())} of {len(s)} stencils "
               f"(t_TC/t_CC >= {1 - tolerance:g}); geomean t_TC/t_CC {numbers['geomean_tc_over_cc']:.3g}" +
               (f"; slower on {', '.join(numbers['failing'])}" if numbers["failing"] else ""))
    return {"id": "C4", "title": "Stencils on CUDA cores match or beat the tensor-core versions at equal depth",
            "where": "Sec. 5.4, Figure 8",
            "text": "Stencils: Figure 8 shows that equivalently optimized tensor core implementations generally "
                    "underperform their CUDA core counterparts.",
            "test": f"t_TC/t_CC >= 1 - {tolerance:g} (claims.match_tolerance) for every stencil, CUDA-core temporal "
                    "blocking (EBISU role) against tensor cores (ConvStencil role) at equal temporal depth",
            "holds": None if s.empty else bool(ok.all()), "summary": summary, "numbers": numbers,
            "sources": _sources(s),
            "cases": s.assign(matches_or_beats=ok)[["problem", "depth_cc", "I", "bound", "t_cc_s", "t_tc_s",
                                                    "ratio", "matches_or_beats"]]}


def verdict(holds: bool | None, tensor_cores: bool) -> str:
    """PASS/FAIL from `holds`; N/A without tensor cores; NO DATA where nothing qualified."""
    if not tensor_cores:
        return NOT_APPLICABLE
    if holds is None:
        return NO_DATA
    return PASS if holds else FAIL


def slurm_jobs(rows: pd.DataFrame) -> list[int]:
    """The SLURM job ids that measured `rows`, ascending ([] where none ran under SLURM, or the rows
    predate the column)."""
    ids = pd.to_numeric(rows.get("slurm_job", pd.Series(dtype=float)), errors="coerce").dropna()
    return sorted({int(i) for i in ids})


def check(rows: pd.DataFrame, gpu: dict, stencils, tolerance: float) -> dict:
    """Every claim on the raw `rows` (measure.ROW_COLUMNS) of device `gpu`; `stencils` is
    config["stencil"]["kernels"], `tolerance` config["claims"]["match_tolerance"]."""
    p = pairs(rows, gpu, stencils)
    tensor_cores = has_tensor_cores(gpu)
    claims = [speedup_bound(p, gpu), scale_l2(p, gpu), spmv_l2(p, gpu), stencils_match(p, tolerance)]
    for c in claims:
        c["verdict"] = verdict(c["holds"], tensor_cores)
    matrices = sorted(set(rows.loc[rows["kernel"] == "spmv", "source"].dropna()))
    return {"paper": PAPER, "device_spec": gpu["name"], "tensor_cores": tensor_cores,
            "measured": {"device": sorted(set(rows["device"].dropna().astype(str))),
                         "host": sorted(set(rows["host"].dropna().astype(str))),
                         "slurm_jobs": slurm_jobs(rows),
                         "date_first": str(rows["date"].min()), "date_last": str(rows["date"].max())},
            "matrix_source": "/".join(matrices) or "none", "surrogate": "surrogate" in matrices,
            "claims": claims}


# ------------------------------------------------------------------------------------ output


def _plain(obj):
    """`obj` with numpy scalars as Python ones and NaN/inf as None (strict JSON)."""
    if isinstance(obj, pd.DataFrame):
        return [_plain(r) for r in obj.to_dict("records")]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def to_json(result: dict) -> str:
    """`result` (from check) as strict JSON."""
    return json.dumps(_plain(result), indent=2, allow_nan=False) + "\n"


def _banners(result: dict) -> str:
    out = []
    if result["surrogate"]:
        out.append(f"> {SURROGATE} C1's SpMV pairs and C3 say nothing about the paper's matrices.")
    if not result["tensor_cores"]:
        out.append(f"> **NO TENSOR CORES.** {result['device_spec']} has no FP64 matrix unit: the tensor-core "
                   "side is a numpy emulation of the MMA tiles, so every verdict is N/A (not a test of the "
                   "paper). 'holds on these timings' says what the same arithmetic gives on the emulated ones.")
    return "\n>\n".join(out)


def markdown(result: dict) -> str:
    """The claims as Markdown: banners, a summary table, then one section per claim with its cases."""
    m = result["measured"]
    head = (f"# Claims of paper 000 checked on {result['device_spec']}\n\n"
            f"Measured on {', '.join(m['device'])} ({', '.join(m['host'])}), {m['date_first']} to "
            f"{m['date_last']}; SpMV matrices: {result['matrix_source']}. Speedup = t_CC/t_TC and ratio = "
            "t_TC/t_CC of median times (ratio > 1: CUDA cores faster).\n\n")
    banners = _banners(result)
    summary = pd.DataFrame([{"claim": c["id"], "paper": c["where"], "what": c["title"], "verdict": c["verdict"],
                             "holds on these timings": {True: "yes", False: "no", None: "n/a"}[c["holds"]], "numbers": c["summary"]}
                            for c in result["claims"]])
    parts = [head + (banners + "\n\n" if banners else "") + summary.to_markdown(index=False) + "\n"]
    for c in result["claims"]:
        legend = (f"> {c['text']}\n\nChecked: {c['test']}. Data: {', '.join(c['sources']) or 'none'}.\n\n"
                  f"**{c['verdict']}**: {c['summary']}.")
        parts.append(outputs.markdown(c["cases"], f"{c['id']} ({c['where']}): {c['title']}", legend, level=2))
    return "\n".join(parts)


def write(result: dict, json_path, md_path) -> None:
    """Write the claims as JSON and Markdown, each atomically."""
    outputs.write_text(to_json(result), json_path)
    outputs.write_text(markdown(result), md_path)
