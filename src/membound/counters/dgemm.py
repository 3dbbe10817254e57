"""A checked cuBLAS DGEMM of known size, one launch per shape inside an NVTX range, so that a
counter run can check what one unit of the FP64 tensor-core counter is worth (2 M N K FLOPs).

`python -m membound.counters.dgemm --out F.csv [--shapes 2048x2048x2048 ...]` writes one row per
shape (kernel "dgemm", impl "cublas", problem "MxNxK", W = 2 M N K) after checking C against numpy.
check_counter() sets those rows beside the ncu counter rows of the same run.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from membound.run import measure, runinfo, timing
from membound.counters import mma
from membound.run.measure import guarded, write_result

SHAPES = ("2048x2048x2048", "4096x1024x512")
TOL = 1e-12


def parse_shape(text: str) -> tuple[int, int, int]:
    """'MxNxK' -> (M, N, K); SystemExit naming the shape when it is malformed."""
    try:
        m, n, k = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"error: --shapes '{text}' must be MxNxK with three positive integers (e.g. 2048x2048x2048)")
    if min(m, n, k) < 1:
        raise SystemExit(f"error: --shapes '{text}' must be MxNxK with three positive integers")
    return m, n, k


def run_shape(m: int, n: int, k: int, rng: np.random.Generator) -> dict:
    """One checked DGEMM C = A B (A: MxK, B: KxN) launched once inside its NVTX range."""
    import cupy as cp

    a, b = rng.uniform(-1, 1, (m, k)), rng.uniform(-1, 1, (k, n))
    da, db = cp.asarray(a), cp.asarray(b)
    problem = f"{m}x{n}x{k}"
    with measure.nvtx_range(measure.launch_tag("dgemm", "cublas", problem)):
        times = timing.time_gpu(lambda: cp.matmul(da, db), 0, 1)
    err = measure.check(cp.asnumpy(cp.matmul(da, db)), a @ b, TOL, f"dgemm {problem}")
    t = measure.stats(times)
    return {"kernel": "dgemm", "impl": "cublas", "unit": "tensor_core", "role": "counter check",
            "problem": problem, "rows": m, "cols": n, "n": k, "work_items": 2 * m * n * k, "warmup": 0, **t,
            "metric": "GFLOP/s", "value": 2 * m * n * k / t["t_median_s"] / 1e9, "rel_err": err,
            "note": "work_items = 2 M N K FLOPs (rows = M, cols = N, n = K)"}


def check_counter(rows: pd.DataFrame, counters: pd.DataFrame, tol: float = 0.01) -> pd.DataFrame:
    """Per DGEMM shape: 2 M N K beside the FP64 tensor-path ops and DMMA instructions ncu counted, the
    FLOPs one unit of each is worth, the DMMA shape mma.shape gives the kernel and its 2 m n k,
    and ok: tensor-path ops within `tol` of 2 M N K (where the GPU has that counter) and the FLOPs per
    DMMA within `tol` of the shape's, so the fallback for GPUs without the counter is checked too.
    cuBLAS's epilogue adds M N FP64 CUDA-core FLOPs (alpha scaling), counted by the dmul/dfma
    counters, not the tensor path."""
    tags = {measure.launch_tag("dgemm", "cublas", p): p for p in rows["problem"]}
    main = counters[counters["tag"].isin(tags) & (counters["part"] == "main")]
    if len(main) != len(tags):
        raise measure.CheckError(f"dgemm counter check: {len(main)} profiled DGEMM kernels for {len(tags)} shapes")
    flops = dict(zip(rows["problem"], rows["work_items"].astype(float)))
    out = pd.DataFrame({"problem": [tags[t] for t in main["tag"]], "kernel_name": main["kernel_name"].values})
    out["flops_2mnk"] = [flops[p] for p in out["problem"]]
    out["tensor_fp64_ops"] = main["tensor_fp64_ops"].values
    out["dmma_inst"] = main["dmma_inst"].values
    out["flops_cuda_core"] = main["flops_cuda_core"].values
    out["flops_per_op_unit"] = out["flops_2mnk"] / out["tensor_fp64_ops"]
    out["flops_per_dmma"] = out["flops_2mnk"] / out["dmma_inst"]
    shapes = [mma.shape(name, "f64")[0] for name in out["kernel_name"]]
    out["dmma_shape"] = ["m{}n{}k{}".format(*s) if s else "unknown" for s in shapes]
    out["flops_per_dmma_shape"] = [2 * s[0] * s[1] * s[2] if s else float("nan") for s in shapes]
    ops_ok = ((out["flops_per_op_unit"] - 1).abs() <= tol) | out["tensor_fp64_ops"].isna()
    out["ok"] = ops_ok & ((out["flops_per_dmma"] / out["flops_per_dmma_shape"] - 1).abs() <= tol)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description="Checked cuBLAS DGEMMs of known size for the FP64 tensor counter.")
    parser.add_argument("--out", required=True, help="result CSV")
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), help="MxNxK shapes")
    args = parser.parse_args(argv)
    rng = np.random.default_rng()
    info = runinfo.describe("cuda")   # which GPU, when, which code: as every benchmark row
    rows = [{**run_shape(*parse_shape(s), rng), **info} for s in args.shapes]
    write_result(rows, args.out)


if __name__ == "__main__":
    guarded(main)
