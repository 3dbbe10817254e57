"""Developer benchmark (not a workflow rule) of SCALE and GEMV in every precision (issue 21): each
impl x precision through the real modules and the harness (checked against its reference within the
format's bound, then timed), at SCALE n = 2^20 and 2^28 and GEMV n = 4096 and 16384. Prints GB/s per
impl, its share of the spec's memory bandwidth (config/gpus/<profile>.yaml) and each tensor-core
kernel's ratio to its CUDA-core sibling; writes the rows to $OUT/bench_precision.csv.

    python tools/bench_precision.py [--warmup 10] [--reps 50] [--scale 20 28] [--gemv 4096 16384]
    python tools/bench_precision.py --backend cpu --scale 12 --gemv 256       # a smoke test without a GPU
"""
import argparse
import os
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from membound.run import config, detect, runinfo
from membound.kernels import gemv, harness, scale
from membound.model.precision import PRECISIONS

def jobs(backend, log2_sizes, gemv_sizes, rng, l2_bytes):
    """(family, impl, precision, prepare) of every impl of `backend` in every precision it has."""
    out = []
    for k in log2_sizes:
        out += [("scale", i, p, partial(scale.prepare, i, backend, 2**k, rng, l2_bytes, p))
                for i, p in harness.select(scale.IMPLS, backend, PRECISIONS)]
    for n in gemv_sizes:
        out += [("gemv", i, p, partial(gemv.prepare, i, backend, n, rng, p))
                for i, p in harness.select(gemv.IMPLS, backend, PRECISIONS)]
    return out


def sibling(frame: pd.DataFrame, row) -> float:
    """GB/s of the CUDA-core impl a tensor-core row is set against (SCALE: its twin; GEMV: the cuda_core row)."""
    same = frame[(frame.kernel == row.kernel) & (frame.problem == row.problem) & (frame.precision == row.precision)]
    other = same[same.role.str.endswith("twin")] if row.kernel == "scale" else same[same.unit == "cuda_core"]
    return float(other.value.iloc[0]) if len(other) else float("nan")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--scale", type=int, nargs="+", default=[20, 28], help="SCALE sizes log2(n)")
    parser.add_argument("--gemv", type=int, nargs="+", default=[4096, 16384], help="GEMV sizes n")
    args = parser.parse_args(argv)
    info = runinfo.describe(args.backend)
    profile = detect.profile_for(detect.device_names()) if args.backend == "cuda" else "cpu"
    spec_gbs = 1e3 * config.load_gpu(profile)["memory_bandwidth_TBs"] if profile != "cpu" else float("nan")
    rng = np.random.default_rng(0)
    rows = []
    for family, impl, p, prepare in jobs(args.backend, args.scale, args.gemv, rng, info["l2_bytes"] or None):
        if reason := harness.skip_reason(impl, args.backend):
            print(f"skip {family} {impl.name} {p}: {reason}")
            continue
        rows.append(harness.measure(impl, prepare, args.backend, args.warmup, args.reps))
    frame = pd.DataFrame(rows)
    frame["of_spec"] = frame.value / spec_gbs
    frame["tc_over_cc"] = [r.value / sibling(frame, r) if r.unit == "tensor_core" else float("nan")
                           for r in frame.itertuples()]
    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    frame.assign(device=info["device"], profile=profile).to_csv(out / "bench_precision.csv", index=False)
    print(f"{info['device']} (profile {profile}, spec {spec_gbs:.0f} GB/s)")
    print(f"{'kernel':6s} {'problem':8s} {'prec':5s} {'impl':17s} {'GB/s':>8s} {'of spec':>8s} {'tc/cc':>6s} {'rel_err':>9s}")
    for r in frame.itertuples():
        print(f"{r.kernel:6s} {r.problem:8s} {r.precision:5s} {r.impl:17s} {r.value:8.1f} {r.of_spec:8.1%} "
              f"{r.tc_over_cc:6.3f} {r.rel_err:9.2e}")


if __name__ == "__main__":
    main()
