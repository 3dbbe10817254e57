"""Developer sweep (not a workflow rule; issue 23, paper 002 Figure 11): the stencil kernels at every depth
1..8 (2D) and 1..4 (3D) on the paper's domains (config/config.yaml stencil.domain_2d, domain_3d), each
case checked as the workflow checks it before it is timed (kernels/harness.py, stencil.prepare: whole
output on stencil.CHECK_DOMAIN, then 256 sampled points of the timed field).

    python tools/sweep_depths.py [--stencils 2d5pt 3d7pt] [--depths 1 3] [--reps 10] [--warmup 3] [--steps 12]
    python tools/sweep_depths.py --tiles [--budget 480] [--stencils ...] [--depths ...] [--precisions ...]
                                 [--variants today tuned today+vec tuned+vec] [--apply]
    python tools/sweep_depths.py --precisions fp32 fp16 --impls cc_naive cc_tb tc tc_twin --depths 1 3

Default: cc_tb in this GPU's tiles (stencil_plan.cc_tile) and tc at every depth; writes
$OUT/sweep_depths.csv (the harness's rows; OUT defaults to ./out) and prints GStencil/s per stencil,
kernel and depth with the best depth last, so that the best depth of each kernel can be chosen.
--precisions (default fp64) and --impls (default cc_tb and tc; cc_naive runs depth 1, tc_twin each depth
asked) choose what runs; the kernels are compiled first, in parallel. Every depth-1 CUDA-core row is
then set against B/(2D) GStencil/s (B the spec's bandwidth, D the element size; issue 24's benchmark:
>= 85% where I = K/D is below the CUDA-core balance of the precision that sums, fp32 for fp16).
--tiles: cc_tb alone, at every depth in a handful of tiles (`variants`; each stencil_cc(3) and stencil_tb3
tile also with its VEC switched, labelled +vec; stencil_tb3's tuned tile with 2 and 3 input planes in
flight, _pf2 and _pf3, in 3D the tuned tile over segments of 64-256 planes, _bz64 to _bz256, and at 5 and 6
blocks an SM, _minb5 and _minb6, and at depth 1 stencil_cc3's with 1 and 2, _pf1 and _pf2, and over
segments of 3 and 4 planes all in flight at once, whole3_*; a tuned tile in vector strips with two strips a
thread, tuned_s2, twice as tall, tuned_by2 (and both), and, stencil_cc, walking 2 or 4 tiles, tuned_tpb2 and
tuned_tpb4; a tuned stencil_stream tile at 1-4 blocks an SM, tuned_minb1 to tuned_minb4, and with the
field cut into equal runs of slices across its column and row blocks in one or two waves, tuned_bal1 and
tuned_bal2; --variants keeps the labels named; warm-up 1 and 5 timed calls unless given) in each precision, so
that the best tile per stencil and depth can be chosen; writes $OUT/sweep_tiles.csv (every variant) and
$OUT/best_tiles.csv, prints this GPU's entries for src/membound/kernels/stencil/tuned/<gpu>.yaml, and those that
beat the tile the GPU runs today by >= 3% (TUNED's rule; --apply puts them into that file, over the entries of
their keys). No new case starts after --budget seconds. A depth or tile whose shared memory does not fit this
GPU is listed as refused, a failed check as FAILED (no time kept).
"""
import argparse
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from membound.kernels import harness, load_module
from membound.kernels import stencil as S
from membound.kernels.stencil import launch as P
from membound.kernels.stencil import tiles
from membound.kernels.stencil.cpu import b_operands
from membound.kernels.stencil.tiles import CC2, CC3, ST, TB2, TB3
from membound.model import equations, peaks
from membound.model.precision import PRECISIONS, fmt, of_dtype
from membound.run import config, measure, runinfo

CONFIG = Path(__file__).resolve().parents[1] / "config" / "config.yaml"
MIN_GAIN = 0.03   # TUNED takes a swept tile where it beats the tile before by at least this
IMPLS = {impl.name: impl for impl in S.IMPLS}


def stencils(names=None) -> list[P.Stencil]:
    """The config's stencils (all, or `names`), at depth 1."""
    kernels = yaml.safe_load(CONFIG.read_text())["stencil"]["kernels"]
    return [P.Stencil(n, kernels[n]["shape"], kernels[n]["dims"], kernels[n]["radius"], 1) for n in names or kernels]


