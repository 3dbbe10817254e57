"""The generated tables of README.md and docs/*.md, from the committed reference runs (a developer tool,
not a rule; tests/test_readme_tables.py holds every block to it):

    python tools/readme_tables.py            # rewrite every block in README.md and docs/*.md
    python tools/readme_tables.py --check    # exit 1 naming each block that differs

A block is the text between `<!-- membound:KIND ARG -->` and `<!-- /membound -->`. KIND is a key of
BLOCKS: `run`, `claims` and `ratios` take a GPU (`claims` reads results/reference/<gpu>/claims.json, which
`snakemake --profile profiles/reference all` renders; the others read results/reference/<gpu>/raw/ alone),
`stencil` a precision, `roofs`, `scale`, `gemv`, `spmv` and `jobs` nothing (every GPU with a reference run).
"""

import argparse
import functools
import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np

from membound.analysis import bandwidth, roofs, wqi
from membound.analysis.claims import report as claims_report
from membound.counters import ncu
from membound.model.precision import PRECISIONS
from membound.run import config

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "results" / "reference"
spec = importlib.util.spec_from_file_location("reference_numbers", Path(__file__).with_name("reference_numbers.py"))
numbers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(numbers)

BLOCK = re.compile(r"(<!-- membound:(\w+) ?([\w.]*) -->\n)(.*?)(<!-- /membound -->)", re.DOTALL)


def gpus() -> list[str]:
    """The GPUs with a committed reference run, the h100 first."""
    return sorted((p.parent.name for p in REFERENCE.glob("*/raw")), key=lambda g: (g != "h100", g))


def table(head: list[str], rows: list[list[str]], right: int = 1) -> str:
    """A markdown table; the columns from `right` on are right-aligned."""
    rule = ["---" if i < right else "---:" for i in range(len(head))]
    return "\n".join("| " + " | ".join(r) + " |" for r in (head, rule, *rows)) + "\n"


def geomean(values) -> float:
    return float(np.exp(np.mean(np.log(np.asarray(list(values), dtype=float)))))


def run_line(gpu: str) -> str:
    """The run that measured a GPU's reference: its commit, devices and date (raw/inventory.json)."""
    inv = json.loads((REFERENCE / gpu / "raw" / "inventory.json").read_text())
    devices = [d["name"] for d in inv["gpus"]["devices"]]
    return (f"{gpu.upper()}: commit {inv['workflow']['commit'][:7]}, {len(devices)} x {devices[0]}, "
            f"{inv['date'][:10]}, CUDA {inv['cuda']['runtime']}, CuPy {inv['cuda']['cupy']}\n")


def precisions(*gs: str) -> list[str]:
    """The precisions the reference runs of GPUs `gs` measured (their SCALE rows; PRECISIONS order): a
    precision without rows there, such as bf16 in the H100 run, gets no column."""
    found = {p for g in gs for p in numbers.measured(numbers.medians(REFERENCE / g / "raw", "scale"))}
    return [p for p in PRECISIONS if p in found]


def claims_block(gpu: str) -> str:
    path = REFERENCE / gpu / "claims.json"
    if not path.exists():
        raise SystemExit(f"{path} is missing: run `snakemake --profile profiles/reference all` first")
    return claims_report.claims_table(json.loads(path.read_text()))


@functools.cache
def roof_table(gpu: str):
    """Table `bandwidth` of a GPU's reference run with each depth-1 stencil's roof (analysis/roofs.py)."""
    raw, spec = REFERENCE / gpu / "raw", config.load_gpu(gpu)
    stencil, scale = (wqi.read_rows(sorted(raw.glob(f"{family}*.csv"))) for family in ("stencil", "scale"))
    frame = bandwidth.table(stencil, scale, spec["memory_bandwidth_TBs"])
    return roofs.table(frame, spec, ncu.read_rows([raw / "counters" / "stencil.csv"]),
                       wqi.read_rows([raw / "counters" / "stencil.rows.csv"]))


def unblocked(gpu: str, precision: str):
    """The unblocked (cc_naive) rows of roof_table in one precision, by stencil."""
    t = roof_table(gpu)
    return t[(t["impl"] == "cc_naive") & (t["precision"] == precision)].set_index("stencil")


def roof_shares(gpu: str, precision: str) -> str:
    """The unblocked stencils' shares of their roofs, lowest-highest per roof; a pipe's stencils named."""
    cells = []
    for roof, rows in unblocked(gpu, precision).groupby("roof", sort=False):
        lo, hi = rows["share_of_roof"].min(), rows["share_of_roof"].max()
        cells.append(f"{roof} {lo:.2f}" + (f"-{hi:.2f}" if f"{hi:.2f}" != f"{lo:.2f}" else "")
                     + ("" if roof == "copy" else f" ({', '.join(rows.index)})"))
    return "; ".join(cells)


def ratio(med, num: str, den: str) -> float:
    """Geometric mean over the problems of both impls of med[num] / med[den] (speeds: > 1, num faster)."""
    a, b = med.xs(num, level="impl"), med.xs(den, level="impl")
    return geomean((a / b).dropna())


