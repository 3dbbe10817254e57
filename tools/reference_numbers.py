"""The figures of a committed reference run, from its raw rows (a developer tool, not a rule;
tools/readme_tables.py writes the tables of README.md and docs/ from its functions):

    python tools/reference_numbers.py h200 [--against OLD_RAW_DIR]

Prints, from results/reference/<gpu>/raw/ alone: the rows of the stencil tables (docs/kernels_stencil.md;
GStencil/s, the median over repetitions of each run's median; share of B/(2d) at depth 1, B the spec's
bandwidth), the 2:4-sparse against the dense tensor cores at Table 3's depth, the GPU jobs' seconds per
family (Snakemake's benchmark files), and SCALE and GEMV at their largest size (with the cells of the
tables of docs/kernels_scale.md and kernels_gemv.md: GB/s and share of the spec's bandwidth; CUDA cores
against `gemv_tc`). With --against (the raw/ of an
earlier run, e.g. from `git archive`): each stencil implementation's geometric mean ratio against it.
Where the reference profile has rendered the GPU: the 2:4-sparse against the dense tensor cores where
the spec predicts scenario 4 (tables/classification.csv), the unblocked kernels against the copy of
their arrays (tables/bandwidth_stencils.csv), the fp64 SpMV beyond the L2 (C3's cases,
against DASP's figures of issue 21 in tools/bench_spmv.py, the twins), and its claims, a line per claim
and precision.
"""

import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from membound.kernels import gemv
from membound.model.precision import PRECISIONS, fmt
from membound.run import config

REPO = Path(__file__).resolve().parents[1]
KERNELS = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["stencil"]["kernels"]   # Table 3's depths
ROLES = ["cc_naive", "share", "cc_tb", "cc_tb_best", "tc", "tc_twin", "tc_sparse"]   # the tables' columns


def size(problem: str) -> int:
    """The n of a SCALE or GEMV problem name: 'n=2^28', 'n=16384' or 'n=2^27 x12' (a stencil field's copy)."""
    n = problem.split("=")[1].split()[0]
    base, _, exp = n.partition("^")
    return int(base) ** int(exp or 1)


def medians(raw: Path, family: str, column: str = "value") -> pd.Series:
    """Median over repetitions of each row's `column`, by (problem, precision, impl, depth)."""
    rows = pd.concat([pd.read_csv(f) for f in sorted(raw.glob(f"{family}*.csv"))])
    keys = [k for k in ("problem", "precision", "impl", "depth") if k in rows]
    return rows.groupby(keys, dropna=False)[column].median()


def measured(series: pd.Series) -> list[str]:
    """The precisions (PRECISIONS order) of medians' rows: a run without bf16 rows has no bf16 cells."""
    found = set(series.index.get_level_values("precision"))
    return [p for p in PRECISIONS if p in found]


def depthless(med: pd.Series) -> pd.Series:
    """Medians of a family without depths (SCALE, GEMV) without that level."""
    return med.droplevel("depth") if "depth" in med.index.names else med


def at_largest(raw: Path, family: str) -> pd.Series:
    """Medians (GB/s) of `family` at its largest problem, by (precision, impl)."""
    fam = depthless(medians(raw, family))
    return fam.xs(max(fam.index.get_level_values("problem"), key=size), level="problem")


def scale_cells(raw: Path, gpu: str) -> dict:
    """{precision: the SCALE table's cell}: CUDA cores / tensor cores, GB/s and share of the spec."""
    at, bandwidth = at_largest(raw, "scale"), config.load_gpu(gpu)["memory_bandwidth_TBs"] * 1e3
    gbs = {p: (at[(p, "cuda_core")], at[(p, "tensor_core")]) for p in measured(at)}
    return {p: f"{cc:.0f} / {tc:.0f} ({100 * cc / bandwidth:.1f}% / {100 * tc / bandwidth:.1f}%)"
            for p, (cc, tc) in gbs.items()}


