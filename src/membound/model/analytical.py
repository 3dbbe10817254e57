"""Analytical W, Q and I of every benchmark row: the model's side of the achieved-vs-analytical
comparison (as BabelStream's one table of kernel weights, every figure derives from here). Each
family's W and Q live in its registry entry (membound.families).

W is the useful work the papers count (paper 000 Sec. 3); `W_exec` is the work the unit executes
by the model: equal to W on CUDA cores; on tensor cores the MMA also multiplies padding (SCALE
uses equations.scale_mma_fraction of the MMA, 1/8 for m8n8k4, paper 000 Sec. 5.1; a fused stencil does
alpha/S times the work, paper 002 eq. 3; the tensor-core SpMV does 2 m n k per MMA of its plan, the
raw row's `mma`), with the MMA shape of the row's precision. Q counts compulsory DRAM traffic in the
row's element size D.
"""

from __future__ import annotations

from collections.abc import Mapping

from membound.families import FAMILIES
from membound.model import equations, peaks
from membound.model.geometry import tc_sparsity


def analytical(row: Mapping, gpu: dict, stencils: Mapping | None = None) -> dict:
    """Analytical W, Q, I (useful work), W_exec (work the unit executes) and the same per work
    item (element, nnz, or point and step) for one raw benchmark row.

    `stencils` is config["stencil"]["kernels"] (shape, dims, radius per stencil name).
    """
    kernel = row["kernel"]
    if kernel not in FAMILIES:
        raise ValueError(f"unknown kernel '{kernel}' in a benchmark row (families: {', '.join(FAMILIES)})")
    out = FAMILIES[kernel].wq(row, gpu, stencils)
    items = out.pop("items")
    out["I"] = out["W"] / out["Q"]
    out.update({"W_per_item": out["W"] / items, "Q_per_item": out["Q"] / items,
                "W_exec_per_item": out["W_exec"] / items})
    return out


def kernel_intensities(config: Mapping, gpu: dict, tensor_cores: bool = True,
                       precision: str = "fp64") -> list[tuple[str, float, str]]:
    """(label, analytical I, unit) of every kernel the workflow runs, in `precision` (its element
    size D), for the roofline of Figure 2 and the bounds table.

    SCALE and CSR SpMV at their paper values (FP64: 1/16, ~1/6 for large nnz; I = 1/(2D) and
    2/(D + 4) in general), GEMV for reference (2/D), and each stencil on CUDA cores at depth t (paper
    002 eq. 8, I = tK/D) and, in fp64 (the precision of this workflow's tensor-core stencil layout,
    m8n8k4), on tensor cores with fusion (eq. 11-12, with its sparsity factor S) unless `tensor_cores`
    is False.
    """
    d = peaks.ELEMENT_BYTES[precision]
    out = [("SCALE", equations.intensity(*equations.scale_wq(1, d)), "cuda_core"),
           ("GEMV", equations.intensity(*equations.gemv_wq(10**5, 10**5, d)), "cuda_core"),
           ("SpMV CSR", equations.intensity(*equations.csr_wq(10**6, 10**6, 10**8, d)), "cuda_core")]
    for name, spec in config["stencil"]["kernels"].items():
        shape, dims, radius, t = spec["shape"], spec["dims"], spec["radius"], spec["depth"]
        k = equations.stencil_points(shape, dims, radius)
        out.append((f"{name} t={t}", equations.stencil_cc(k, t, d)[2], "cuda_core"))
        if not tensor_cores or precision != "fp64":
            continue
        alpha = equations.fusion_redundancy(shape, dims, radius, t)
        out.append((f"{name} t={t} TC", equations.stencil_tc(k, t, alpha, tc_sparsity(shape, dims, radius, t))[2],
                    "tensor_core"))
    return out
