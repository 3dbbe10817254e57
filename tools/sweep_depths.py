"""Developer sweep (not a workflow rule): the temporal-blocking (cc_tb) and tensor-core (tc) stencil
kernels at every depth 1..8 (2D) and 1..4 (3D) on the paper's domains (config/config.yaml
stencil.domain_2d, domain_3d), each checked against the reference before it is timed (the harness),
so that the best depth of each kernel on a GPU can be chosen (docs/kernels_stencil.md, "Depth sweep").

    python tools/sweep_depths.py [--stencils 2d5pt 2d9pt ...] [--reps 10] [--warmup 3] [--steps 12]

Writes $OUT/sweep_depths.csv (the harness's rows; OUT defaults to ./out) and prints GStencil/s per
stencil, kernel and depth with the best depth last; a depth whose shared memory does not fit this GPU
is listed as refused, a failed check as FAILED (no time kept).
"""
import argparse
import os
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from membound.kernels import harness, stencil_plan
from membound.kernels import stencil as S
from membound.run import measure, runinfo

CONFIG = Path(__file__).resolve().parents[1] / "config" / "config.yaml"


def sweep(names, warmup: int, reps: int, steps: int, backend: str = "cuda",
          domains: dict | None = None) -> tuple[list[dict], list[str]]:
    """The checked and timed rows of cc_tb and tc at every depth of each stencil, and the refusals;
    `domains` (dims -> domain) replaces the config's (a small check on the CPU)."""
    cfg = yaml.safe_load(CONFIG.read_text())["stencil"]
    domains = domains or {d: tuple(cfg[f"domain_{d}d"]) for d in (2, 3)}
    limit, rng, rows, notes = S._shared_limit(backend), np.random.default_rng(), [], []
    for name in names:
        spec = cfg["kernels"][name]
        st = stencil_plan.Stencil(name, spec["shape"], spec["dims"], spec["radius"], 1)
        domain = domains[spec["dims"]]
        jobs, refused = stencil_plan.plan(st, range(1, stencil_plan.MAX_DEPTH[spec["dims"]] + 1), stencil_plan.SWEPT,
                                          limit)
        notes += refused
        for name_impl, at in jobs:
            impl = next(i for i in S.IMPLS if i.name == name_impl)
            prepare = partial(S.prepare, impl, at, domain, stencil_plan.steps_at(steps, at.depth), backend, rng)
            try:
                row = harness.measure(impl, prepare, backend, warmup, reps)
            except measure.CheckError as err:
                notes.append(f"FAILED {name} {impl.name} t={at.depth}: {err}")
                continue
            rows.append({**row, **runinfo.describe(backend)})
            print(f"{name:7s} {impl.name:6s} t={at.depth}  {row['value']:8.1f} GStencil/s  cv {row['cv']:.3f}", flush=True)
    return rows, notes


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """GStencil/s per (stencil, impl) and depth, with the best depth and its rate."""
    table = rows.pivot_table(index=["problem", "impl"], columns="depth", values="value", sort=False)
    table.columns = [f"t={int(t)}" for t in table.columns]
    best = rows.loc[rows.groupby(["problem", "impl"], sort=False)["value"].idxmax()].set_index(["problem", "impl"])
    return table.round(1).assign(best=best["depth"].astype(int), best_GStencil_s=best["value"].round(1))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stencils", nargs="+", default=None, help="names from config/config.yaml (default: all)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--steps", type=int, default=12, help="time steps per timed call (rounded up per depth)")
    args = parser.parse_args(argv)
    names = args.stencils or list(yaml.safe_load(CONFIG.read_text())["stencil"]["kernels"])
    out = Path(os.environ.get("OUT", "out"))
    out.mkdir(parents=True, exist_ok=True)
    rows, notes = sweep(names, args.warmup, args.reps, args.steps)
    if rows:
        measure.write_rows(rows, out / "sweep_depths.csv")
        print("\nGStencil/s per depth (checked before timing; the best depth last)\n")
        print(summary(pd.DataFrame(rows)).to_string())
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return 1 if any(n.startswith("FAILED") for n in notes) else 0


if __name__ == "__main__":
    sys.exit(main())