def today(st: P.Stencil, depth: int) -> dict:
    """Issue 13's tile (CC_TILE, before issue 23): the baseline of each stencil."""
    if st.dims == 2 and st.radius == 1:
        return CC2
    if st.dims == 2:
        return dict(CC2, BX=128, V=16, TPB=4) if st.shape == "star" else dict(CC2, V=16, NTHREADS=128, TPB=4, WSMEM=1)
    if depth == 1:
        return CC3 if st.shape == "box" else dict(TB3, BX=64, BY=16, BZ=32, NTHREADS=256)
    return dict(TB3, BX=64, BY=16) if st.shape == "box" else TB3


# Depth-1 tile shapes tried for stencil_cc and stencil_cc3: BX, BY, V, NTHREADS (= BX * BY / V)
CC_SHAPES = {"64x32v8": (64, 32, 8, 256), "64x64v16": (64, 64, 16, 256), "128x16v8": (128, 16, 8, 256),
             "64x16v4": (64, 16, 4, 256), "64x64v8": (64, 64, 8, 512), "32x32v8": (32, 32, 8, 128),
             "128x32v16": (128, 32, 16, 256)}

# stencil_cc3 tiles loaded whole (every input plane of a short segment in flight at once, PF = BZ - 1) over
# segments of WHOLE3_BZ planes (of 2, 3, 4 and 8 on an H100, 2026-11-27, 3 and 4 won): BX, BY, V, NTHREADS;
# and in vector strips, as VS_SHAPES (below) with BZ filled in
WHOLE3_BZ = (3, 4)
WHOLE3_SHAPES = {"64x16v4": (64, 16, 4, 256), "64x16v8": (64, 16, 8, 128), "128x8v4": (128, 8, 4, 256),
                 "128x8v2": (128, 8, 2, 512), "128x16v8": (128, 16, 8, 256), "256x8v8": (256, 8, 8, 256)}
WHOLE3_VS = {f"vs{w}x{by}v{v}z{bz}": (w, by, v, bz, 0) for w, by, v in ((32, 16, 2), (32, 16, 4), (16, 32, 4),
                                                                      (32, 8, 2)) for bz in WHOLE3_BZ}


