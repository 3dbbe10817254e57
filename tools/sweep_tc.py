"""Developer sweep (not a workflow rule) for the tensor-core SpMV and stencils and their CUDA-core twins
(issues 14 and 15): every variant is checked against scipy before it is timed; prints compact tables.

    python tools/sweep_tc.py OUTDIR            # surrogates > L2 (in /tmp/mats), SpMV and stencil variants
    python tools/sweep_tc.py OUTDIR --matrices # only the surrogates
    python tools/sweep_tc.py OUTDIR --profile  # (run under ncu) one checked launch set per ncu case
    python tools/sweep_tc_ncu.py NCU.csv OUTDIR/ncu_cases.json SUMMARY.csv   # then summarise
"""
import json
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import yaml

from membound.kernels import spmv
from membound.kernels import stencil as S
from membound.kernels.spmv import tc_plan as spmv_plan
from membound.matrices import csr, surrogate, table2
from membound.model.precision import dot_tolerance
from membound.run import measure, timing

MATS = Path("/tmp/mats")
SPMV_VARIANTS = {"default": {}}   # FP64; the plan's variants per precision: tools/bench_spmv.py
TC3_VARIANTS = {"nt2_bz32": dict(NT=2, WX=2, WY=4, BZ=32, MINB=2), "nt2_bz64": dict(NT=2, WX=2, WY=4, BZ=64, MINB=2),
                "nt2_bz16": dict(NT=2, WX=2, WY=4, BZ=16, MINB=2), "nt2w16_bz32": dict(NT=2, WX=4, WY=4, BZ=32, MINB=1),
                "nt4_bz32": dict(NT=4, WX=2, WY=4, BZ=32, MINB=1)}
NCU_SPMV = ["circuit5M", "in-2004", "pwtk", "Ga41As41H72"]
NCU_STENCIL = ["3d7pt", "3d27pt", "2d5pt", "2d9pt"]
STENCILS = {"2d5pt": ("star", 2, 1, 3), "2d9pt": ("box", 2, 1, 3), "3d7pt": ("star", 3, 1, 3),
            "3d27pt": ("box", 3, 1, 3)}
DOMAIN = {2: (10240, 10240), 3: (512, 512, 512)}


def make(entry):
    path = MATS / f"{entry['name']}.npz"
    if not path.exists():
        csr.save(path, *surrogate.generate(entry))
    return str(path)


def surrogates(l2_mb=50):
    entries = [e for e in yaml.safe_load(open("config/matrices.yaml"))["matrices"]
               if table2.size_mb(e["rows"], e["rows"], e["nnz"]) > l2_mb]
    MATS.mkdir(exist_ok=True)
    with Pool(8) as pool:
        return pool.map(make, entries)


def spmv_case(path, impls, variants, rng, warmup=30, reps=100):
    """Rows (checked, then timed) of each impl and variant on the matrix at `path`; the last runner."""
    import cupy as cp

    matrix, meta = csr.load(path)
    dev = spmv._device_csr(matrix, meta["name"])
    x_host = rng.uniform(-1, 1, matrix.shape[1])
    ref = matrix @ x_host
    x = cp.asarray(x_host)
    rows = []
    for impl in impls:
        for v in (["default"] if impl == "cusparse_csr" else variants):
            y = cp.full(matrix.shape[0], np.nan)
            p = None
            if impl == "cusparse_csr":
                run = spmv.cusparse_runner(dev, x, y)[0]
            else:
                p = spmv_plan.plan(matrix.indptr, 1)
                run = spmv.tc_runner(dev, x, y, p, "fp64", twin=impl.endswith("_twin"))[0]
            run()
            tol = dot_tolerance("fp64", "cuda_core", int(np.diff(matrix.indptr).max()), ref, abs(matrix) @ np.abs(x_host))
            err = measure.check(y.get(), ref, tol, f"{meta['name']} {impl} {v}")
            t = np.median(timing.time_gpu(run, warmup, reps)) if reps else float("nan")
            rows.append(dict(matrix=meta["name"], impl=impl, variant=v, gflops=2 * matrix.nnz / t / 1e9, err=err,
                             mma=p.mma if p else None, ratio=p.mma * 512 / (2 * matrix.nnz) if p else None))
    return rows, run


