"""Developer sweep (not a workflow rule, issue 23): the CUDA-core stencil kernels at every depth, a
handful of tile variants each beside today's tiles, at the paper's domains (10240^2 and 512^3, 12 steps
or the next multiple of the depth). Every variant is checked first as membound checks a case (whole
output on stencil.CHECK_DOMAIN, then 256 sampled points of the timed field against the reference);
a failed or refused variant is reported and skipped. Writes $OUT/sweep_tb.csv (every variant),
$OUT/best_tb.csv (the best checked variant per GPU, stencil and depth) and prints the TUNED entries
for stencil_tuning.py.

    OUT=out python tools/sweep_tb.py [--budget 420] [--stencils 2d5pt 3d7pt] [--depths 1 3]
"""
import argparse
import math
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from membound import measure
from membound.kernels import load_module, stencil as S, stencil_tuning as tuning

STENCILS = {"2d5pt": ("star", 2, 1), "2d9pt": ("box", 2, 1), "2d13pt": ("star", 2, 3), "2d49pt": ("box", 2, 3),
            "3d7pt": ("star", 3, 1), "3d27pt": ("box", 3, 1)}
DOMAIN = {2: (10240, 10240), 3: (512, 512, 512)}
TB2, TB3 = tuning.TB2, tuning._3D_TB
OLD_2D = dict(kernel="stencil_cc", BX=64, BY=32, BZ=1, V=8, NTHREADS=256, TPB=1, MINB=0, WSMEM=0)
TODAY = {  # main's CC_TILE before issue 23 (weights now by value): the baseline of each stencil
    "2d5pt": OLD_2D, "2d9pt": OLD_2D, "2d13pt": dict(OLD_2D, BX=128, V=16, TPB=4),
    "2d49pt": dict(OLD_2D, V=16, NTHREADS=128, TPB=4, WSMEM=1),
    "3d7pt": TB3, "3d27pt": dict(TB3, BX=64, BY=16)}
TODAY_1 = {"3d7pt": dict(TB3, BX=64, BY=16, BZ=32, NTHREADS=256),
           "3d27pt": dict(kernel="stencil_cc3", BX=32, BY=64, BZ=32, V=8, NTHREADS=256, MINB=0, WSMEM=0)}


def variants(name: str, depth: int) -> dict[str, dict]:
    """Today's tile, the default and a handful of others for this stencil and depth."""
    shape, dims, r = STENCILS[name]
    out = {"today": TODAY_1[name] if dims == 3 and depth == 1 else TODAY[name],
           "default": tuning.default_tile(dims, shape, r, depth)}
    if dims == 2:
        ch = max(4, 2 * r)
        own = int(2 * ch * (depth - 1) <= 48)
        for nt in (128, 256, 512):
            out[f"nt{nt}_ch{ch}"] = dict(TB2, NT=nt, CH=ch, OWNREG=own)
        out[f"ch{2 * ch}"] = dict(TB2, CH=2 * ch, OWNREG=int(4 * ch * (depth - 1) <= 48))
        out["pf2_minb2"] = dict(TB2, CH=ch, PF=2, OWNREG=own, MINB=2)
        out["no_ownreg"] = dict(TB2, CH=ch, OWNREG=0)
        out["waves2"] = dict(TB2, CH=ch, OWNREG=own, WAVES=2)
        if depth > 4:   # past Table 3's depths: fewer variants, so that the sweep fits 8 minutes
            out = {k: v for k, v in out.items() if k in ("today", "default", f"nt128_ch{ch}", "no_ownreg")}
    else:
        base = out["today"] if out["today"]["kernel"] == "stencil_tb3" else TB3
        out["bz64"] = dict(base, BZ=64)
        out["bz256"] = dict(base, BZ=256)
        out["t256"] = dict(base, NTHREADS=256)
        out["v8"] = dict(base, V=8, NTHREADS=256)
        out["32x16"] = dict(base, BX=32, BY=16, NTHREADS=256, V=2)
    return out


def compile_variant(job):
    """Compile one variant (worker process: fills CuPy's kernel cache); None or the refusal."""
    name, depth, tile = job
    shape, dims, r = STENCILS[name]
    try:
        launch = tuning.plan(tile, shape, r, depth, (1,) * (3 - dims) + DOMAIN[dims], name)
        load_module(launch.source, tuple(f"-D{k}={v}" for k, v in sorted(launch.macros.items()))).get_function(launch.name)
    except Exception as err:  # reported by the measuring process
        return str(err).splitlines()[0][:200]
    return None


