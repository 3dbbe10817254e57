"""Developer benchmark (not a workflow rule), on a GPU: the SpMV impls on the 21 surrogates in every
precision, through the workflow's own path (spmv.jobs: checked against the precision's bound, then
timed), beside the original DASP's FP64 figures of issue 21. Writes $OUT/bench_spmv.csv (the harness
rows) and prints, per matrix, GFLOP/s = 2 nnz / median time and the ratios, then the geomeans over
the matrices beyond the L2 (the FP64 size, paper 000 eq. 10, against this GPU's L2).

    python tools/bench_spmv.py                            # all 21, fp64 fp32 fp16, cuSPARSE, dasp_tc, twin
    python tools/bench_spmv.py --precisions fp64 --matrices FullChip dc2
    python tools/bench_spmv.py --variants                 # fp64 dasp_tc per plan/kernel variant, DASP's matrices
    python tools/bench_spmv.py --variants minb5_unroll2   # the default beside the variants named
    python tools/bench_spmv.py --variants dasp_contract   # ... and y left in the plan's order, as DASP leaves it

Matrices: data/csr/surrogate-1.0/<name>.npz where the workflow made them, else generated here
(membound.matrices.surrogate, several processes, all before the first timed launch) into $MATS
(default /tmp/membound-surrogates); then loaded one at a time in this process.
"""
import argparse
import os
import sys
import time
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from membound.kernels import harness, spmv
from membound.kernels.spmv import tc_plan as spmv_plan
from membound.matrices import csr, surrogate
from membound.model import equations as model
from membound.model.precision import PRECISIONS, decode, fmt
from membound.run import config, detect

# The yardstick: GFLOP/s of the original DASP (commit 8ce8363, its own harness, FP64) on membound's
# surrogates, MEASURED BY THE AUTHOR OF ISSUE 21 on 2026-11-23 (same machines, same day), typed in
# from the issue; not measured by this script. DASP printed no result on webbase-1M.
DASP_ISSUE21 = {
    "h100": {"ASIC_680k": 250.9, "FullChip": 330.9, "Ga41As41H72": 438.5, "Si41Ge41H72": 436.1, "circuit5M": 260.1,
             "consph": 346.3, "eu-2005": 293.2, "in-2004": 269.7, "mip1": 310.4, "pdb1HYS": 291.4, "pwtk": 386.3,
             "shipsec1": 374.1, "cant": 286.6, "conf5_4-8x8-10": 496.9, "cop20k_A": 417.9, "dc2": 123.2},
    "h200": {"FullChip": 450.2, "Ga41As41H72": 571.7, "Si41Ge41H72": 574.7, "circuit5M": 376.9, "consph": 404.4,
             "eu-2005": 331.5, "in-2004": 305.2, "mip1": 344.4, "pwtk": 471.5, "shipsec1": 453.8},
}
IMPLS = ("cusparse_csr", "dasp_tc", "dasp_tc_twin")


def every(value) -> dict:
    """A per-precision knob of spmv.py set to `value` in every precision."""
    return dict.fromkeys(PRECISIONS, value)


def every_s(value) -> dict:
    """A per-S knob of spmv_plan.py (SEGS, TARGET) set to `value` for every S."""
    return dict.fromkeys(spmv_plan.SEGS, value)


