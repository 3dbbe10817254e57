"""Analytical W, Q and I of every benchmark row: the model's side of the achieved-vs-analytical
comparison (as BabelStream's one table of kernel weights, every figure derives from here): one
function per kernel family, which its registry entry names (membound.families `wq`), and the
intensities of Figure 2 and the bounds table.

W is the useful work the papers count (paper 000 Sec. 3); `W_exec` is the work the unit executes
by the model: equal to W on CUDA cores; on tensor cores the MMA also multiplies padding (SCALE
uses equations.scale_mma_fraction of the MMA, 1/8 for m8n8k4, paper 000 Sec. 5.1; a fused stencil
does alpha/S times the work, paper 002 eq. 3; the tensor-core SpMV does 2 m n k per MMA of its plan,
the raw row's `mma`). Q counts compulsory DRAM traffic. Each takes the row's precision
(peaks.row_precision): its element size D for Q and its MMA shape for W_exec on tensor cores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from membound.model import equations, geometry, peaks, sparse24
from membound.model.precision import PRECISIONS, fmt


def _precision(row: Mapping, gpu: dict) -> peaks.Peaks:
    return peaks.at(gpu, peaks.row_precision(row))


def scale(row: Mapping, gpu: dict, stencils=None) -> dict:
    """SCALE of n elements (paper 000 eq. 5); on tensor cores 2 n / scale_mma_fraction (Sec. 5.1)."""
    n, p = int(row["n"]), _precision(row, gpu)
    w, q = equations.scale_wq(n, p.element_bytes)
    w_exec = w if row["unit"] == "cuda_core" else 2 * n / equations.scale_mma_fraction(p.mma_shape)
    return {"W": w, "Q": q, "W_exec": w_exec, "items": n}


def spmv(row: Mapping, gpu: dict, stencils=None) -> dict:
    """CSR SpMV (paper 000 eq. 10); on tensor cores 2 m n k per MMA of its plan."""
    nnz, p = int(row["nnz"]), _precision(row, gpu)
    w, q = equations.csr_wq(int(row["rows"]), int(row["cols"]), nnz, p.element_bytes)
    m, n, k = p.mma_shape
    w_exec = w if row["unit"] == "cuda_core" else float(row.get("mma", "nan") or "nan") * 2 * m * n * k
    return {"W": w, "Q": q, "W_exec": w_exec, "items": nnz}


def stencil(row: Mapping, gpu: dict, stencils: Mapping) -> dict:
    """A stencil at depth t (paper 000 eq. 13 per launch); on tensor cores alpha/S times the work (paper 002 eq. 3)."""
    spec = stencils[row["problem"]]
    shape, dims, radius = spec["shape"], spec["dims"], spec["radius"]
    k = equations.stencil_points(shape, dims, radius)
    depth, steps = int(row["depth"]), int(row["steps"])
    points = int(row["n"])
    launches = steps // depth
    p = _precision(row, gpu)
    w, q = equations.stencil_wq(points, k, t=depth, d=p.element_bytes)   # per launch (eq. 13)
    w, q = w * launches, q * launches
    w_exec = w
    if row["unit"] == "tensor_core":
        alpha = equations.fusion_redundancy(shape, dims, radius, depth)
        s = (sparse24.sparsity(shape, dims, radius, depth, p.precision) if row.get("sparsity") == "2:4"
             else geometry.tc_sparsity(shape, dims, radius, depth, p.precision))
        w_exec = w * alpha / s    # paper 002, eq. 3: the logical MMA work (mma.sp's counted as if dense, eq. 20)
    return {"W": w, "Q": q, "W_exec": w_exec, "items": points * steps}


def gemv(row: Mapping, gpu: dict, stencils=None) -> dict:
    """Dense GEMV (paper 000 eq. 6-7); on tensor cores x fills 1 of the MMA's n columns."""
    m, n, p = int(row["rows"]), int(row["cols"]), _precision(row, gpu)
    w, q = equations.gemv_wq(m, n, p.element_bytes)                    # paper 000, eq. 6-7
    w_exec = w if row["unit"] == "cuda_core" else w * p.mma_shape[1]   # x fills 1 of the MMA's n columns
    return {"W": w, "Q": q, "W_exec": w_exec, "items": m * n}


def per_item(wq: dict) -> dict:
    """A family's analytical W, Q, W_exec and `items` (its `wq`) as W, Q, I, W_exec and each per work item."""
    out = dict(wq)
    items = out.pop("items")
    out["I"] = out["W"] / out["Q"]
    out.update({"W_per_item": out["W"] / items, "Q_per_item": out["Q"] / items,
                "W_exec_per_item": out["W_exec"] / items})
    return out


def stencil_model(shape: str, dims: int, radius: int, t: int, unit: str, d: int = equations.D_FP64,
                  precision: str | None = None, sparsity: str = "dense") -> dict:
    """Paper 002's K, alpha (eq. 9-10) and S (this workflow's tensor-core transformation in the MMA
    shape of `precision`, by default the precision of element size d), and C, M, I per output point of
    one launch of depth t: on CUDA cores C = 2tK (eq. 8), on tensor cores alpha/S times that (eq. 3,
    11-12; alpha and S NaN on CUDA cores); M = 2D."""
    precision = precision or next(p for p in PRECISIONS if fmt(p).bytes == d)
    k = equations.stencil_points(shape, dims, radius)
    if unit != "tensor_core":
        c, m, i = equations.stencil_cc(k, t, d)
        return {"K": k, "alpha": math.nan, "S": math.nan, "C": c, "M": m, "I": i}
    alpha = equations.fusion_redundancy(shape, dims, radius, t)
    s = (sparse24.sparsity(shape, dims, radius, t, precision) if sparsity == "2:4"    # sparse tensor cores
         else geometry.tc_sparsity(shape, dims, radius, t, precision))
    c, m, i = equations.stencil_tc(k, t, alpha, s, d)
    return {"K": k, "alpha": alpha, "S": s, "C": c, "M": m, "I": i}


def kernel_intensities(config: Mapping, gpu: dict, tensor_cores: bool = True,
                       precision: str = "fp64") -> list[tuple[str, float, str]]:
    """(label, analytical I, unit) of every kernel the workflow runs, in `precision` (its element
    size D), for the roofline of Figure 2 and the bounds table.

    SCALE and CSR SpMV at their paper values (FP64: 1/16, ~1/6 for large nnz; I = 1/(2D) and
    2/(D + 4) in general), GEMV for reference (2/D), and each stencil on CUDA cores at depth t (paper
    002 eq. 8, I = tK/D) and on tensor cores with fusion (eq. 11-12, with the sparsity factor S of the
    precision's layout, geometry.STENCIL_MMA) unless `tensor_cores` is False.
    """
    d = peaks.ELEMENT_BYTES[precision]
    out = [("SCALE", equations.intensity(*equations.scale_wq(1, d)), "cuda_core"),
           ("GEMV", equations.intensity(*equations.gemv_wq(10**5, 10**5, d)), "cuda_core"),
           ("SpMV CSR", equations.intensity(*equations.csr_wq(10**6, 10**6, 10**8, d)), "cuda_core")]
    for name, spec in config["stencil"]["kernels"].items():
        case = (spec["shape"], spec["dims"], spec["radius"], spec["depth"])
        units = ("cuda_core", "tensor_core") if tensor_cores and precision in geometry.STENCIL_MMA else ("cuda_core",)
        for unit in units:
            tag = " TC" if unit == "tensor_core" else ""
            out.append((f"{name} t={spec['depth']}{tag}", stencil_model(*case, unit, d, precision)["I"], unit))
    return out
