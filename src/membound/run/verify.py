"""Verify an unpacked archive (rule archive) offline: check its files against its manifests, render
every table, figure, claim and appendix anew from its raw rows (Snakemake with the archive's profile,
--configfile files and --config, `render_only`: nothing measured, no device) and check them again.
One line per file that differs; `main` exits 1 on any."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from membound.run import artifact, commands
from membound.run.outputs import sha256

LOG = "verify.log"  # Snakemake's output of the re-rendering, in the archive's root


def manifest(path) -> dict[str, str]:
    """A manifest (sha256sum format) as path -> SHA-256."""
    return {line.split("  ", 1)[1]: line.split("  ", 1)[0] for line in Path(path).read_text().splitlines() if line}


def differing(entries: dict[str, str], root, when: str) -> list[str]:
    """A line per file of `entries` (path -> SHA-256) under `root` that is missing or differs."""
    lines = []
    for name, digest in sorted(entries.items()):
        path = Path(root) / name
        if not path.is_file():
            lines.append(f"{name}: missing ({when})")
        elif sha256(path) != digest:
            lines.append(f"{name}: differs from the manifest ({when})")
    return lines


def render_command(record: dict) -> list[str]:
    """The Snakemake command that renders the archive's run anew from its raw rows."""
    files = record.get("configfiles") or []
    return [sys.executable, "-m", "snakemake", "--profile", f"profiles/{record['profile']}", "all", "--forceall",
            *(["--configfile", *files] if files else []),
            "--config", *commands.config_args(record.get("config") or {}), "render_only=true"]


def verify(root=".") -> list[str]:
    """The lines of every difference of the unpacked archive at `root` (empty: verified)."""
    root = Path(root)
    if not (root / artifact.RECORD).is_file():
        return [f"{root / artifact.RECORD}: missing: run this in the folder an archive of rule archive unpacks to"]
    record = json.loads((root / artifact.RECORD).read_text())
    before = {m: manifest(root / m) for m in record["manifests"]}
    entries = {name: digest for listed in before.values() for name, digest in listed.items()}
    lines = differing(entries, root, "as unpacked")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str((root / "src").resolve()),
                                                                    os.environ.get("PYTHONPATH")]))}
    with open(root / LOG, "w") as log:
        run = subprocess.run(render_command(record), cwd=root, stdout=log, stderr=subprocess.STDOUT, env=env)
    if run.returncode != 0:
        return [*lines, f"re-rendering failed (snakemake exit {run.returncode}): see {root / LOG}"]
    lines += differing(entries, root, "re-rendered")
    for m, listed in before.items():
        again = manifest(root / m)
        lines += [f"{name}: not in the archive's manifest {m} (re-rendered)" for name in sorted(set(again) - set(listed))]
    return lines


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m membound.ae verify", description=__doc__)
    parser.add_argument("root", nargs="?", default=".", help="the unpacked archive's folder (default: here)")
    lines = verify(parser.parse_args(argv).root)
    print("\n".join(lines) if lines else "verified: every file matches its manifest, as unpacked and re-rendered")
    return 1 if lines else 0
