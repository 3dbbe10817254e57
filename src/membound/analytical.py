"""Analytical W, Q and I of every benchmark row: the model's side of the achieved-vs-analytical
comparison (as BabelStream's one table of kernel weights, every figure derives from here).

W is the useful work the papers count (paper 000 Sec. 3); `W_exec` is the work the unit executes
by the model: equal to W on CUDA cores; on tensor cores the MMA also multiplies padding (SCALE
uses 1/max(m, n) of the MMA, paper 000 Sec. 5.1; a fused stencil does alpha/S times the work,
paper 002 eq. 3; the tensor-core SpMV does 2 m n k per MMA of its plan, the raw row's `mma`). Q counts compulsory DRAM traffic.
"""

from __future__ import annotations

from collections.abc import Mapping

from membound import model


def _scale(row: Mapping, gpu: dict) -> dict:
    n = int(row["n"])
    w, q = model.scale_wq(n)
    w_exec = w if row["unit"] == "cuda_core" else 2 * max(gpu["mma_shape"][:2]) * n
    return {"W": w, "Q": q, "W_exec": w_exec, "items": n}


def _spmv(row: Mapping, gpu: dict) -> dict:
    nnz = int(row["nnz"])
    w, q = model.csr_wq(int(row["rows"]), int(row["cols"]), nnz)
    m, n, k = gpu["mma_shape"]
    w_exec = w if row["unit"] == "cuda_core" else float(row.get("mma", "nan") or "nan") * 2 * m * n * k
    return {"W": w, "Q": q, "W_exec": w_exec, "items": nnz}


def _stencil(row: Mapping, gpu: dict, kernels: Mapping) -> dict:
    spec = kernels[row["problem"]]
    shape, dims, radius = spec["shape"], spec["dims"], spec["radius"]
    k = model.stencil_points(shape, dims, radius)
    depth, steps = int(row["depth"]), int(row["steps"])
    points = int(row["n"])
    launches = steps // depth
    w, q = model.stencil_wq(points, k, t=depth)               # per launch of depth t (eq. 13)
    w, q = w * launches, q * launches
    w_exec = w
    if row["unit"] == "tensor_core":
        from membound.kernels.stencil import tc_sparsity

        alpha = model.fusion_redundancy(shape, dims, radius, depth)
        w_exec = w * alpha / tc_sparsity(shape, dims, radius, depth)    # paper 002, eq. 3
    return {"W": w, "Q": q, "W_exec": w_exec, "items": points * steps}


def analytical(row: Mapping, gpu: dict, stencils: Mapping | None = None) -> dict:
    """Analytical W, Q, I (useful work), W_exec (work the unit executes) and the same per work
    item (element, nnz, or point and step) for one raw benchmark row.

    `stencils` is config["stencil"]["kernels"] (shape, dims, radius per stencil name).
    """
    kernel = row["kernel"]
    if kernel == "scale":
        out = _scale(row, gpu)
    elif kernel == "spmv":
        out = _spmv(row, gpu)
    elif kernel == "stencil":
        out = _stencil(row, gpu, stencils)
    else:
        raise ValueError(f"unknown kernel '{kernel}' in a benchmark row")
    items = out.pop("items")
    out["I"] = out["W"] / out["Q"]
    out.update({"W_per_item": out["W"] / items, "Q_per_item": out["Q"] / items,
                "W_exec_per_item": out["W_exec"] / items})
    return out


def kernel_intensities(config: Mapping, gpu: dict, tensor_cores: bool = True) -> list[tuple[str, float, str]]:
    """(label, analytical I, unit) of every kernel the workflow runs, for the roofline of Figure 2.

    SCALE and CSR SpMV at their paper values (1/16, ~1/6 for large nnz), GEMV for reference (1/4),
    and each stencil on CUDA cores at depth t (paper 002 eq. 8) and on tensor cores with fusion
    (eq. 11-12, with this workflow's sparsity factor S) unless `tensor_cores` is False.
    """
    out = [("SCALE", model.intensity(*model.scale_wq(1)), "cuda_core"),
           ("GEMV", model.intensity(*model.gemv_wq(10**5, 10**5)), "cuda_core"),
           ("SpMV CSR", model.intensity(*model.csr_wq(10**6, 10**6, 10**8)), "cuda_core")]
    for name, spec in config["stencil"]["kernels"].items():
        shape, dims, radius, t = spec["shape"], spec["dims"], spec["radius"], spec["depth"]
        k = model.stencil_points(shape, dims, radius)
        out.append((f"{name} t={t}", model.stencil_cc(k, t)[2], "cuda_core"))
        if not tensor_cores:
            continue
        from membound.kernels.stencil import tc_sparsity

        alpha = model.fusion_redundancy(shape, dims, radius, t)
        out.append((f"{name} t={t} TC", model.stencil_tc(k, t, alpha, tc_sparsity(shape, dims, radius, t))[2],
                    "tensor_core"))
    return out
