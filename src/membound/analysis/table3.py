"""Table 3 of paper 000: the stencils and, per implementation role, the domain and temporal depth
actually run (read from the raw stencil rows), beside the paper's own, and those each original code
ran where it ran (docs/originals.md)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from membound.analysis.depths import role_rows, span
from membound.model import equations
from membound.originals.rows import split
from membound.run import outputs

ROLES = ("ConvStencil", "Brick", "EBISU")
PAPER = {  # paper 000 Table 3: domain (temporal blocking depth) per role; Brick ran the 3D stencils only
    "2d5pt": {"ConvStencil": ("10240x10240", 3), "EBISU": ("9000x9000", 3)},
    "2d13pt": {"ConvStencil": ("10240x10240", 1), "EBISU": ("9000x9000", 1)},
    "2d9pt": {"ConvStencil": ("10240x10240", 3), "EBISU": ("9000x9000", 3)},
    "2d49pt": {"ConvStencil": ("10240x10240", 1), "EBISU": ("9000x9000", 1)},
    "3d7pt": {"ConvStencil": ("1024x1024x1024", 3), "Brick": ("512x512x512", 1), "EBISU": ("234x312x2560", 3)},
    "3d27pt": {"ConvStencil": ("1024x1024x1024", 3), "Brick": ("512x512x512", 1), "EBISU": ("234x312x2560", 3)},
}


def cell(run: tuple[str, int] | None) -> str:
    """A Table 3 cell: 'domain (depth)', or '-' where the role did not run."""
    return f"{run[0]} ({int(run[1])})" if run else "-"


def runs(rows: pd.DataFrame, stencils: Mapping) -> dict[str, dict[str, tuple[str, int]]]:
    """Per configured stencil and role: the (domain, depth) of its raw row at the role depth, where there is one."""
    rows = role_rows(rows, stencils)
    return {name: {r["role"]: (r["domain"], int(r["depth"])) for _, r in rows[rows["problem"] == name].iterrows()
                   if r["role"] in ROLES} for name in stencils}


def table(rows: pd.DataFrame, stencils: Mapping) -> pd.DataFrame:
    """One row per configured stencil (config["stencil"]["kernels"]): shape, dims, radius, points K,
    the domain (depth) each role ran and paper 000's, each original code's ('<role> original' columns,
    where one ran), and the time steps per timed run."""
    ours, originals = split(rows)
    ran, codes = runs(ours, stencils), list(dict.fromkeys(originals["role"]))
    out = []
    for name, spec in stencils.items():
        row = {"stencil": name, "shape": spec["shape"], "dims": spec["dims"], "radius": spec["radius"],
               "K": equations.stencil_points(spec["shape"], spec["dims"], spec["radius"])}
        for role in ROLES:
            row[role] = cell(ran[name].get(role))
            row[f"{role} (paper)"] = cell(PAPER.get(name, {}).get(role))
        for role in codes:
            mine = originals[(originals["problem"] == name) & (originals["role"] == role)]
            row[f"{role} original"] = cell(tuple(mine[["domain", "depth"]].iloc[0])) if len(mine) else "-"
        steps = rows.loc[rows["problem"] == name, "steps"].dropna()
        row["steps"] = "/".join(str(int(s)) for s in sorted(set(steps)))
        depths = ours.loc[ours["problem"] == name, "depth"].dropna()
        row["depths"] = span(depths) if len(depths) else "-"
        out.append(row)
    return pd.DataFrame(out)


def differences(ran: dict) -> list[str]:
    """Where the roles ran otherwise than in paper 000's Table 3 (`ran` from `runs`), one phrase each."""
    domains, depths, extra, missing = {}, [], {}, {}
    for name, by_role in ran.items():
        for role in ROLES:
            ours, paper = by_role.get(role), PAPER.get(name, {}).get(role)
            if ours and not paper:
                extra.setdefault(role, []).append(name)
            elif paper and not ours:
                missing.setdefault(role, []).append(name)
            elif ours:
                if ours[0] != paper[0]:
                    domains.setdefault(role, {})[ours[0]] = paper[0]
                if ours[1] != paper[1]:
                    depths.append(f"{name} {role} depth {ours[1]} (paper {paper[1]})")
    out = [f"{role} ran " + " and ".join(f"{a} (paper {b})" for a, b in pairs.items()) for role, pairs in domains.items()]
    out += depths
    out += [f"{role} also ran {', '.join(names)} (not in the paper)" for role, names in extra.items()]
    return out + [f"{role} did not run {', '.join(names)}" for role, names in missing.items()]


def write(rows: pd.DataFrame, stencils: Mapping, csv, md, gpu_name: str) -> None:
    """Write Table 3 of the raw stencil `rows` as CSV and Markdown; the legend names every
    difference from the paper's."""
    diffs = differences(runs(split(rows)[0], stencils))
    legend = ("Each role's cell: the domain (temporal blocking depth) this run measured, read from the raw "
              "rows; '(paper)': paper 000 Table 3. Here every role runs the configured domain "
              "(config stencil.domain_2d, domain_3d; the 3D one shrunk only if GPU memory requires it) and "
              "depth, so times compare at equal work; the paper ran each artifact on its own default domain. "
              "K: points of the stencil; steps: time steps per timed run (at each depth, rounded up to a multiple of it); "
              "depths: every depth the in-house kernels measured (the fusion sweep, config stencil.kernels.<name>.depths). "
              + (f"Differences from the paper: {'; '.join(diffs)}." if diffs else "Same domains and depths as the paper.")
              + (" '<role> original': the original code the user built (docs/originals.md), the domain (depth) it "
                 "ran, under config originals.problems." if len(split(rows)[1]) else ""))
    outputs.write_table(table(rows, stencils), csv, md, f"Table 3: the stencils and the domains (depth) run on {gpu_name}", legend)