def ratios_block(gpu: str) -> str:
    """The headline ratios per precision: each tensor-core kernel's speed over its CUDA-core counterpart's."""
    raw = REFERENCE / gpu / "raw"
    scale, gemv = numbers.at_largest(raw, "scale"), numbers.at_largest(raw, "gemv")
    spmv = numbers.medians(raw, "spmv").droplevel("depth")
    sten = numbers.medians(raw, "stencil")
    bandwidth = config.load_gpu(gpu)["memory_bandwidth_TBs"] * 1e3
    rows = {"SCALE at 2^28: tensor cores / CUDA cores": [], "SCALE at 2^28: CUDA cores' share of B": [],
            "GEMV at n = 16384: `gemv_tc` / CUDA cores (cuBLAS; fp16 `gemv_half2`)": [],
            "SpMV, geomean over the surrogates: tensor cores / cuSPARSE": [],
            "SpMV: the tensor cores' CUDA-core twin / cuSPARSE": [],
            "stencils at Table 3's depth, geomean of 6: dense tensor cores / temporal blocking": [],
            "stencils: 2:4-sparse tensor cores / temporal blocking": [],
            "stencils unblocked at depth 1: share of their roof (the copy or a pipe), lowest-highest": []}
    for p in precisions(gpu):
        s = spmv.xs(p, level="precision")
        at = {n: sten.xs((n, p), level=("problem", "precision")) for n in numbers.KERNELS}
        t = {n: k["depth"] for n, k in numbers.KERNELS.items()}
        tb = [at[n][("cc_tb", t[n])] for n in at]
        sparse = [at[n].get(("tc_sparse", t[n])) for n in at]
        values = [scale[(p, "tensor_core")] / scale[(p, "cuda_core")],
                  f"{100 * scale[(p, 'cuda_core')] / bandwidth:.1f}%",
                  gemv[(p, "gemv_tc")] / gemv[(p, numbers.GEMV_CC[p])],
                  ratio(s, "dasp_tc", "cusparse_csr"), ratio(s, "dasp_tc_twin", "cusparse_csr"),
                  geomean(at[n][("tc", t[n])] for n in at) / geomean(tb),
                  geomean(sparse) / geomean(tb) if all(v is not None for v in sparse) else "-",
                  roof_shares(gpu, p)]
        for row, v in zip(rows.values(), values):
            row.append(v if isinstance(v, str) else f"{v:.2f}")
    return table(["speed ratio (> 1: the first faster)", *precisions(gpu)], [[k, *v] for k, v in rows.items()])


def roofs_block(_=None) -> str:
    """Each unblocked stencil's roof (GStencil/s) and its share of it per GPU; under roofs.UNDER, what
    the counters show: DRAM against the copy, the busiest pipe against its peak, the issue slots used."""
    def cells(g, p, n):
        t = unblocked(g, p)
        if n not in t.index:
            return ["", ""]
        r = t.loc[n]
        issue = f", issue slots {r['GStencil_s'] / r['issue_GStencil_s']:.2f}" if r["issue_GStencil_s"] > 0 else ""
        why = (f" (DRAM {r['GStencil_s'] / r['copy_GStencil_s']:.2f}, {r['pipe']} "
               f"{r['GStencil_s'] / r['pipe_GStencil_s']:.2f}{issue})"
               if r["share_of_roof"] < roofs.UNDER and r["pipe"] else "")
        return [f"{r['roof']} {r['roof_GStencil_s']:.1f}", f"{r['share_of_roof']:.3f}{why}"]
    rows = [[n if i == 0 else "", p, *(c for g in gpus() for c in cells(g, p, n))]
            for n in numbers.KERNELS for i, p in enumerate(precisions(*gpus()))]
    head = [f"{g.upper()} {c}" for g in gpus() for c in ("roof, GStencil/s", "share (DRAM, pipe)")]
    return table(["stencil", "precision", *head], rows, right=2)


def stencil_block(precision: str) -> str:
    """The stencil table of one precision, a row per stencil and GPU (reference_numbers.stencil_cells)."""
    head = ["stencil (t)", "GPU", "unblocked", "share of B/(2d)", "temporal blocking at t",
            "best temporal blocking (depth)", "tensor cores at t", "CUDA-core twin"]
    cells = {g: numbers.stencil_cells(numbers.medians(REFERENCE / g / "raw", "stencil"), g) for g in gpus()}
    rows = [[f"{n} ({k['depth']})" if i == 0 else "", g.upper(), *cells[g][(precision, n)]]
            for n, k in numbers.KERNELS.items() for i, g in enumerate(gpus())]
    if len(rows[0]) > len(head):
        head.append("2:4-sparse tensor cores at t")
    return table(head, rows, right=2)


