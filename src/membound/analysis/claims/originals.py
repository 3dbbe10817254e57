"""C3 and C4 again, on the original codes the user built (docs/originals.md): each side of a pair
takes the original code's rows where it has some (DASP and cuSPARSE as DASP's driver times it;
EBISU, ConvStencil) and the in-house role's otherwise, and every time is per work item, so that a
code run on its own domain (Table 3's, under originals.problems: paper) compares as a rate."""

from __future__ import annotations

import pandas as pd

from membound.analysis.claims import c3_spmv, c4_stencil
from membound.analysis.claims.pairs import CC_ROLE, TC_ROLE, pairs
from membound.originals.rows import is_original, substitute


ON = {"spmv": "DASP's own kernel against cuSPARSE as DASP's driver times it", "stencil": "the original codes"}


def side_names(rows: pd.DataFrame, kernel: str) -> str:
    """Which rows play the two sides of `kernel`'s claim: the original codes' where they have some,
    the in-house role's otherwise ('' where no original code plays either side)."""
    rows = rows[rows["kernel"] == kernel]
    original = is_original(rows)
    sides = (("tensor cores", "tensor_core", TC_ROLE[kernel]), ("CUDA cores", "cuda_core", CC_ROLE[kernel]))
    plays = set(zip(rows.loc[original, "unit"], rows.loc[original, "role"]))
    if not plays & {(unit, role) for _, unit, role in sides}:
        return ""
    names = []
    for label, unit, role in sides:
        side = rows[(rows["unit"] == unit) & (rows["role"] == role) & (original == ((unit, role) in plays))]
        names.append(f"{label}: {'/'.join(side['impl'].unique()) or 'none'}"
                     + ("" if (unit, role) in plays else f" (in-house, {role} role)"))
    return "; ".join(names)


def on_originals(rows: pd.DataFrame, gpu: dict, stencils, margin: float) -> list[dict]:
    """'C3 originals' and 'C4 originals', each where an original code plays a side of that claim."""
    both = substitute(rows)
    out = []
    for kernel, claim in (("spmv", lambda p: c3_spmv.spmv_l2(p, gpu, margin)),
                          ("stencil", lambda p: c4_stencil.stencils_generally(p, margin))):
        sides = side_names(rows, kernel)
        if sides:
            record = claim(pairs(both[both["kernel"] == kernel], gpu, stencils))
            record.update(id=f"{record['id']} originals", title=f"{record['title']}: {ON[kernel]}",
                          summary=f"{sides}; {record['summary']}", sides=sides,
                          test=f"{record['test']}; on the original codes' rows where they exist (docs/originals.md), "
                               "ratios of time per work item")
            out.append(record)
    return out
