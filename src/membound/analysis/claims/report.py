"""The claims as strict JSON and as Markdown (claims.json, claims.md), and one GPU's claims as the short
table of the README and docs/claims.md (`claims_table`; `python -m membound.analysis.claims`)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from membound.analysis.claims.c4_stencil import depth_text
from membound.analysis.claims.verdicts import NO_DATA, NOT_APPLICABLE, interval_text
from membound.run import outputs

SURROGATE = ("**SURROGATE MATRICES.** The SpMV rows were measured on labelled surrogate stand-ins (the rows "
             "and nnz of each SuiteSparse matrix times spmv.surrogate_scale, a structure of its family), not "
             "the SuiteSparse data.")


def _plain(obj):
    """`obj` with numpy scalars as Python ones and NaN/inf as None (strict JSON)."""
    if isinstance(obj, pd.DataFrame):
        return [_plain(r) for r in obj.to_dict("records")]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def to_json(result: dict) -> str:
    """`result` (from check) as strict JSON."""
    return json.dumps(_plain(result), indent=2, allow_nan=False) + "\n"


def _banners(result: dict) -> str:
    out = []
    if result["surrogate"]:
        out.append(f"> {SURROGATE} C3 and any SpMV pairs of C1 say nothing about the paper's matrices.")
    if missing := result.get("no_tensor_cores", []):
        out.append(f"> **NO TENSOR CORES in {', '.join(missing)}.** {result['device_spec']} has no matrix unit in "
                   f"{'that precision' if len(missing) == 1 else 'these precisions'}: the tensor-core side is a numpy "
                   "emulation of the MMA tiles, so those verdicts are N/A (not a test of the paper). 'on these "
                   "timings' says what the same statistics give on the emulated ones.")
    return "\n>\n".join(out)


LABEL = {"C1": "C1: median speedup over the CUDA-core twin below eq. 23's bound (DRAM-bound twin pairs)",
         "C2": "C2: tensor-core SCALE slower (median t_TC/t_CC over sizes, per side of half the L2)",
         "C3": "C3: cuSPARSE beats tensor-core SpMV beyond the L2 (median t_TC/t_CC over matrices)",
         "C4": "C4: CUDA-core temporal blocking beats dense tensor cores (median t_TC/t_CC over stencils)",
         "C4s": "C4s (not paper 000's): ... and 2:4-sparse ones, median over stencils (papers 002/004 expect "
                "them to win)",
         "C5": "C5: paper 002's scenarios, eq. 14 a tie within run-to-run noise",
         "C5 summary": "C5 summary: paper 002's scenarios, 1-2 read as tensor cores not faster",
         "C3 originals": "C3 on DASP's own kernel and cuSPARSE as its driver times it (median t_TC/t_CC)",
         "C4 originals": "C4 on the original stencil codes (median t_TC/t_CC)"}
EFFECTS = {"tensor_core_effect": "C3's factor: tensor-core effect (median t_TC/t_twin)",
           "format_effect": "C3's factor: format effect (median t_twin/t_CC)"}
FLAGGED = ("CONTRADICTED", "INCONCLUSIVE")
SIDE_OF_1 = {"SUPPORTED": "above 1", "CONTRADICTED": "below 1"}     # an effect's verdict against 1, in words


def _verdict(verdict: str) -> str:
    return f"**{verdict}**" if verdict in FLAGGED else verdict


def brief(c: dict, effects: bool = True) -> str:
    """A claim record's (from check, or read back from claims.json) numbers in a few words: the
    interval, then what that claim adds (C1 its pairs and their kernels, C2 each part's interval and
    verdict, which decide it, C3 the matrices other precisions ran and it did not and its
    decomposition unless not `effects`, C4 the stencils faster on tensor cores and the verdicts at
    each depth, C5 its no-predictions)."""
    n = c.get("numbers") or {}
    if c["on_these_timings"] in (NOT_APPLICABLE, NO_DATA):
        return c["summary"]
    text = interval_text(c)
    if c["id"] == "C1" and "deciding_pairs" in n:
        scope = (f"{n['deciding_pairs']} pairs of {', '.join(n.get('deciding_kernels', [])) or 'no kernel'}, "
                 f"max {n['max_speedup'] or float('nan'):.3g}")
        return f"{text} ({scope})" + (f"; no {', '.join(n['undecided_kernels'])} pair decides"
                                      if n.get("undecided_kernels") else "")
    if c["id"] == "C2" and "beyond_half_L2" in n:
        return "; ".join(f"{side} half the L2 {interval_text(n[key])} {n[key]['verdict']}"
                         for side, key in (("within", "within_half_L2"), ("beyond", "beyond_half_L2")))
    if c["id"].startswith("C3") and "larger_than_L2" in n:
        parts = [f"{n[k]['ratio']} {interval_text(n[k])}" for k in EFFECTS if k in n and effects]
        return (f"{text}; cuSPARSE faster on {n['cuda_core_faster_on']} of {n['larger_than_L2']}"
                + (f"; no {c.get('precision', 'fp64')} rows for {', '.join(n['not_run'])}" if n.get("not_run") else "")
                + ("; " + ", ".join(parts) if parts else "") + ("; surrogate matrices" if n.get("surrogate") and effects
                                                                else ""))
    if c["id"].startswith("C4") and "tensor_cores_faster" in n:
        return (f"{text}; tensor cores faster on {', '.join(n['tensor_cores_faster']) or 'none'}"
                + (f"; {depth_text({int(d): e for d, e in n['by_depth'].items()})}" if n.get("by_depth") else ""))
    return text


def claims_table(result: dict) -> str:
    """One GPU's claims (check's result, or its claims.json read back) as a Markdown table, a row per
    claim (C3's decomposition in two rows under it) and a column per precision with rows: verdict and `brief`.
    The README's claims tables per GPU are this table (docs/claims.md, "Measured")."""
    by = {(c["id"], c.get("precision", "fp64")): c for c in result["claims"]}
    precisions = [p for p in result.get("precisions", ["fp64"])    # a precision without rows (every claim NO DATA): none
                  if any(c["verdict"] != NO_DATA for (_, q), c in by.items() if q == p)]
    rows = []
    for cid in dict.fromkeys(c["id"] for c in result["claims"]):
        surrogate = "; surrogate matrices" if cid.startswith("C3") and result["surrogate"] else ""
        label = LABEL.get(cid, cid) + surrogate
        rows.append([label] + [f"{_verdict(by[cid, p]['verdict'])}, {brief(by[cid, p], False)}" if (cid, p) in by else ""
                               for p in precisions])
        for key, name in EFFECTS.items() if cid == "C3" else ():
            cells = [(by.get((cid, p), {}).get("numbers") or {}).get(key) for p in precisions]
            if any(cells):
                rows.append([name + surrogate] + [f"{SIDE_OF_1.get(e['verdict'], e['verdict'])}, {interval_text(e)}"
                                                  if e else "" for e in cells])
    return pd.DataFrame(rows, columns=["claim", *precisions]).to_markdown(index=False) + "\n"


def title(result: dict) -> str:
    """The GPU and run a result is of: '<spec> (<commits>, <n> repetitions)'."""
    m = result["measured"]
    return f"{result['device_spec']} ({', '.join(c[:7] for c in m.get('commit', [])) or 'commit unrecorded'}, " \
           f"{m['repetitions']} repetitions)"


def markdown(result: dict) -> str:
    """The claims as Markdown: banners, a summary table (one short row per claim and precision), then
    one section per claim and precision with its cases and lists (a line where the precision has no rows)."""
    m, st = result["measured"], result["statistics"]
    head = (f"# Claims of paper 000 checked on {result['device_spec']}\n\n"
            f"Measured on {', '.join(m['device'])} ({', '.join(m['host'])}), {m['date_first']} to "
            f"{m['date_last']}, {m['repetitions']} repetition(s), membound {', '.join(m.get('membound', [])) or 'unrecorded'} at "
            f"commit {', '.join(m.get('commit', [])) or 'unrecorded'}; SpMV matrices: {result['matrix_source']}. "
            "Ratio = t_TC/t_CC and speedup = t_CC/t_TC of median times (ratio > 1: CUDA cores faster). Estimates: the "
            f"median with a {st['interval']}; LEVEL: the interval lies within +-{100 * st['margin']:g}% of "
            "the reference (claims.margin; C5: the measured noise band). Each claim is checked in every precision of "
            "the run on that precision's rows, peaks and element size.\n\n")
    banners = _banners(result)
    summary = pd.DataFrame([{"claim": c["id"], "precision": c.get("precision", "fp64"), "verdict": c["verdict"],
                             "on these timings": c["on_these_timings"], "numbers": brief(c)} for c in result["claims"]])
    if not result.get("no_tensor_cores", []):
        summary = summary.drop(columns="on these timings")
    parts = [head + (banners + "\n\n" if banners else "") + summary.to_markdown(index=False) + "\n"]
    for c in result["claims"]:
        heading = f"{c['id']} {c.get('precision', 'fp64')} ({c['where']}): {c['title']}"
        if not c["pairs"] and c["verdict"] == NO_DATA and len(c["cases"]) == 0:
            parts.append(f"## {heading}\n\n**{c['verdict']}**: {c['summary']}.\n")
            continue
        legend = (f"> {c['text']}\n\nChecked: {c['test']}. Data: {', '.join(c['sources']) or 'none'}.\n\n"
                  f"**{c['verdict']}**: {c['summary']}.")
        parts.append(outputs.markdown(c["cases"], heading, legend, level=2))
    return "\n".join(parts)


def write(result: dict, json_path, md_path) -> None:
    """Write the claims as JSON and Markdown, each atomically."""
    outputs.write_text(to_json(result), json_path)
    outputs.write_text(markdown(result), md_path)


BEGIN, END = "<!-- measured: python -m membound.analysis.claims --docs", "<!-- end measured -->"


def _records(result: dict, cid: str) -> list[dict]:
    return [c for c in result["claims"] if c["id"] == cid and c["verdict"] not in (NO_DATA, NOT_APPLICABLE)]


def left_out(result: dict) -> str:
    """The twin pairs C1 leaves out, per precision, grouped by kernel and reason."""
    lines = []
    for c in _records(result, "C1"):
        groups = {}
        for pair, why in (c["numbers"].get("excluded") or {}).items():
            kernel, problem = pair.split(" ", 1)
            reason, _, detail = why.partition(":") if ":" in why else why.partition(" (")
            groups.setdefault((kernel, reason), []).append(f"{problem} ({detail.strip(' )')})" if detail else problem)
        lines += [f"- {c['precision']}: " + "; ".join(f"{k} {why}: {', '.join(p)}" for (k, why), p in groups.items())]
    return "\n".join(lines) + "\n"


def by_depth_table(result: dict) -> str:
    """C4 and C4s at each depth both kernels ran: a row per claim and precision, a column per depth."""
    rows = {f"{c['id']} {c['precision']}": {f"depth {d}": f"{e['verdict']}, {interval_text(e)} ({e['stencils']})"
                                            for d, e in c["numbers"]["by_depth"].items()}
            for cid in ("C4", "C4s") for c in _records(result, cid) if c["numbers"].get("by_depth")}
    return pd.DataFrame.from_dict(rows, orient="index").fillna("").to_markdown() + "\n"


def quoted(result: dict) -> str:
    """The run's figures that docs/claims.md's text quotes: C5's noise band and model uncertainty,
    the stencil twins' DRAM bytes over their siblings' (C1's counters)."""
    c5 = {c["precision"]: c["numbers"] for c in _records(result, "C5")}
    twin = {c["precision"]: {r["problem"]: f"{100 * (r['twin_dram_ratio'] - 1):+.1f}%" for r in c["cases"]
                             if r["kernel"] == "stencil" and r.get("twin_dram_ratio") is not None}
            for c in _records(result, "C1")}
    text = ("C5's noise band: " + ", ".join(f"{p} +-{100 * n['noise_band']:.2f}%" for p, n in c5.items()
                                             if n.get("noise_band") is not None)
            + "; model uncertainty: " + ", ".join(f"{p} {100 * n['model_uncertainty']:.1f}%" for p, n in c5.items()))
    if any(twin.values()):
        text += ("; the stencil twins' DRAM bytes against their siblings' (ncu): "
                 + "; ".join(f"{p} " + ", ".join(f"{k} {v}" for k, v in t.items()) for p, t in twin.items() if t))
    return text + ".\n"


def measured(results: list[dict]) -> str:
    """Each result's `claims_table` under its `title` (the README's and docs/claims.md's "Measured"),
    with C4 and C4s at every depth, the pairs C1 leaves out and the figures the text quotes."""
    return "\n".join(f"{title(r)}:\n\n{claims_table(r)}\nC4 and C4s at every depth both kernels ran (verdict, median "
                     f"[interval] (stencils)):\n\n{by_depth_table(r)}\nThe twin pairs C1 leaves out:\n\n{left_out(r)}\n"
                     f"{quoted(r)}" for r in results)


def with_measured(text: str, results: list[dict]) -> str:
    """`text` (docs/claims.md) with the lines between its BEGIN and END markers replaced by `measured`."""
    if BEGIN not in text or END not in text:
        raise SystemExit(f"error: no '{BEGIN} ...' and '{END}' lines to write the measured claims between")
    head, rest = text.split(BEGIN, 1)
    marker, tail = rest.split("\n", 1)
    return f"{head}{BEGIN}{marker}\n\n{measured(results)}\n{END}{tail.split(END, 1)[1]}"

