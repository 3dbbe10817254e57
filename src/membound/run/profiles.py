"""Make `snakemake --profile <name>` resolve from the repository root without top-level folders.

Snakemake looks a bare profile name up in the working directory, then in its user config
directory (${XDG_CONFIG_HOME:-~/.config}/snakemake). `python -m membound.run.profiles install` links
each profiles/<name> there and says where each name points: a link that dangles (its checkout was
deleted) is repaired; a name taken by another checkout or by a profile not ours is left alone.
`python -m membound.run.profiles check NAME` stops in one line unless NAME is a device profile (an
overlay such as slurm goes after one). `--profile profiles/<name>` always means this checkout's profile,
links or not. profiles/default is Snakemake's workflow profile, read on every run here: no --profile name.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from membound.run import config

WORKFLOW_PROFILE = "default"


def folder() -> Path:
    """This checkout's profiles/."""
    return config.checkout() / "profiles"


def names() -> list[str]:
    """This checkout's profile names (--profile <name>): device profiles and overlays."""
    return sorted(p.name for p in folder().iterdir() if p.is_dir() and p.name != WORKFLOW_PROFILE)


def found(results: str, name: str) -> list[str]:
    """The file `name` (e.g. 'figures/fig6_scale.csv', 'claims.json') of every profile under `results`
    that has one, sorted (plots.compare's inputs)."""
    root = Path(results)
    return sorted(str(p) for p in [*root.glob(f"*/{name}"), *root.glob(f"reference/*/{name}")])


def device_profiles() -> list[str]:
    """The device profiles: each names its gpu in its membound.yaml (the rest are overlays)."""
    return [name for name in names() if (folder() / name / "membound.yaml").is_file()]


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
        profile, link = (folder() / name).resolve(), target / name
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
    """Stop in one line unless `name` is one of this checkout's device profiles (`make run` runs one)."""
    if name in names() and name not in device_profiles():
        sys.exit(f"profile '{name}' is an overlay: it goes after a device profile, "
                 f"snakemake --profile <device> --profile {name} all (README, On a cluster)")
    if name not in device_profiles():
        sys.exit(f"unknown profile '{name}': choose one of {', '.join(device_profiles())}")


if __name__ == "__main__":
    if sys.argv[1:] == ["install"]:
        print("\n".join(install()))
    elif len(sys.argv) == 3 and sys.argv[1] == "check":
        check(sys.argv[2])
    else:
        sys.exit("usage: python -m membound.run.profiles install | check NAME")