# (module, attribute, value) changes of one variant of the tensor-core kernel and its plan
VARIANTS = {"default": [], "unroll2": [(spmv, "TC_UNROLL", every(2))], "unroll4": [(spmv, "TC_UNROLL", every(4))],
            "unroll8": [(spmv, "TC_UNROLL", every(8))],
            "minb1": [(spmv, "TC_MINB", 1)], "minb5": [(spmv, "TC_MINB", 5)], "minb6": [(spmv, "TC_MINB", 6)],
            **{f"piece{t}": [(spmv_plan, "PIECE_TILES", (t, t))] for t in (8, 16, 32, 64)},
            **{f"piece8to{t}": [(spmv_plan, "PIECE_TILES", (8, t))] for t in (32, 64, 128)},
            **{f"share{n}": [(spmv_plan, "PIECE_SHARE", n)] for n in (1024, 2048, 8192)},
            **{f"ahead{a}": [(spmv, "TC_AHEAD", a)] for a in (0, 1024, 2048, 4096, 8192)},
            **{f"target{n}": [(spmv_plan, "TARGET", every_s(n))] for n in (2, 4, 8, 16)},
            "window512": [(spmv_plan, "WINDOW", 512)],
            "window65536": [(spmv_plan, "WINDOW", 65536)], "seg2": [(spmv_plan, "SEGS", every_s(2))],
            "unpacked": [(spmv_plan, "SEGS", every_s(1))],
            "seg4": [(spmv_plan, "SEGS", every_s(4))],
            "seg4_piece8to64": [(spmv_plan, "SEGS", every_s(4)),
                                (spmv_plan, "PIECE_TILES", (8, 64))],
            **{f"minb{b}_unroll2": [(spmv, "TC_MINB", b), (spmv, "TC_UNROLL", every(2))] for b in (5, 6, 8)},
            "minb5_unroll2_target16": [(spmv, "TC_MINB", 5), (spmv, "TC_UNROLL", every(2)),
                                       (spmv_plan, "TARGET", every_s(16))],
            **{f"segfree{b}": [(spmv, "TC_SEGFREE", every(b))] for b in (0, 1, 3)},
            **{f"pref{p}": [(spmv, "TC_PREF", every((p, p)))] for p in (0, 4, 16)},
            **{f"pipe0_unroll2_minb{b}": [(spmv, "TC_PIPE", every(0)), (spmv, "TC_UNROLL", every(2)),
                                          (spmv, "TC_MINB", b)] for b in (5, 6)},
            **{f"pipe{p}": [(spmv, "TC_PIPE", every(p))] for p in (0, 1)},
            **{f"pipe{p}_unroll{u}": [(spmv, "TC_PIPE", every(p)), (spmv, "TC_UNROLL", every(u))]
               for p in (0, 1) for u in (2, 3, 4)},
            **{f"threads{n}": [(spmv, "THREADS", n)] for n in (32, 64, 128, 256)},
            "dasp_contract": [(spmv, "ORDER", 1)]}


def entries(names):
    listed = yaml.safe_load(open("config/matrices.yaml"))["matrices"]
    unknown = set(names or []) - {e["name"] for e in listed}
    if unknown:
        sys.exit(f"--matrices {sorted(unknown)}: not in config/matrices.yaml")
    return [e for e in listed if not names or e["name"] in names]


def surrogate_file(entry) -> Path:
    """The surrogate of `entry`: the workflow's file, else a cached one, made here (several processes)
    where neither exists."""
    paths = [Path("data/csr/surrogate-1.0") / f"{entry['name']}.npz",
             Path(os.environ.get("MATS", "/tmp/membound-surrogates")) / f"{entry['name']}.npz"]
    found = next((path for path in paths if path.is_file()), None)
    if found is None:
        found = paths[-1]
        found.parent.mkdir(parents=True, exist_ok=True)
        csr.save(found, *surrogate.generate(entry))
    return found


PLAN_KNOBS = ("LONG", "PIECE_SHARE", "PIECE_TILES", "SEGS", "TARGET", "WINDOW")
PLANS: dict = {}   # (s, plan knobs) -> Plan of the current matrix: a variant of the kernel only reuses it
make_plan = spmv.plan


def cached_plan(indptr, s):
    key = (s, *(repr(getattr(spmv_plan, k)) for k in PLAN_KNOBS))
    if key not in PLANS:
        PLANS[key] = make_plan(indptr, s)
    return PLANS[key]


def dasp_contract(prepare):
    """`prepare` of a tensor-core case built with spmv.ORDER: timed, its y is left in the plan's order, as
    DASP leaves its y; checked once put in the matrix's order (y[rows] = yp, outside the timing)."""
    def prepared():
        case = prepare()
        dev = case.run.keep
        slots = dev["rows"] >= 0

        def output(result):
            y = case.output(result)   # a float64 copy: the long rows, the rest NaN
            y[dev["rows"][slots]] = decode(dev["yp"][slots], case.precision)
            return y
        return replace(case, output=output, notes=[*case.notes, "timed: y left in the plan's order (DASP's output)"])
    return prepared


def measure(matrix, meta, precisions, impls, warmup, reps, variant="default"):
    """Checked and timed rows of `impls` on one matrix, under `variant` (restored afterwards)."""
    saved = [(mod, attr, getattr(mod, attr)) for mod, attr, _ in VARIANTS[variant]]
    for mod, attr, value in VARIANTS[variant]:
        setattr(mod, attr, value)
    try:
        rows = []
        for impl, prepare in spmv.jobs("cuda", matrix, meta, np.random.default_rng(0), precisions):
            if impl.name in impls:
                if spmv.ORDER and impl.name.startswith("dasp_tc"):   # cuSPARSE writes y as ever
                    prepare = dasp_contract(prepare)
                rows.append({**harness.measure(impl, prepare, "cuda", warmup, reps), "variant": variant})
        return rows
    finally:
        for mod, attr, value in saved:
            setattr(mod, attr, value)


def beyond_l2(frame: pd.DataFrame, l2_mb: float, precision: str = "fp64") -> pd.Series:
    d = fmt(precision).bytes
    return pd.Series({r.problem: model.csr_wq(r.rows, r.cols, r.nnz, d=d)[1] / model.MB > l2_mb
                      for r in frame.drop_duplicates("problem").itertuples()})


