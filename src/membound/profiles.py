"""Make `snakemake --profile <gpu>` resolve from the repository root without top-level folders.

Snakemake looks a bare profile name up in the working directory, then in its user config
directory (${XDG_CONFIG_HOME:-~/.config}/snakemake). `python -m membound.profiles install` links
each profiles/<name> there; a name already taken by a profile that is not ours is left alone and
reported. `--profile profiles/<name>` works without the links.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from membound.config import REPO

PROFILES = REPO / "profiles"


def user_profile_dir() -> Path:
    """Snakemake's per-user profile directory."""
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "snakemake"


def install(target: Path | None = None) -> list[str]:
    """Link every profiles/<name> into `target`; return one line per profile saying what happened."""
    target = target or user_profile_dir()
    target.mkdir(parents=True, exist_ok=True)
    lines = []
    for profile in sorted(p for p in PROFILES.iterdir() if p.is_dir()):
        link = target / profile.name
        if link.is_symlink() and link.resolve() == profile.resolve():
            lines.append(f"{link} -> {profile} (already linked)")
        elif link.exists() or link.is_symlink():
            lines.append(f"{link} exists and is not this checkout's: left alone; use --profile {profile}")
        else:
            link.symlink_to(profile.resolve(), target_is_directory=True)
            lines.append(f"{link} -> {profile}")
    return lines


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: python -m membound.profiles install")
    print("\n".join(install()))
