"""The claims as strict JSON and as Markdown (claims.json, claims.md)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from membound.analysis.claims.verdicts import NO_DATA, interval_text
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


def markdown(result: dict) -> str:
    """The claims as Markdown: banners, a summary table (one row per claim and precision), then one
    section per claim and precision with its cases (a line where the precision has no rows)."""
    m, st = result["measured"], result["statistics"]
    head = (f"# Claims of paper 000 checked on {result['device_spec']}\n\n"
            f"Measured on {', '.join(m['device'])} ({', '.join(m['host'])}), {m['date_first']} to "
            f"{m['date_last']}, {m['repetitions']} repetition(s), membound {', '.join(m.get('membound', [])) or 'unrecorded'} at "
            f"commit {', '.join(m.get('commit', [])) or 'unrecorded'}; SpMV matrices: {result['matrix_source']}. "
            "Ratio = t_TC/t_CC and speedup = t_CC/t_TC of median times (ratio > 1: CUDA cores faster). Estimates are "
            f"geometric means with a {st['interval']} ({st['resamples']} resamples, seed {st['seed']}); LEVEL: the "
            f"interval lies within +-{100 * st['margin']:g}% of the reference (claims.margin). Each claim is checked "
            "in every precision of the run on that precision's rows, peaks and element size.\n\n")
    banners = _banners(result)
    summary = pd.DataFrame([{"claim": c["id"], "precision": c.get("precision", "fp64"), "paper": c["where"],
                             "what": c["title"], "verdict": c["verdict"], "on these timings": c["on_these_timings"],
                             "estimate [95% CI]": c.get("estimate_text") or interval_text(c),
                             "reference": c.get("reference_text") or (f"{c['side']} {c['reference']:.3g}"
                                                                      if c["reference"] is not None
                                                                      and math.isfinite(c["reference"]) else "undefined"),
                             "numbers": c["summary"]} for c in result["claims"]])
    if not result.get("no_tensor_cores", []):
        summary = summary.drop(columns="on these timings")
    parts = [head + (banners + "\n\n" if banners else "") + summary.to_markdown(index=False) + "\n"]
    for c in result["claims"]:
        title = f"{c['id']} {c.get('precision', 'fp64')} ({c['where']}): {c['title']}"
        if not c["pairs"] and c["verdict"] == NO_DATA and len(c["cases"]) == 0:
            parts.append(f"## {title}\n\n**{c['verdict']}**: {c['summary']}.\n")
            continue
        legend = (f"> {c['text']}\n\nChecked: {c['test']}. Data: {', '.join(c['sources']) or 'none'}.\n\n"
                  f"**{c['verdict']}**: {c['summary']}.")
        parts.append(outputs.markdown(c["cases"], title, legend, level=2))
    return "\n".join(parts)


def write(result: dict, json_path, md_path) -> None:
    """Write the claims as JSON and Markdown, each atomically."""
    outputs.write_text(to_json(result), json_path)
    outputs.write_text(markdown(result), md_path)