def geomean(values) -> float:
    values = np.asarray(list(values), float)
    return float(np.exp(np.log(values).mean())) if len(values) else float("nan")


def report(frame: pd.DataFrame, gpu: str, l2_mb: float) -> None:
    """Per precision: GFLOP/s per matrix and ratios; against DASP in fp64; geomeans beyond the L2."""
    for p, part in frame.groupby("precision", sort=False):
        table = part.pivot_table(index="problem", columns="impl", values="value", sort=False)
        big = beyond_l2(part, l2_mb, p)
        if "dasp_tc" in table and "cusparse_csr" in table:
            table["tc/cuSPARSE"] = table["dasp_tc"] / table["cusparse_csr"]
        if p == "fp64" and "dasp_tc" in table:
            for g, figures in DASP_ISSUE21.items():
                table[f"DASP {g} (issue 21)"] = table.index.map(figures)
                table[f"ours/DASP {g}"] = table["dasp_tc"] / table[f"DASP {g} (issue 21)"]
        table["> L2"] = big
        print(f"\n{p} GFLOP/s on {gpu} (L2 {l2_mb:g} MB; DASP columns: the issue author's measurements)")
        print(table.round(2).to_string())
        if "tc/cuSPARSE" in table:
            ratio = geomean(table.loc[big[big].index, "dasp_tc"]) / geomean(table.loc[big[big].index, "cusparse_csr"])
            print(f"{p}: geomean dasp_tc / geomean cuSPARSE beyond the L2 ({int(big.sum())} matrices): {ratio:.3f}")
        column = f"ours/DASP {gpu}"
        if column in table:
            beyond = table[big & table[column].notna()]
            print(f"fp64 ours/DASP ({gpu}, issue 21 figures) beyond the L2 ({len(beyond)} matrices): geomean "
                  f"{geomean(beyond[column]):.3f}, worst {beyond[column].min():.2f} ({beyond[column].idxmin()}); "
                  f"matrices below 0.9: {', '.join(table.index[table[column] < 0.9]) or 'none'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--precisions", nargs="+", default=list(PRECISIONS), choices=PRECISIONS)
    parser.add_argument("--matrices", nargs="+", help="names from config/matrices.yaml (default: all 21)")
    parser.add_argument("--impls", nargs="+", default=list(IMPLS), choices=IMPLS)
    parser.add_argument("--variants", nargs="*", choices=list(VARIANTS), default=None,
                        help="dasp_tc (or --impls) per VARIANTS, or those named (fp64 unless --precisions)")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    gpu = detect.profile_for(detect.device_names())
    l2_mb = float(config.load_gpu(gpu)["l2_MB"]) if gpu != "cpu" else 50.0
    swept = args.variants is not None
    variants = ["default", *[v for v in args.variants or VARIANTS if v != "default"]] if swept else ["default"]
    spmv.plan = cached_plan
    if swept:
        names = args.matrices or sorted(set(DASP_ISSUE21["h100"]) | set(DASP_ISSUE21["h200"]))
        precisions = args.precisions if "--precisions" in sys.argv else ["fp64"]
        impls = args.impls if "--impls" in sys.argv else ["dasp_tc"]
    else:
        names, precisions, impls = args.matrices, args.precisions, args.impls
    rows, t0 = [], time.time()
    # every file made before the first timed launch: no process (nor the transfer of a matrix between
    # processes) competes with the timing (the suspected cause of the first matrices' rows 2-10x slow
    # in 4 of 7 runs on 2026-11-25, while a pool of 8 handed the matrices over; not re-measured)
    with Pool(min(8, os.cpu_count() or 1)) as pool:
        files = pool.map(surrogate_file, entries(names))
    for path in files:
        matrix, meta = csr.load(path)
        PLANS.clear()
        for v in variants:
            rows += measure(matrix, meta, precisions, impls, args.warmup, args.reps, v)
        print(f"{meta['name']}: {time.time() - t0:.0f} s", flush=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(out / ("bench_spmv_variants.csv" if swept else "bench_spmv.csv"), index=False)
    if swept:
        for (p, impl), part in frame.groupby(["precision", "impl"], sort=False):
            table = part.pivot_table(index="problem", columns="variant", values="value", sort=False)[variants]
            print(f"\n{p} {impl} GFLOP/s per variant on {gpu}; geomean over the matrices beyond the L2 last")
            big = beyond_l2(part, l2_mb, p)
            print(table.round(1).to_string())
            print(pd.Series({v: geomean(table.loc[big[big].index, v]) for v in variants}).round(1).to_string())
    else:
        report(frame, gpu, l2_mb)


if __name__ == "__main__":
    main()