GEMV_CC = {p: i.name for p in PRECISIONS for i in gemv.IMPLS     # precision -> the CUDA-core GEMV it runs
           if i.unit == "cuda_core" and i.backend == "cuda" and p in i.precisions}


def gemv_cells(raw: Path) -> dict:
    """{precision: the GEMV table's cell}: CUDA cores against `gemv_tc`, GB/s, and their ratio."""
    at = at_largest(raw, "gemv")
    return {p: f"{at[(p, cc)]:.0f} against {at[(p, 'gemv_tc')]:.0f} ({at[(p, 'gemv_tc')] / at[(p, cc)]:.3f})"
            for p, cc in GEMV_CC.items() if p in measured(at)}


def stencil_bound(gpu: str, precision: str) -> float:
    """B/(2d) in GStencil/s: a stencil point reads and writes one element of d bytes at the spec's B."""
    return config.load_gpu(gpu)["memory_bandwidth_TBs"] * 1e3 / (2 * fmt(precision).bytes)


def stencil_cells(med: pd.Series, gpu: str) -> dict:
    """{(precision, stencil): cells of its row in the stencil tables}, from the stencil medians."""
    out = {}
    for name, k in KERNELS.items():
        t = k["depth"]
        for p in measured(med):
            at = med.xs((name, p), level=("problem", "precision"))
            tb = at.loc["cc_tb"]
            naive, bound = at[("cc_naive", 1)], stencil_bound(gpu, p)
            cells = [f"{naive:.1f}", f"{100 * naive / bound:.1f}%", f"{at[('cc_tb', t)]:.1f}",
                     f"{tb.max():.1f} ({tb.idxmax()})", f"{at[('tc', t)]:.1f}", f"{at[('tc_twin', t)]:.1f}"]
            if ("tc_sparse", t) in at.index:
                cells.append(f"{at[('tc_sparse', t)]:.1f}")
            out[(p, name)] = cells
    return out


def sparse_ratios(med: pd.Series) -> dict:
    """{(precision, '2d'/'3d'): (min, max) of tc_sparse / tc at Table 3's depth}, from the stencil medians."""
    out = {}
    for p in [p for p in measured(med) if fmt(p).mma_sp]:     # tc_sparse's precisions
        for d in (2, 3):
            r = [med[(n, p, "tc_sparse", k["depth"])] / med[(n, p, "tc", k["depth"])]
                 for n, k in KERNELS.items() if k["dims"] == d]
            out[(p, f"{d}d")] = (min(r), max(r))
    return out


def job_seconds(raw: Path) -> pd.DataFrame:
    """GPU jobs' seconds (the last row of each Snakemake benchmark file), family x benchmarks/counters."""
    rows = []
    for f in sorted((raw / "benchmarks").glob("*.tsv")):
        kind, family = f.name.split(".")[0].split("_", 1)
        rows.append({"family": family, "kind": kind, "s": pd.read_csv(f, sep="\t")["s"].iloc[-1]})
    return pd.DataFrame(rows).pivot_table(index="family", columns="kind", values="s", aggfunc="sum")


def against(med: pd.Series, old: Path) -> pd.DataFrame:
    """Per stencil implementation: geometric mean, min and max of new / old over the configurations of both."""
    ratio = (med / medians(old, "stencil")).dropna()
    return ratio.groupby(level="impl").agg(geomean=lambda r: float(np.exp(np.log(r).mean())), lo="min", hi="max",
                                           configurations="size")


def claims(run: Path) -> list[dict]:
    """The rendered claims.json's claims (none where the reference profile has not rendered the GPU)."""
    path = run / "claims.json"
    return json.loads(path.read_text())["claims"] if path.exists() else []


