"""The depth axis of the stencil rows. One benchmark process runs the CUDA-core temporal blocking and
the tensor-core kernel at every depth of config stencil.kernels.<name>.depths (the fusion sweep); the
role depth `depth` is Table 3's, the claims' and the twin's. Figure 8 shows each implementation at
its best depth."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd


def role_rows(rows: pd.DataFrame, stencils: Mapping) -> pd.DataFrame:
    """`rows` without the stencil rows of sweep depths: an implementation's rows of a stencil at the
    stencil's role depth (stencils[name]["depth"]) where it has such rows, else all of them (the
    unblocked role runs depth 1 only); other families' rows unchanged."""
    role = rows["problem"].map(lambda p: stencils.get(p, {}).get("depth"))
    at_role = pd.to_numeric(rows["depth"], errors="coerce") == role
    has_role = at_role.groupby([rows["kernel"], rows["impl"], rows["problem"]]).transform("any")
    return rows[(rows["kernel"] != "stencil") | at_role | ~has_role]


def span(depths) -> str:
    """Depths as a short label: '1-8' for a run of consecutive ones, else '1,3,5'; one depth alone: '3'."""
    d = sorted({int(t) for t in depths})
    if len(d) > 2 and d == list(range(d[0], d[-1] + 1)):
        return f"{d[0]}-{d[-1]}"
    return ",".join(map(str, d))