def variants(st: P.Stencil, depth: int, gpu: str | None, elem: int = 8) -> dict[str, dict]:
    """Today's tile, the default rule's, this GPU's for elements of `elem` bytes and a handful of
    others, each distinct tile once."""
    out = {"today": today(st, depth), "default": P.default_tile(st.dims, st.shape, st.radius, depth),
           "tuned": P.cc_tile(st, depth, gpu, elem)}
    if st.dims == 2:
        ch = max(4, 2 * st.radius)
        own = int(2 * ch * (depth - 1) <= 48)
        for nt in (128, 256, 512):
            out[f"nt{nt}_ch{ch}"] = dict(TB2, NT=nt, CH=ch, OWNREG=own)
        if depth <= 4:    # past Table 3's depths fewer variants, so that the sweep fits 8 minutes
            out[f"ch{2 * ch}"] = dict(TB2, CH=2 * ch, OWNREG=int(4 * ch * (depth - 1) <= 48))
            out["pf2_minb2"] = dict(TB2, CH=ch, PF=2, OWNREG=own, MINB=2)
            out["waves2"] = dict(TB2, CH=ch, OWNREG=own, WAVES=2)
        out["no_ownreg"] = dict(TB2, CH=ch, OWNREG=0)
    else:
        base = out["today"] if out["today"]["kernel"] == "stencil_tb3" else TB3
        if depth == 1:
            out["cc3"] = CC3
        out.update(bz64=dict(base, BZ=64), bz256=dict(base, BZ=256), t256=dict(base, NTHREADS=256),
                   v8=dict(base, V=8, NTHREADS=256), **{"32x16": dict(base, BX=32, BY=16, NTHREADS=256, V=2)})
        if depth > 1:   # four blocks an SM (32 x 20 or 32 x 16, 256 threads)
            out.update({f"by{by}_minb4": dict(TB3, BY=by, BZ=64, NTHREADS=256, MINB=4, VEC=1) for by in (16, 20)})
    for label, tile in list(out.items()):   # stencil_cc(3), stencil_tb3: its 16-byte copies switched (VEC)
        switched = dict(tile, VEC=1 - tile.get("VEC", 0))
        if tile["kernel"] in ("stencil_cc", "stencil_cc3", "stencil_tb3") and launchable(st, depth, switched, elem):
            out[f"{label}+vec"] = switched
    if out["tuned"]["kernel"] == "stencil_cc" and out["tuned"].get("VEC"):   # the interior tiles without the wrap
        out["tuned+nowrap"] = dict(out["tuned"], NOWRAP=1)
    for label in ("tuned", "tuned+vec"):    # stencil_tb3 with more input planes in flight
        if label in out and out[label]["kernel"] == "stencil_tb3":
            out.update({f"{label}_pf{pf}": dict(out[label], PF=pf) for pf in (2, 3)})
    if st.dims == 3 and "BZ" in out["tuned"]:   # the tuned tile over longer segments (fewer halo planes read twice)
        out.update({f"tuned_bz{bz}": dict(out["tuned"], BZ=bz) for bz in (64, 128, 256)})
        out.update({f"tuned_minb{b}": dict(out["tuned"], MINB=b) for b in (5, 6)})   # more warps, fewer registers
    if out["tuned"].get("VS"):   # vector strips: two a thread (half the threads), or a tile twice as tall
        tuned = out["tuned"]
        out.update(tuned_s2=dict(tuned, NTHREADS=tuned["NTHREADS"] // 2), tuned_by2=dict(tuned, BY=2 * tuned["BY"]),
                   tuned_by2_s2=dict(tuned, BY=2 * tuned["BY"], NTHREADS=tuned["NTHREADS"] // 2))
        if tuned["kernel"] == "stencil_cc":   # a block walks 2 or 4 tiles, the next one's copy in flight
            out.update({f"tuned_tpb{n}": dict(tuned, TPB=n) for n in (2, 4)})
    if out["tuned"]["kernel"] == "stencil_stream":   # the same: more blocks an SM, fewer registers a thread
        out.update({f"tuned_minb{b}": dict(out["tuned"], MINB=b) for b in (1, 2, 3, 4)})
        if st.dims == 3:   # equal runs (BAL; 2D: the column blocks' segments fill the SMs already)
            out.update({f"tuned_bal{w}": dict(out["tuned"], BAL=1, WAVES=w) for w in (1, 2)})
    if depth == 1:   # the unblocked kernel in other shapes, with 16-byte copies (NTHREADS = BX * BY / V)
        cc, prefix = (CC2, "cc") if st.dims == 2 else (CC3, "cc3")
        for label, (bx, by, v, nt) in CC_SHAPES.items():
            out[f"{prefix}_{label}"] = dict(cc, BX=bx, BY=by, V=v, NTHREADS=nt, VEC=1)
        if st.dims == 3:
            out.update(cc3_bz16=dict(CC3, BZ=16, VEC=1), cc3_bz64=dict(CC3, BZ=64, VEC=1))
        out.update(stream_variants(st))
        out.update(vs_variants(st.dims, elem))
        if st.dims == 3:   # stencil_cc3 over short segments with every plane in flight at once (PF = BZ - 1)
            for label, (bx, by, v, nt) in WHOLE3_SHAPES.items():
                for bz in WHOLE3_BZ:
                    out[f"whole3_{label}z{bz}"] = dict(CC3, BX=bx, BY=by, BZ=bz, V=v, NTHREADS=nt, VEC=1, PF=bz - 1)
            out.update({f"whole3_{label}": dict(tile, PF=tile["BZ"] - 1)
                        for label, tile in vs_variants(3, elem, WHOLE3_VS).items()})
        if st.dims == 3:   # stencil_cc3 with PF planes in flight by cp.async
            for label in ("tuned", "cc3_128x16v8", "cc3_64x16v4", "cc3_64x32v8", "vs3_32x16v4", "vs3_16x32v4",
                          "vs3_16x16v2"):
                if out[label]["kernel"] == "stencil_cc3" and out[label].get("VEC"):
                    out.update({f"{label}_pf{pf}": dict(out[label], PF=pf) for pf in (1, 2)})
    distinct = {}
    for label, tile in out.items():
        distinct.setdefault(tuple(sorted(tile.items())), (label, tile))
    return dict(distinct.values())


def launchable(st: P.Stencil, depth: int, tile: dict, elem: int) -> bool:
    """Whether stencil_plan.cc_launch takes `tile` (e.g. VS and stencil_cc3's PF need VEC)."""
    try:
        P.cc_launch(st, depth, tile=tile, elem=elem)
    except ValueError:
        return False
    return True


def stream_variants(st: P.Stencil) -> dict[str, dict]:
    """stencil_stream at depth 1: threads along x (and rows, 3D, VY of them a thread), vectors per thread,
    each with cp.async (CPY 0) and with register-staged copies (_c2; 3D: and through L1, _c1), and for the
    first shape the chunk, the copies through L1, the prefetch and the waves."""
    kw = 2 * st.radius + 1
    shapes = ({"st_x128": dict(NTX=128), "st_x64": dict(NTX=64), "st_x256": dict(NTX=256),
               "st_x64_u2": dict(NTX=64, UV=2)} if st.dims == 2 else
              {"st_x32y16": dict(NTX=32, BY=16), "st_x16y16": dict(NTX=16, BY=16), "st_x32y8": dict(NTX=32, BY=8),
               "st_x64y4": dict(NTX=64, BY=4), "st_x32y8_u2": dict(NTX=32, BY=8, UV=2),
               "st_x32y16v2": dict(NTX=32, BY=16, VY=2), "st_x32y16v4": dict(NTX=32, BY=16, VY=4),
               "st_x32y32v4": dict(NTX=32, BY=32, VY=4), "st_x64y8v2": dict(NTX=64, BY=8, VY=2),
               "st_x32y32v2": dict(NTX=32, BY=32, VY=2), "st_x64y16v4": dict(NTX=64, BY=16, VY=4),
               "st_x64y16v2": dict(NTX=64, BY=16, VY=2), "st_x128y8v4": dict(NTX=128, BY=8, VY=4),
               "st_x64y8v4": dict(NTX=64, BY=8, VY=4), "st_x128y4v4": dict(NTX=128, BY=4, VY=4),
               "st_x128y4v2": dict(NTX=128, BY=4, VY=2), "st_x256y4v4": dict(NTX=256, BY=4, VY=4),
               "st_x256y4v2": dict(NTX=256, BY=4, VY=2), "st_x256y2v2": dict(NTX=256, BY=2, VY=2)})
    out = {label: dict(ST, CH=kw, **shape) for label, shape in shapes.items()}
    out.update({f"{label}_c2": dict(ST, CH=kw, CPY=2, **shape) for label, shape in shapes.items()})
    if st.dims == 3:
        out.update({f"{label}_c1": dict(ST, CH=kw, CPY=1, **shape) for label, shape in shapes.items()})
        for label in [label for label, shape in shapes.items() if shape.get("VY", 1) > 1]:
            out.update({f"{label}_c1_pf1": dict(out[f"{label}_c1"], PF=1),         # less shared memory a block
                        f"{label}_c1_w2": dict(out[f"{label}_c1"], WAVES=2),       # more, shorter blocks
                        f"{label}_c1_pf1_w2": dict(out[f"{label}_c1"], PF=1, WAVES=2)})   # both
    first = dict(ST, CH=kw, **next(iter(shapes.values())))
    out.update(st_c2_ch2=dict(first, CPY=2, CH=2 * kw), st_c1=dict(first, CPY=1), st_pf1=dict(first, PF=1),
               **{f"st_waves{n}": dict(first, WAVES=n) for n in (2, 4, 8)})
    return out


# stencil_cc and stencil_cc3 in vector strips (VS, depth 1): (tile width in 16-byte vectors, BY, V rows
# per strip, TPB (2D) or BZ (3D), MINB); one strip per thread: NTHREADS = width * BY / V
VS_SHAPES = {2: {"vs_32x32v4": (32, 32, 4, 1, 0), "vs_32x32v8": (32, 32, 8, 1, 0), "vs_16x64v8": (16, 64, 8, 1, 0),
                 "vs_64x16v4": (64, 16, 4, 1, 0), "vs_32x32v4t2": (32, 32, 4, 2, 0), "vs_32x16v4": (32, 16, 4, 1, 0),
                 "vs_32x16v8": (32, 16, 8, 1, 0), "vs_64x32v8": (64, 32, 8, 1, 0), "vs_32x32v8m6": (32, 32, 8, 1, 6),
                 "vs_32x32v4m3": (32, 32, 4, 1, 3), "vs_64x16v4m3": (64, 16, 4, 1, 3),
                 "vs_32x16v4m8": (32, 16, 4, 1, 8), "vs_64x16v4m4": (64, 16, 4, 1, 4),
                 "vs_32x32v4m4": (32, 32, 4, 1, 4), "vs_32x32v8m4": (32, 32, 8, 1, 4),
                 "vs_32x16v8m8": (32, 16, 8, 1, 8), "vs_16x32v8m8": (16, 32, 8, 1, 8)},
             3: {"vs3_16x32v4": (16, 32, 4, 32, 0), "vs3_16x16v2": (16, 16, 2, 32, 0),
                 "vs3_32x16v4": (32, 16, 4, 32, 0), "vs3_16x64v8": (16, 64, 8, 32, 0),
                 "vs3_32x32v4": (32, 32, 4, 32, 0), "vs3_16x32v2": (16, 32, 2, 32, 0),
                 "vs3_16x32v4z64": (16, 32, 4, 64, 0), "vs3_16x32v4z16": (16, 32, 4, 16, 0),
                 "vs3_8x32v2": (8, 32, 2, 32, 0), "vs3_16x32v2m4": (16, 32, 2, 32, 4),
                 "vs3_16x16v2m8": (16, 16, 2, 32, 8)}}


def vs_variants(dims: int, elem: int, shapes: dict | None = None) -> dict[str, dict]:
    """stencil_cc (2D) and stencil_cc3 (3D) with their sums in vector strips (VS), elements of `elem` bytes,
    in `shapes` (default VS_SHAPES[dims])."""
    vw, base, third = 16 // elem, (CC2 if dims == 2 else CC3), ("TPB" if dims == 2 else "BZ")
    return {label: dict(base, BX=w * vw, BY=by, V=v, NTHREADS=w * by // v, MINB=minb, VEC=1, VS=1, **{third: t})
            for label, (w, by, v, t, minb) in (shapes or VS_SHAPES[dims]).items()}


def tile_text(tile: dict) -> str:
    """`tile` as tuned/<gpu>.yaml holds it (tiles.diff), in YAML's flow style: its kernel and the macros
    that differ from its base tile (tile_of reads it back)."""
    return yaml.safe_dump(tiles.diff(tile), default_flow_style=True, sort_keys=False).strip()


def tile_of(text: str) -> dict:
    """The whole tile of a tile_text."""
    return tiles.expand(yaml.safe_load(text))


def entry_of(st: P.Stencil, depth: int, text: str, elem: int | None = None, note: str = "") -> dict:
    """One entry of a tuned/<gpu>.yaml: the key of `st` at `depth` (and element size `elem`, where
    given), its tile's text (tile_text) and `note`."""
    key = (st.dims, st.shape, st.radius, depth, *([elem] if elem else []))
    return tiles.entry(key, tile_of(text), note)


def entry_text(entry: dict) -> str:
    """An entry as its line of the YAML prints it."""
    return yaml.safe_dump(entry, default_flow_style=True, sort_keys=False, width=float("inf")).strip()


def compile_launch(job) -> str | None:
    """Compile one variant in a worker process (fills CuPy's kernel cache): None, or why it cannot run."""
    st, depth, tile, limit, elem = job
    try:
        launch = P.cc_launch(st, depth, tile=tile, elem=elem)
        if launch.smem > limit:
            return f"needs {launch.smem / 1024:.1f} KiB of shared memory per block, the device allows {limit // 1024}"
        load_module(launch.source, tuple(f"-D{k}={v}" for k, v in sorted(launch.macros.items()))).get_function(
            launch.name)
    except Exception as err:  # noqa: BLE001 - reported with the variant
        return str(err).splitlines()[0][:200]
    return None


def measured(impl: str, at: P.Stencil, steps: int, backend: str, warmup: int, reps: int, domain: tuple,
             rng, tile: dict | None = None, precision: str = "fp64") -> dict:
    """The harness's checked and timed row of `impl` for `at` on `domain` in `precision` (tile: cc_tb's,
    instead of the GPU's)."""
    prepare = partial(S.prepare, IMPLS[impl], at, domain, P.steps_at(steps, at.depth), backend, rng, tile, precision)
    return harness.measure(IMPLS[impl], prepare, backend, warmup, reps)


def planned(sts, depths, impls, precisions, limit, gpu) -> tuple[list[tuple[str, P.Stencil, str]], list[str]]:
    """(impl, stencil at its depth, precision) of every case, and the refusals: cc_naive at depth 1, the
    others at each of `depths` (within the kernels' MAX_DEPTH)."""
    jobs, notes = [], []
    for p in precisions:
        for st in sts:
            ts = [t for t in depths if t <= P.MAX_DEPTH[st.dims]]
            for impl in [i for i in impls if p in IMPLS[i].precisions]:     # tc_sparse: fp32, fp16 only
                for t in [1] if impl == "cc_naive" else ts:
                    at = replace(st, depth=t)
                    why = P.refusal(impl, at, limit, gpu, p) if limit else None
                    notes += [why] if why else []
                    jobs += [] if why else [(impl, at, p)]
    return jobs, notes


def compile_case(job) -> str | None:
    """Compile one case's kernel in a worker process (fills CuPy's kernel cache): None, or why not."""
    impl, at, precision = job
    try:
        if impl == "tc_sparse":          # compiled by its case (its macros follow the transform)
            return None
        if impl.startswith("tc"):
            w = S.random_weights(np.random.default_rng(0), at.shape, at.dims, at.radius, precision)
            rows, frags = b_operands(w, at.depth, precision)
            S._tc_kernel(at, frags, rows, impl == "tc_twin", precision)
        else:
            S._cc_kernel(at, 1 if impl == "cc_naive" else at.depth, S.device_gpu(), None, precision)
    except Exception as err:  # noqa: BLE001 - reported with the case
        return str(err).splitlines()[0][:200]
    return None


def sweep_depths(sts, depths, args, backend: str, domains: dict, impls=P.SWEPT,
                 precisions=("fp64",)) -> tuple[list[dict], list[str]]:
    """The rows of `impls` (cc_tb in this GPU's tiles) at each depth of each stencil in each of
    `precisions`, and the refusals and failures."""
    limit = S._shared_limit(backend)
    gpu = S.device_gpu() if limit else None
    jobs, notes = planned(sts, depths, impls, precisions, limit, gpu)
    if backend == "cuda":
        t0 = time.time()
        with ProcessPoolExecutor(os.cpu_count(), mp_context=multiprocessing.get_context("spawn")) as pool:
            failed = list(pool.map(compile_case, jobs))   # NVRTC in parallel
        notes += [f"FAILED to compile {i} {at.name} t={at.depth} {p}: {why}" for (i, at, p), why in zip(jobs, failed) if why]
        print(f"{gpu}: {len(jobs)} kernels compiled in {time.time() - t0:.0f} s", flush=True)
    rng, rows = np.random.default_rng(), []
    for impl, at, p in jobs:
        try:
            row = measured(impl, at, args.steps, backend, args.warmup, args.reps, domains[at.dims], rng, precision=p)
        except Exception as err:  # noqa: BLE001 - a failed check (or launch) is reported, the sweep goes on
            notes.append(f"FAILED {at.name} {impl} {p} t={at.depth}: {type(err).__name__}: {err}".splitlines()[0][:400])
            continue
        rows.append({**row, **runinfo.describe(backend)})
        print(f"{at.name:7s} {impl:8s} {p} t={at.depth}  {row['value']:8.1f} GStencil/s  cv {row['cv']:.3f}  "
              f"rel_err {row['rel_err']:.2g}", flush=True)
    return rows, notes


def bandwidth_shares(rows: pd.DataFrame, gpu: dict) -> pd.DataFrame:
    """Every depth-1 CUDA-core row (cc_naive, cc_tb at t = 1) against B/(2D) GStencil/s, with its
    intensity I = K/D against the CUDA-core balance of the precision its sums run in (fp64; fp32 for
    fp32 and fp16) and whether issue 24's 85% applies (I below that balance) and is met."""
    cc = rows[(rows.unit == "cuda_core") & (rows.depth.astype(int) == 1) & rows.impl.isin(["cc_naive", "cc_tb"])]
    out = []
    for r in cc.itertuples():
        d = fmt(r.precision).bytes
        bound = gpu["memory_bandwidth_TBs"] * 1e12 / (2 * d) / 1e9
        k = equations.stencil_points(*next((s.shape, s.dims, s.radius) for s in stencils() if s.name == r.problem))
        sums = of_dtype(fmt(r.precision).acc)      # the CUDA cores' accumulator: fp64, else fp32
        balance = peaks.at(gpu, sums).balance("cuda_core")
        share = r.value / bound
        out.append(dict(problem=r.problem, precision=r.precision, impl=r.impl, GStencil_s=round(r.value, 1),
                        bound=round(bound, 1), share=round(share, 3), I=k / d, balance=round(balance, 1),
                        target="85%" if k / d < balance else "n/a (I above the balance)",
                        met=("yes" if share >= 0.85 else "no") if k / d < balance else ""))
    return pd.DataFrame(out)


def sweep_tiles(sts, depths, args, domains: dict) -> pd.DataFrame:
    """Every variant of cc_tb at each depth of each stencil in each precision: a row each, its rate or
    why it failed."""
    t0, gpu, limit = time.time(), S.device_gpu(), S._shared_limit("cuda")
    jobs = [(st, t, label, tile, prec) for prec in args.precisions for st in sts for t in depths
            if t <= P.MAX_DEPTH[st.dims] for label, tile in variants(st, t, gpu, fmt(prec).bytes).items()
            if not args.variants or label in args.variants]
    with ProcessPoolExecutor(os.cpu_count(), mp_context=multiprocessing.get_context("spawn")) as pool:
        refused = list(pool.map(compile_launch, [(st, t, tile, limit, fmt(prec).bytes)
                                                 for st, t, _, tile, prec in jobs]))  # NVRTC in parallel
    print(f"{gpu}: {len(jobs)} variants compiled in {time.time() - t0:.0f} s", flush=True)
    rng, rows = np.random.default_rng(0), []
    for (st, t, label, tile, prec), why in zip(jobs, refused):
        if time.time() - t0 > args.budget:
            print(f"budget spent: {st.name} t={t} {label} {prec} and later variants not measured", flush=True)
            break
        row = dict(gpu=gpu, problem=st.name, depth=t, precision=prec, variant=label, cc_kernel=tile["kernel"],
                   tile=tile_text(tile))
        if why is None:
            try:
                row = {**measured("cc_tb", replace(st, depth=t), args.steps, "cuda", args.warmup, args.reps,
                                  domains[st.dims], rng, tile, prec), **row}
            except measure.CheckError as err:
                why = f"FAILED {err}".splitlines()[0][:300]
            except Exception as err:  # noqa: BLE001 - a launch that cannot run is reported, the sweep goes on
                why = f"{type(err).__name__}: {err}".splitlines()[0][:200]
        rows.append({**row, "failed": why or ""})
        print(f"{st.name:7s} t={t} {prec} {label:13s} {row.get('value', float('nan')):8.1f} GStencil/s {why or ''}",
              flush=True)
    return pd.DataFrame(rows)


def best_tiles(frame: pd.DataFrame) -> pd.DataFrame:
    """The best checked variant per stencil, depth and precision, with today's tile's rate beside it."""
    ok = frame[frame.failed == ""]
    keys = ["problem", "depth", "precision"]
    best = ok.loc[ok.groupby(keys, sort=False).value.idxmax()]
    base = ok[ok.variant == "today"].set_index(keys).value
    return best.assign(today=[base.get(key, float("nan")) for key in zip(best.problem, best.depth, best.precision)])


def improvements(frame: pd.DataFrame, gpu: str, min_gain: float = MIN_GAIN) -> pd.DataFrame:
    """Per stencil, depth and precision of a tile sweep, the best checked variant where it beats the tile
    `gpu` runs today (stencil_plan.cc_tile, found by its text) by at least `min_gain`: TUNED's rule,
    with the TUNED line (keyed by the element size) that takes it."""
    ok, sts, out = frame[frame.failed.fillna("") == ""], {st.name: st for st in stencils()}, []
    for (name, depth, prec), group in ok.groupby(["problem", "depth", "precision"], sort=False):
        st, elem = sts[name], fmt(prec).bytes
        now = group[group.tile == tile_text(P.cc_tile(st, int(depth), gpu, elem))].value
        best = group.loc[group.value.idxmax()]
        if len(now) and best.value >= (1 + min_gain) * now.max():
            out.append(dict(problem=name, depth=depth, precision=prec, before=now.max(), value=best.value,
                            variant=best.variant, entry=entry_of(st, int(depth), best.tile, elem)))
    return pd.DataFrame(out, columns=["problem", "depth", "precision", "before", "value", "variant", "entry"])


def apply_improvements(found: pd.DataFrame, gpu: str, path: Path | None = None) -> Path:
    """Put `found`'s entries, each with a note of its gain and today's date, into tuned/<gpu>.yaml
    (`path`), over the entries of their keys; the file's path."""
    path = path or tiles.TUNED_DIR / f"{gpu}.yaml"
    when = f"tools/sweep_depths.py --tiles --apply, {time.strftime('%Y-%m-%d')}"
    tiles.apply(path, [{**r.entry, "note": f"{r.precision}: {r.before:.1f} -> {r.value:.1f} GStencil/s ({when})"}
                       for r in found.itertuples()])
    return path


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """GStencil/s per (stencil, impl) and depth, with the best depth and its rate."""
    table = rows.pivot_table(index=["problem", "impl"], columns="depth", values="value", sort=False)
    table.columns = [f"t={int(t)}" for t in table.columns]
    best = rows.loc[rows.groupby(["problem", "impl"], sort=False)["value"].idxmax()].set_index(["problem", "impl"])
    return table.round(1).assign(best=best["depth"].astype(int), best_GStencil_s=best["value"].round(1))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stencils", nargs="+", default=None, help="names from config/config.yaml (default: all)")
    parser.add_argument("--depths", nargs="+", type=int, default=list(range(1, 9)))
    parser.add_argument("--tiles", action="store_true", help="cc_tb's tile variants instead of cc_tb and tc")
    parser.add_argument("--warmup", type=int, default=None, help="default 3 (--tiles: 1)")
    parser.add_argument("--reps", type=int, default=None, help="default 10 (--tiles: 5)")
    parser.add_argument("--steps", type=int, default=12, help="time steps per timed call (rounded up per depth)")
    parser.add_argument("--budget", type=float, default=480, help="--tiles: seconds after which no variant starts")
    parser.add_argument("--precisions", nargs="+", default=["fp64"], choices=PRECISIONS)
    parser.add_argument("--impls", nargs="+", default=list(P.SWEPT), choices=list(IMPLS))
    parser.add_argument("--variants", nargs="+", default=None, help="--tiles: only these labels (default: all)")
    parser.add_argument("--apply", action="store_true", help="--tiles: put this GPU's tiles that beat today's by "
                        f">= {MIN_GAIN * 100:.0f}%% into kernels/stencil/tuned/<gpu>.yaml (commit them before a reference run)")
    args = parser.parse_args(argv)
    args.warmup = (1 if args.tiles else 3) if args.warmup is None else args.warmup
    args.reps = (5 if args.tiles else 10) if args.reps is None else args.reps
    cfg = yaml.safe_load(CONFIG.read_text())["stencil"]
    domains = {d: tuple(cfg[f"domain_{d}d"]) for d in (2, 3)}
    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    sts = stencils(args.stencils)
    if args.tiles:
        frame = sweep_tiles(sts, args.depths, args, domains)
        frame.to_csv(out / "sweep_tiles.csv", index=False)
        best = best_tiles(frame)
        best.to_csv(out / "best_tiles.csv", index=False)
        print("\nbest per stencil and depth (GStencil/s) beside today's tiles:")
        print(best[["problem", "depth", "precision", "variant", "cc_kernel", "value", "today"]].round(1)
              .to_string(index=False))
        print(f"\nentries of src/membound/kernels/stencil/tuned/{best.gpu.iloc[0]}.yaml:")
        for (name, depth), group in best.groupby(["problem", "depth"], sort=False):
            st = next(st for st in sts if st.name == name)
            if group.tile.nunique() == 1:     # one tile for every precision swept: one line
                print(f"  - {entry_text(entry_of(st, depth, group.tile.iloc[0], note=', '.join(group.precision)))}")
            else:                             # else a line per precision, keyed by its element size
                for r in group.itertuples():
                    print(f"  - {entry_text(entry_of(st, depth, r.tile, fmt(r.precision).bytes, r.precision))}")
        found = improvements(frame, best.gpu.iloc[0])
        print(f"\nfaster than today's tiles by >= {MIN_GAIN:.0%} (TUNED's rule):\n" +
              (found.drop(columns="entry").round(1).to_string(index=False) if len(found) else "none"))
        if args.apply and len(found):
            print(f"written into {apply_improvements(found, best.gpu.iloc[0])}")
        return 1 if frame.failed.str.startswith("FAILED").any() else 0
    rows, notes = sweep_depths(sts, args.depths, args, "cuda", domains, args.impls, args.precisions)
    if rows:
        measure.write_rows(rows, out / "sweep_depths.csv")
        frame = pd.DataFrame(rows)
        print("\nGStencil/s per depth (checked before timing; the best depth last)\n")
        print(summary(frame.assign(impl=frame.impl + " " + frame.precision)).to_string())
        shares = bandwidth_shares(frame, config.load_gpu(S.device_gpu()))
        if len(shares):
            shares.to_csv(out / "bandwidth_shares.csv", index=False)
            print("\ndepth 1 on CUDA cores against B/(2D) (issue 24: >= 85% where I is below the balance)\n")
            print(shares.to_string(index=False))
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return 1 if any(n.startswith("FAILED") for n in notes) else 0


if __name__ == "__main__":
    sys.exit(main())