def scenario4(run: Path, med: pd.Series) -> pd.Series:
    """tc_sparse / tc at each configuration where the spec predicts scenario 4 for the sparse tensor cores
    (paper 002; the rendered tables/classification.csv), by (stencil, precision, depth)."""
    cls = pd.read_csv(run / "tables" / "classification.csv")
    sc4 = cls[(cls.sparsity != "dense") & (cls.scenario == 4)]
    return pd.Series({(r.problem, r.precision, int(r.depth)): med[(r.problem, r.precision, "tc_sparse", r.depth)]
                      / med[(r.problem, r.precision, "tc", r.depth)] for r in sc4.itertuples()}, dtype=float)


def dasp_figures(gpu: str) -> dict:
    """Issue 21's GFLOP/s of the original DASP on this GPU (tools/bench_spmv.DASP_ISSUE21; none elsewhere)."""
    spec = importlib.util.spec_from_file_location("bench_spmv", REPO / "tools" / "bench_spmv.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.DASP_ISSUE21.get(gpu, {})


def spmv_lines(run: Path, raw: Path, gpu: str) -> list[str]:
    """fp64 SpMV: t_TC/t_CC of each matrix beyond the L2 (C3's cases), ours / DASP in GFLOP/s with the
    geometric mean over those beyond the L2, and the range of the twins' speedups t_twin / t_TC."""
    c3 = next((c for c in claims(run) if c["id"] == "C3" and c["precision"] == "fp64"), None)
    if c3 is None:
        return []
    beyond = {c["problem"]: c["ratio"] for c in c3["cases"] if c["larger_than_L2"]}
    fp64 = {c: medians(raw, "spmv", c).xs("fp64", level="precision") for c in ("value", "t_median_s")}
    gflops, t = (m.droplevel("depth") if "depth" in m.index.names else m for m in fp64.values())
    ours = {m: gflops[(m, "dasp_tc")] / f for m, f in dasp_figures(gpu).items()}
    far = [r for m, r in ours.items() if m in beyond]
    twin = t.xs("dasp_tc_twin", level="impl") / t.xs("dasp_tc", level="impl")
    return ["fp64 SpMV t_TC/t_CC beyond the L2: " + ", ".join(f"{m} {r:.3f}" for m, r in sorted(beyond.items())),
            "ours / DASP (issue 21): " + ", ".join(f"{m} {r:.3f}" + ("" if m in beyond else " (in the L2)")
                                                   for m, r in ours.items())
            + (f"; geomean beyond the L2 {np.exp(np.mean(np.log(far))):.3f} over {len(far)}" if far else ""),
            f"twin speedup t_twin/t_TC: {twin.min():.3f} ({twin.idxmin()}) - {twin.max():.3f} ({twin.idxmax()})"]


def geomean(r) -> float:
    return float(np.exp(np.log(np.asarray(r, dtype=float)).mean()))


def pair_lines(run: Path, raw: Path, med: pd.Series, a: str, b: str) -> list[str]:
    """Precision `a` against `b` (speed ratios, > 1: `a` faster): SCALE on CUDA cores at n >= 2^26 (not the
    stencils' copies), each
    tensor-core SCALE against its CUDA-core sibling, the tensor-core SpMV over the matrices beyond the L2
    in both, and the best kernel per stencil on CUDA cores (cc_naive, cc_tb at any depth) and on tensor
    cores (tc, tc_sparse at any depth), as geometric means."""
    sc = depthless(medians(raw, "scale"))
    big = sorted({q for q in sc.index.get_level_values("problem") if " x" not in q and size(q) >= 2**26}, key=size)
    cc = [sc[(q, a, "cuda_core")] / sc[(q, b, "cuda_core")] for q in big]
    tc = {p: [sc[(q, p, "tensor_core")] / sc[(q, p, "cuda_core")] for q in big] for p in (a, b)}
    f7 = pd.read_csv(run / "figures" / "fig7_spmv.csv")
    f7 = f7[(f7["unit"] == "tensor_core") & (f7["impl"] == "dasp_tc") & f7["larger_than_L2"]]
    spmv = f7.pivot_table(index="problem", columns="precision", values="value")[[a, b]].dropna()
    best = {}
    for unit, impls in (("CUDA cores", ["cc_naive", "cc_tb"]), ("tensor cores", ["tc", "tc_sparse"])):
        m = med[med.index.get_level_values("impl").isin(impls)].groupby(level=("problem", "precision")).max()
        best[unit] = [m[(n, a)] / m[(n, b)] for n in KERNELS]
    return [f"\n{a} / {b}:",
            f"  SCALE CUDA cores at n >= 2^26: {min(cc):.3f}-{max(cc):.3f} ({', '.join(big)})",
            *(f"  SCALE tensor cores / CUDA cores in {p}: {min(r):.3f}-{max(r):.3f}" for p, r in tc.items()),
            f"  SpMV tensor cores beyond the L2: geomean {geomean(spmv[a] / spmv[b]):.3f} over {len(spmv)} matrices",
            *(f"  best stencil kernel on {u}: geomean {geomean(r):.3f}, {min(r):.3f}-{max(r):.3f}"
              for u, r in best.items())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gpu")
    parser.add_argument("--against", type=Path, help="the raw/ folder of an earlier run")
    parser.add_argument("--pair", nargs=2, metavar=("A", "B"), help="precision A against precision B (speed ratios)")
    args = parser.parse_args(argv)
    run = REPO / "results" / "reference" / args.gpu
    raw = run / "raw"
    med = medians(raw, "stencil")
    cells = stencil_cells(med, args.gpu)
    for p in measured(med):
        rows = {name: row for (q, name), row in cells.items() if q == p}
        print(f"\n{p}: " + " | ".join(ROLES[: len(next(iter(rows.values())))]))
        for name, row in rows.items():
            print(f"| {name} | {args.gpu.upper()} | " + " | ".join(row) + " |")
    print("\ntc_sparse / tc at Table 3's depth:",
          "; ".join(f"{p} {d} {lo:.2f}-{hi:.2f}" for (p, d), (lo, hi) in sparse_ratios(med).items()))
    jobs = job_seconds(raw)
    print("\nGPU jobs (s):\n" + jobs.round(1).to_string() + f"\nall {jobs.sum().round(1).to_dict()}, "
          f"total {jobs.sum().sum():.1f}")
    for family in ("scale", "gemv"):
        print(f"\n{family} at its largest size (GB/s):\n" + at_largest(raw, family).round(0).to_string())
    print("\ntable cells, SCALE:", scale_cells(raw, args.gpu), "\ntable cells, GEMV:", gemv_cells(raw))
    if args.against:
        print("\nagainst " + str(args.against) + ":\n" + against(med, args.against).round(3).to_string())
    if (run / "tables" / "classification.csv").exists():
        sc4 = scenario4(run, med)
        print(f"\nscenario 4 (sparse): tc_sparse beats tc on {int((sc4 > 1).sum())} of {len(sc4)}; slower: "
              + ", ".join(f"{n} {p} t={d} {r:.2f}" for (n, p, d), r in sc4[sc4 <= 1].items()))
    if (run / "tables" / "bandwidth_stencils.csv").exists():
        print("\nunblocked against the copy (share of B, the copy's share of B, share of the copy):")
        bw = pd.read_csv(run / "tables" / "bandwidth_stencils.csv")
        for r in bw[bw["impl"] == "cc_naive"].itertuples():
            print(f"  {r.precision} {r.stencil}: {100 * r.share_of_B:.1f}%, {100 * r.copy_share_of_B:.1f}% "
                  f"({r.copy_launches:.0f} launches a call), {r.share_of_copy:.2f}")
    for line in spmv_lines(run, raw, args.gpu):
        print(line)
    if args.pair:
        print("\n".join(pair_lines(run, raw, med, *args.pair)))
    for c in claims(run):
        print(f"{c['id']} {c['precision']}: {c['verdict']}, {c['summary']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
