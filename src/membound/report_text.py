"""The report's opening text (workflow/report/workflow.rst includes it), written from the run, never
typed: per GPU what ran (the kernel families and their precisions, dense or 2:4-sparse tensor cores,
the hardware counters, the original codes) and whether the SpMV matrices were real or surrogates."""

from __future__ import annotations

import pandas as pd

from membound import families
from membound.model.precision import PRECISIONS
from membound.originals.codes import CODES
from membound.originals.rows import is_original

PAPERS = ('**membound** reproduces Zhang, Huang, Di, Matsuoka and Wahib, "Can Tensor Cores Benefit Memory-Bound '
          'Kernels? (NO!)", GPGPU \'25 (paper 000), and sets its stencils beside paper 002\'s model (the fusion '
          "sweep and the classification into its four scenarios): each kernel on CUDA cores and on tensor cores, "
          "beside the papers' analytical model and checked against paper 000's claims.")


def _listed(items) -> str:
    items = list(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)


def _in_order(values, order) -> list[str]:
    return sorted(set(values), key=lambda v: (order.index(v) if v in order else len(order), v))


def _title(family: str) -> str:
    return families.FAMILIES[family].title if family in families.FAMILIES else family


def about(label: str, spec: str, rows: pd.DataFrame, counted: list[str], why_not: str, matrices: pd.DataFrame) -> str:
    """One GPU's paragraph (reST): `label` its report category, `spec` its spec's name, `rows` its raw
    benchmark and original codes' rows, `counted` the families with counter rows (`why_not`: why none),
    `matrices` the CSR files' table (raw/matrices.csv; empty where SpMV did not run)."""
    if rows.empty:
        return f"**{label}** ({spec}): no benchmark rows.\n"
    mine, originals = rows[~is_original(rows)], rows[is_original(rows)]
    order = list(families.FAMILIES)
    ran = []
    for family in _in_order(mine["kernel"], order):
        f = mine[mine["kernel"] == family]
        ran.append(f"{_title(family)} ({', '.join(_in_order(f['precision'], list(PRECISIONS)))})")
    tc = mine[mine["unit"] == "tensor_core"]
    sparse = tc[tc.get("sparsity", pd.Series("dense", index=tc.index)).fillna("dense") != "dense"]
    tensor = ("no tensor-core rows" if tc.empty else
              f"tensor cores dense in {', '.join(_in_order(tc['precision'], list(PRECISIONS)))}" +
              (f", 2:4-sparse (mma.sp) in {', '.join(_in_order(sparse['precision'], list(PRECISIONS)))} "
               f"({_listed(_title(k) for k in _in_order(sparse['kernel'], order))})" if not sparse.empty
               else ", no 2:4-sparse rows"))
    counters = (f"hardware counters measured for {_listed(counted)}" if counted else
                f"no hardware counters ({why_not or 'no counter rows'})")
    code_of = {side.impl: code.title for code in CODES.values() for side in code.sides}
    codes = sorted({code_of.get(impl, impl) for impl in originals["impl"]})
    original = f"the original codes ran: {_listed(codes)}" if codes else "no original code ran"
    sources = sorted(set(matrices["source"])) if "source" in matrices else []
    spmv = ("" if not sources else
            "; SpMV matrices: **SURROGATE** stand-ins (the rows and nnz of each SuiteSparse matrix with a structure "
            "of its family, not their data: no SpMV result here speaks for the paper's matrices)"
            if sources == ["surrogate"] else "; SpMV matrices: the real SuiteSparse matrices" if sources == ["real"]
            else f"; SpMV matrices: {', '.join(sources)} (Table 2 says which)")
    dates = sorted(set(mine["date"].astype(str).str[:10]))
    commits = sorted(set(mine["commit"].dropna().astype(str).str[:7]))
    when = f"measured {dates[0]}{' to ' + dates[-1] if len(dates) > 1 else ''}" + (
        f" at commit {', '.join(commits)}" if commits else "")
    device = ", ".join(sorted(set(mine["device"].astype(str))))
    return (f"**{label}** ({spec}; its results: `{label}`_): {device}, {when}. Kernels: {_listed(ran)}; {tensor}; "
            f"{counters}; {original}{spmv}.\n")


def intro(profile: str, reference: bool, paragraphs: list[str], compared: bool, cpu: bool) -> str:
    """The opening text of the report of `profile`: the papers, what this report renders, each GPU's
    paragraph (`about`), and where to read on."""
    source = ("rendered from the committed raw results of the reference runs (no device was used to build it)"
              if reference else "measured and rendered by this run")
    parts = [PAPERS, f"This report: profile **{profile}**, {source}."]
    parts += paragraphs
    if cpu:
        parts.append("The cpu profile has no tensor cores: its tensor-core paths are numpy emulations, so it checks "
                     "that the workflow runs end to end, and every claim's verdict is N/A.")
    parts.append("Each GPU's results are grouped under its name: its figures, its tables, its claims (each with its "
                 "interval and verdict: SUPPORTED, LEVEL, CONTRADICTED, INCONCLUSIVE, N/A or NO DATA) and its "
                 "artifact appendix (inventory, how to run, the ACM check-list, expected run time and results)" +
                 (("; `GPUs compared`_ sets the GPUs side by side" if compared else "") + ". Every number comes "
                  "from the run's ``raw/`` folder and ``config/``; each GPU's ``ae/manifest.sha256`` checksums them."))
    return "\n\n".join(p.strip() for p in parts) + "\n"
