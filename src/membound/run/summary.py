"""The lines a successful run ends with (onsuccess, workflow/rules/common.smk): where its claims,
figures and appendix are, and the commands that build its report and its archive."""

from __future__ import annotations

from pathlib import Path


def text(results: list[str], profile: str, report: str) -> str:
    """Where the outputs of a run of `--profile profile` are, under each folder of `results` (those that
    exist: a run of a few targets makes a few), then the commands that build the report at `report` (where
    rule archive takes it) and the archive; '' where none is."""
    found = []
    for root in map(Path, results):
        figures = sorted((root / "figures").glob("*.png"))
        for label, path, note in (("claims", root / "claims.md", ""),
                                  ("figures", root / "figures", f" ({len(figures)} figures, .png and .pdf)"),
                                  ("appendix", root / "ae" / "appendix.md", "")):
            if path.is_file() or (path.is_dir() and figures):
                found.append(f"  {label:9} {path}{'/' if path.is_dir() else ''}{note}")
    if not found:
        return ""
    return "\n".join(["membound: this run's outputs", *found,
                      f"  {'report':9} snakemake --profile {profile} --report {report}",
                      f"  {'archive':9} snakemake --profile {profile} archive   "
                      f"(results/archive/membound-{profile}.tar.gz)", ""])
