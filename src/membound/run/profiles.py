"""Make `snakemake --profile <name>` resolve from the repository root without top-level folders.

Snakemake looks a bare profile name up in the working directory, then in its user config
directory (${XDG_CONFIG_HOME:-~/.config}/snakemake). `python -m membound.run.profiles install` links
each profiles/<name> there and says where each name points: a link that dangles (its checkout was
deleted) is repaired; a name taken by another checkout or by a profile not ours is left alone.
`python -m membound.run.profiles check NAME` stops with the valid names unless NAME is a profile.
`--profile profiles/<name>` always means this checkout's profile, links or not.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from membound.run.config import REPO

PROFILES = REPO / "profiles"


def names() -> list[str]:
    """This checkout's profile names."""
    return sorted(p.name for p in PROFILES.iterdir() if p.is_dir())


def user_profile_dir() -> Path:
    """Snakemake's per-user profile directory."""
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "snakemake"


def install(target: Path | None = None) -> list[str]:
    """Link every profiles/<name> into `target`; return one line per profile saying where it points."""
    target = target or user_profile_dir()
    target.mkdir(parents=True, exist_ok=True)
    lines = []
    for name in names():
        profile, link = (PROFILES / name).resolve(), target / name
        if link.is_symlink() and not link.exists():
            old = os.readlink(link)
            link.unlink()
            link.symlink_to(profile, target_is_directory=True)
            lines.append(f"{link} -> {profile} (repaired: it pointed at {old}, which is gone)")
        elif link.is_symlink() and link.resolve() == profile:
            lines.append(f"{link} -> {profile} (already linked)")
        elif link.exists() or link.is_symlink():
            lines.append(f"{link} -> {link.resolve()}: not this checkout's, left alone; "
                         f"here use --profile profiles/{name}")
        else:
            link.symlink_to(profile, target_is_directory=True)
            lines.append(f"{link} -> {profile}")
    return lines


def check(name: str) -> None:
    """Stop with the valid names unless `name` is one of this checkout's profiles."""
    if name not in names():
        sys.exit(f"unknown profile '{name}': choose one of {', '.join(names())}")


if __name__ == "__main__":
    if sys.argv[1:] == ["install"]:
        print("\n".join(install()))
    elif len(sys.argv) == 3 and sys.argv[1] == "check":
        check(sys.argv[2])
    else:
        sys.exit("usage: python -m membound.run.profiles install | check NAME")