def measure_variant(name, depth, label, tile, x, rng) -> dict:
    """Check (whole small field, then sampled timed field), then time one variant."""
    import cupy as cp

    shape, dims, r = STENCILS[name]
    st = S.Stencil(name, shape, dims, r, depth)
    steps = depth * math.ceil(12 / depth)
    small = rng.random(S.CHECK_DOMAIN[dims])
    w = S.random_weights(rng, shape, dims, r)
    out = S._cuda_runner("cc_tb", st, w, cp.asarray(small), steps, tile)()
    measure.check(cp.asnumpy(out), S.reference(small, w, steps), S.TOL, f"{name} t={depth} {label}")
    run = S._cuda_runner("cc_tb", st, w, x, steps, tile)
    idx = rng.integers(0, x.shape, size=(S.SAMPLES, x.ndim))
    got = cp.asnumpy(run()[tuple(cp.asarray(i) for i in idx.T)])
    err = measure.check(got, S.sampled_reference(cp.asnumpy(x), w, steps, idx), S.TOL, f"{name} t={depth} {label}")
    seconds = float(np.median(measure.time_gpu(run, 1, 5)))
    return dict(stencil=name, depth=depth, variant=label, kernel=tile["kernel"], tile=repr(tile), steps=steps,
                gstencil=x.size * steps / seconds / 1e9, rel_err=err)


def main(argv=None):
    import cupy as cp

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=420, help="seconds; no new variant starts after it")
    parser.add_argument("--stencils", nargs="+", default=list(STENCILS))
    parser.add_argument("--depths", nargs="+", type=int, default=None)
    args = parser.parse_args(argv)
    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    gpu = tuning.gpu_key(cp.cuda.runtime.getDeviceProperties(0)["name"].decode()) or "other"
    jobs = [(name, depth, label, tile) for name in args.stencils
            for depth in (args.depths or range(1, tuning.MAX_DEPTH[STENCILS[name][1]] + 1))
            if depth <= tuning.MAX_DEPTH[STENCILS[name][1]] for label, tile in variants(name, depth).items()]
    with ProcessPoolExecutor(os.cpu_count(), mp_context=multiprocessing.get_context("spawn")) as pool:   # NVRTC in parallel; the measuring process hits the cache
        refused = list(pool.map(compile_variant, [(n, d, t) for n, d, _, t in jobs]))
    print(f"{gpu}: {len(jobs)} variants compiled in {time.time() - t0:.0f} s", flush=True)
    rng, rows, fields = np.random.default_rng(0), [], {}
    for (name, depth, label, tile), why in zip(jobs, refused):
        if time.time() - t0 > args.budget:
            print(f"budget spent: {name} t={depth} {label} and later variants not measured", flush=True)
            break
        row = dict(gpu=gpu, stencil=name, depth=depth, variant=label, kernel=tile["kernel"], tile=repr(tile))
        if why is None:
            dims = STENCILS[name][1]
            if dims not in fields:
                fields.clear()
                fields[dims] = cp.random.random(DOMAIN[dims])
            try:
                row.update(measure_variant(name, depth, label, tile, fields[dims], rng))
            except Exception as err:  # a failed check or launch is reported, the sweep goes on
                why = str(err).splitlines()[0][:200]
        row["failed"] = why or ""
        rows.append(row)
        print(f"{name:7s} t={depth} {label:14s} {row.get('gstencil', float('nan')):8.1f} GStencil/s {row['failed']}",
              flush=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(out / "sweep_tb.csv", index=False)
    ok = frame[frame.failed == ""]
    best = ok.loc[ok.groupby(["stencil", "depth"]).gstencil.idxmax()]
    today = ok[ok.variant == "today"].set_index(["stencil", "depth"]).gstencil
    best = best.assign(today=[today.get((s, d), float("nan")) for s, d in zip(best.stencil, best.depth)])
    best.to_csv(out / "best_tb.csv", index=False)
    print("\nbest per stencil and depth (GStencil/s) beside today's tiles:")
    print(best[["stencil", "depth", "variant", "kernel", "gstencil", "today"]].round(1).to_string(index=False))
    print(f"\nTUNED[{gpu!r}] entries for src/membound/kernels/stencil_tuning.py:")
    for r in best.itertuples():
        shape, dims, radius = STENCILS[r.stencil]
        print(f"    ({dims}, {shape!r}, {radius}, {r.depth}): {r.tile},")
    print(f"sweep done in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
