"""Developer check (not a workflow rule) of the per-precision counters (issue 21): SCALE and GEMV
in every precision whose CUDA-core ops ncu counts (ncu_csv.CUDA_CORE_OPS) under ncu with membound's
metric list, then the achieved FLOPs and DRAM bytes per element against the model (wqi.table): W_exec (tensor cores: 2 m n k of the precision's MMA
shape per instruction) and Q with the precision's element size. A dW of 0 checks how ncu counts
FP32, packed FP16 (HADD2/HMUL2/HFMA2) and HMMA work; -50% on the fp16 CUDA-core row would mean a
packed instruction counts once (docs/counters.md).

    python tools/precision_counters.py [--gpu h100] [--log2 26] [--gemv 8192]

Writes its rows, counters and table to $OUT (default ./out) and prints the table.
"""
import argparse
import os
import sys
from pathlib import Path

import pandas as pd

from membound.analysis import wqi
from membound.counters import ncu
from membound.counters.ncu_csv import CUDA_CORE_OPS
from membound.counters.workflow import mma_shapes
from membound.run import config

COLUMNS = ["kernel", "impl", "precision", "problem", "W_exec_per_item", "W_ach_per_item", "dW_pct", "Q_per_item",
           "Q_ach_per_item", "dQ_pct", "hmma_inst", "dmma_inst", "tensor_flops_from"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", default="h100", help="device spec (config/gpus/<gpu>.yaml)")
    parser.add_argument("--log2", type=int, default=26, help="SCALE size 2^k (beyond the L2)")
    parser.add_argument("--gemv", type=int, default=8192, help="GEMV size n")
    args = parser.parse_args(argv)
    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    gpu = config.load_gpu(args.gpu)
    shapes = dict(ncu.mma_shape_arg(s) for s in mma_shapes(gpu).split())
    runs = {"scale": ["--log2-min", str(args.log2), "--log2-max", str(args.log2)], "gemv": ["--sizes", str(args.gemv)]}
    bench, counters = [], []
    for family, problem in runs.items():
        rows = out / f"{family}_rows.csv"
        command = [sys.executable, "-m", f"membound.kernels.{family}", "--backend", "cuda", *problem,
                   "--precisions", *CUDA_CORE_OPS, "--warmup", "0", "--reps", "1", "--counters", "--out", str(rows)]
        counters.append(ncu.profile(command, shapes))
        bench.append(rows)
    counters = pd.concat(counters, ignore_index=True)
    counters.to_csv(out / "counters.csv", index=False)
    table = wqi.table(wqi.read_rows(bench), counters, gpu, None)
    table.to_csv(out / "wqi.csv", index=False)
    main_rows = table[table["part"] == "main"].reindex(columns=COLUMNS)
    print(main_rows.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
