"""Compare two runs of `all` on one node, e.g. one GPU against two (issue 25, docs/performance.md):

    python tools/compare_gpu_runs.py results/h200-1gpu results/h200

Per run: the GPUs its rows name (device_uuid) and how many raw files each measured; that no two raw
files measured at overlapping times (first row's date to the file's modification time) name the
same GPU; the span from the first row to the last file, and the GPU jobs' seconds (Snakemake's
benchmark files). Then each claim's verdict and 95% interval in both runs, and whether the intervals
overlap. Run it where the runs were made (file times are kept there). Exits 1 if a GPU was shared.
"""

import json
import sys
from pathlib import Path

import pandas as pd

SLACK_S = 1.0   # `date` has whole seconds


def raw_files(run: Path) -> pd.DataFrame:
    """One row per raw CSV with device columns: path, GPU UUID(s), start (first row) and end (mtime)."""
    out = []
    for path in sorted((run / "raw").rglob("*.csv")):
        head = pd.read_csv(path, nrows=0).columns
        if not {"date", "device_uuid"} <= set(head):
            continue
        rows = pd.read_csv(path, usecols=["date", "device_uuid"]).dropna(subset=["date"])
        if rows.empty:   # rows that name no time (DGEMM counter checks before 2026-11-26)
            continue
        start = pd.to_datetime(rows["date"], utc=True).min().timestamp()
        out.append({"file": str(path.relative_to(run)), "gpu": ",".join(sorted(set(rows["device_uuid"].dropna()))),
                    "start": start, "end": path.stat().st_mtime})
    return pd.DataFrame(out, columns=["file", "gpu", "start", "end"])


def shared(files: pd.DataFrame) -> list[tuple[str, str, str]]:
    """Pairs of files measured at overlapping times on the same GPU."""
    bad, rows = [], files.sort_values("start").to_dict("records")
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            if b["start"] >= a["end"] - SLACK_S:
                break
            if a["gpu"] and a["gpu"] == b["gpu"] and b["end"] - SLACK_S > a["start"]:
                bad.append((a["file"], b["file"], a["gpu"]))
    return bad


def gpu_seconds(run: Path) -> float:
    return sum(float(pd.read_csv(t, sep="\t")["s"].iloc[0]) for t in (run / "raw" / "benchmarks").glob("*.tsv"))


def claims(run: Path) -> pd.DataFrame:
    data = json.loads((run / "claims.json").read_text())["claims"]
    return pd.DataFrame(data)[["id", "precision", "verdict", "estimate", "ci_low", "ci_high"]].set_index(
        ["id", "precision"])


def overlap(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Each claim and precision of runs a and b side by side; overlap: whether their 95% intervals
    overlap (empty where either has none: N/A, NO DATA, C5's share)."""
    both = a.add_suffix("_a").join(b.add_suffix("_b"), how="outer")
    has = both[["ci_low_a", "ci_high_a", "ci_low_b", "ci_high_b"]].notna().all(axis=1)
    meet = (both["ci_low_a"] <= both["ci_high_b"]) & (both["ci_low_b"] <= both["ci_high_a"])
    both["overlap"] = [bool(m) if h else "" for m, h in zip(meet, has)]
    both["disjoint"] = has & ~meet
    return both


def main(a: str, b: str) -> int:
    status = 0
    for run in (Path(a), Path(b)):
        files = raw_files(run)
        bad = shared(files)
        span = files["end"].max() - files["start"].min() if len(files) else float("nan")
        print(f"== {run}: {len(files)} raw files, span {span:.0f} s, GPU jobs {gpu_seconds(run):.0f} s")
        print(files.groupby("gpu")["file"].count().rename("files").to_string())
        print(f"files measured at once on one GPU: {len(bad)}")
        print("".join(f"  {x} | {y} ({g})\n" for x, y, g in bad[:20]), end="")
        status |= bool(bad)
    both = overlap(claims(Path(a)), claims(Path(b)))
    print("\n== claims (a, b)\n" + both.drop(columns="disjoint").round(4).to_string())
    print(f"intervals that do not overlap: {int(both['disjoint'].sum())}")
    return status


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
