"""What the figures, the claims, Table 3 and the appendix need to tell the original codes' raw rows
from the in-house kernels' (membound.originals.run writes them: their impl ends in ORIGINAL, their
role is the paper's baseline they are)."""

from __future__ import annotations

import pandas as pd

ORIGINAL = "_original"


def is_original(rows: pd.DataFrame) -> pd.Series:
    """True for the rows of an original code."""
    return rows["impl"].astype(str).str.endswith(ORIGINAL)


def split(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the in-house rows, the originals' rows) of `rows`."""
    mask = is_original(rows)
    return rows[~mask], rows[mask]


def substitute(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of a second verdict on the originals: where an original code has rows of a (kernel,
    unit, role), they replace the in-house ones; the other sides stay in-house. Every time is per
    work item (t_median_s / work_items), so that a code run on its own domain (Table 3's, under
    originals.problems: paper) compares with another as a rate. Empty without original rows."""
    ours, originals = split(rows)
    if originals.empty:
        return originals
    keys = ["kernel", "unit", "role"]
    taken = originals[keys].drop_duplicates()
    kept = ours.merge(taken, on=keys, how="left", indicator=True)
    kept = kept[kept["_merge"] == "left_only"].drop(columns="_merge")
    both = pd.concat([kept, originals], ignore_index=True)
    return both.assign(t_median_s=both["t_median_s"] / pd.to_numeric(both["work_items"]))