# fp64 GStencil/s of the original EBISU (9b6183a) as issue 23 gives them, typed in, not measured here
EBISU_ISSUE23 = {"h100": {"2d5pt": 503.7, "2d9pt": 476.9, "2d13pt": 165.4, "2d49pt": 141.7, "3d7pt": 227.2,
                          "3d27pt": 118.5},
                 "h200": {"2d5pt": 628.1, "2d9pt": 569.6, "2d13pt": 235.2, "2d49pt": 167.1, "3d7pt": 236.1,
                          "3d27pt": 118.3}}


def ebisu_block(_=None) -> str:
    """fp64: membound's best CUDA-core figure at any depth against EBISU's figure of issue 23."""
    rows = []
    for n in numbers.KERNELS:
        for i, g in enumerate(gpus()):
            tb = numbers.medians(REFERENCE / g / "raw", "stencil").xs((n, "fp64", "cc_tb"),
                                                                        level=("problem", "precision", "impl"))
            ebisu = EBISU_ISSUE23.get(g, {}).get(n)
            rows.append([n if i == 0 else "", g.upper(), f"{tb.max():.1f} ({tb.idxmax()})",
                         *((f"{ebisu:.1f}", f"{tb.max() / ebisu:.2f}") if ebisu else ("", ""))])
    return table(["stencil", "GPU", "membound, best temporal blocking (depth)", "EBISU (issue 23)", "ratio"],
                 rows, right=2)


def scale_block(_=None) -> str:
    rows = [[p, *(numbers.scale_cells(REFERENCE / g / "raw", g).get(p, "") for g in gpus())] for p in precisions(*gpus())]
    return table(["precision", *(f"{g.upper()}: CUDA cores / tensor cores, GB/s (share of B)" for g in gpus())], rows)


def gemv_block(_=None) -> str:
    rows = [[p, numbers.GEMV_CC[p], *(numbers.gemv_cells(REFERENCE / g / "raw").get(p, "") for g in gpus())]
            for p in precisions(*gpus())]
    return table(["precision", "CUDA cores", *(f"{g.upper()}: GB/s against `gemv_tc` (ratio)" for g in gpus())],
                 rows, right=2)


def spmv_block(_=None) -> str:
    """Per matrix, fp64 GFLOP/s of cuSPARSE, the tensor cores and their twin on each GPU, and the tensor
    cores against the original DASP's figure where issue 21 measured one (tools/bench_spmv.py)."""
    med = {g: numbers.medians(REFERENCE / g / "raw", "spmv").droplevel("depth").xs("fp64", level="precision")
           for g in gpus()}
    dasp = {g: numbers.dasp_figures(g) for g in gpus()}
    order = med[gpus()[0]].xs("cusparse_csr", level="impl").sort_values(ascending=False).index
    impls = ("cusparse_csr", "dasp_tc", "dasp_tc_twin")

    def cells(g, m):
        ours, d = [f"{med[g][(m, i)]:.1f}" for i in impls], dasp[g].get(m)
        return ours + ([f"{d:.1f}", f"{med[g][(m, 'dasp_tc')] / d:.3f}"] if d else ["", ""])
    head = [f"{g.upper()} {c}" for g in gpus() for c in ("cuSPARSE", "tensor cores", "twin", "DASP", "TC / DASP")]
    return table(["matrix", *head], [[m, *(c for g in gpus() for c in cells(g, m))] for m in order])


def jobs_block(_=None) -> str:
    """Seconds of the GPU jobs per family, benchmarks (summed over repetitions) and counters."""
    jobs = {g: numbers.job_seconds(REFERENCE / g / "raw") for g in gpus()}
    families = list(dict.fromkeys(f for j in jobs.values() for f in j.index))
    rows = [[f, *(f"{j.loc[f, k]:.1f}" if f in j.index and k in j and j.loc[f, k] == j.loc[f, k] else ""
                  for j in jobs.values() for k in ("bench", "counters"))] for f in families]
    rows.append(["all", *(f"{j[k].sum():.1f}" for j in jobs.values() for k in ("bench", "counters"))])
    return table(["family", *(f"{g.upper()} {k}" for g in gpus() for k in ("benchmarks", "counters"))], rows)


BLOCKS = {"run": run_line, "claims": claims_block, "ratios": ratios_block, "stencil": stencil_block, "roofs": roofs_block,
          "ebisu": ebisu_block, "scale": scale_block, "gemv": gemv_block, "spmv": spmv_block, "jobs": jobs_block}


def render(text: str) -> str:
    """`text` with each block's body replaced by what BLOCKS renders for it."""
    def body(m: re.Match) -> str:
        if m.group(2) not in BLOCKS:
            raise SystemExit(f"unknown block <!-- membound:{m.group(2)} -->: choose one of {', '.join(BLOCKS)}")
        return m.group(1) + BLOCKS[m.group(2)](m.group(3) or None) + m.group(5)
    return BLOCK.sub(body, text)


def documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block differs")
    args = parser.parse_args(argv)
    stale = []
    for doc in documents():
        text = doc.read_text()
        new = render(text)
        if new != text:
            stale.append(doc.relative_to(REPO))
            if not args.check:
                doc.write_text(new)
    print(("differs: " if args.check else "rewritten: ") + (", ".join(map(str, stale)) or "none"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