def stencil_run(name, impl, tile, rng, domain=None, steps=12, reps=5):
    import cupy as cp

    shape, dims, radius, depth = STENCILS[name]
    st = S.Stencil(name, shape, dims, radius, depth)
    if tile:
        S.stencil_plan.TC3_TILE = tile
    err = S._check_cuda(impl, st, rng, S.CHECK_DOMAIN[dims], steps)
    domain = domain or DOMAIN[dims]
    w = S.random_weights(rng, shape, dims, radius)
    run = S._cuda_runner(impl, st, w, cp.random.random(domain), steps)
    t = np.median(timing.time_gpu(run, 2, reps)) if reps else float("nan")
    return err, np.prod(domain) * steps / t / 1e9, run


def sweep(out: Path):
    rng = np.random.default_rng()
    t0 = time.time()
    paths = surrogates()
    print(f"surrogates: {len(paths)} in {time.time() - t0:.0f} s", flush=True)
    rows = []
    for path in paths:
        rows += spmv_case(path, ["cusparse_csr", "dasp_tc"], list(SPMV_VARIANTS), rng)[0]
        rows += spmv_case(path, ["dasp_tc_twin"], ["default"], rng)[0]
        print(f"spmv {rows[-1]['matrix']} done {time.time() - t0:.0f} s", flush=True)
    import pandas as pd

    f = pd.DataFrame(rows)
    f.to_csv(out / "spmv_sweep.csv", index=False)
    piv = f.pivot_table(index="matrix", columns=["impl", "variant"], values="gflops")
    cus = piv[("cusparse_csr", "default")]
    print("\nSpMV GFLOP/s (cuSPARSE, then tensor-core variants, twin); geomean cuSPARSE / variant last")
    print(piv.round(1).to_string())
    gm = {c: measure.geomean(cus / piv[c]) for c in piv.columns}
    print("geomean cuSPARSE/x:", {f"{k[0]}:{k[1]}": round(v, 3) for k, v in gm.items()}, flush=True)

    srows = []
    for name in ("3d7pt", "3d27pt"):
        for v, tile in TC3_VARIANTS.items():
            try:
                err, gs, _ = stencil_run(name, "tc", tile, rng)
            except Exception as e:  # a failed variant is reported, the sweep goes on
                print(f"FAILED {name} {v}: {str(e)[:300]}", flush=True)
                continue
            srows.append(dict(stencil=name, impl="tc", variant=v, gstencil=gs, err=err))
            print(srows[-1], flush=True)
    best = {n: max((r for r in srows if r["stencil"] == n), key=lambda r: r["gstencil"])["variant"] for n in ("3d7pt", "3d27pt")}
    for name in STENCILS:
        tile = TC3_VARIANTS[best[name]] if name in best else None
        for impl in ("tc", "tc_twin"):
            err, gs, _ = stencil_run(name, impl, tile, rng)
            srows.append(dict(stencil=name, impl=impl, variant=best.get(name, "2d"), gstencil=gs, err=err))
            print(srows[-1], flush=True)
    pd.DataFrame(srows).to_csv(out / "stencil_sweep.csv", index=False)
    json.dump(best, open(out / "best.json", "w"))
    print(f"sweep done {time.time() - t0:.0f} s", flush=True)


def profiled(run):
    """One call of `run` inside profiler start/stop, after a kernel named `marker` that starts the case."""
    import cupy as cp

    marker = cp.RawKernel('extern "C" __global__ void marker(int* p) { if (p) *p = 0; }', "marker")
    cp.cuda.runtime.deviceSynchronize()
    cp.cuda.runtime.profilerStart()
    marker((1,), (1,), (np.uint64(0),))
    run()
    cp.cuda.runtime.deviceSynchronize()
    cp.cuda.runtime.profilerStop()


def profile(out: Path):
    """Under ncu (--profile-from-start off): one checked launch set per case (after a `marker` kernel);
    writes the case order to OUTDIR/ncu_cases.json."""
    rng = np.random.default_rng()
    cases = []
    for name in NCU_SPMV:
        for impl in ("cusparse_csr", "dasp_tc", "dasp_tc_twin"):
            profiled(spmv_case(MATS / f"{name}.npz", [impl], ["default"], rng, reps=0)[-1])
            cases.append(f"spmv:{name}:{impl}")
    for name in NCU_STENCIL:
        for impl in ("tc", "tc_twin"):
            profiled(stencil_run(name, impl, None, rng, steps=STENCILS[name][3], reps=0)[-1])
            cases.append(f"stencil:{name}:{impl}")
    json.dump(cases, open(out / "ncu_cases.json", "w"))


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    if "--matrices" in sys.argv:
        print("\n".join(surrogates()))
    else:
        (profile if "--profile" in sys.argv else sweep)(out)
