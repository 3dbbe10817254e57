"""The bundle to upload for artifact evaluation: the code at its commit (`git archive`), a run's
files (its raw results, tables, figures, claims, appendix, manifest, logs and report) and its record
(ARCHIVE.json: the command that made it), one .tar.gz."""

from __future__ import annotations

import io
import subprocess
import tarfile
import time
from pathlib import Path

CODE_EXCLUDES = ("results",)  # run outputs: the bundle takes them from the run, beside the code
RECORD = "ARCHIVE.json"  # at the bundle's root: profile, command, --config, --configfile (membound.run.verify reads it)
CONFIGFILES = "configfiles"  # the bundle's copies of --configfile files from outside the checkout


class ArtifactError(RuntimeError):
    """The checkout cannot give the code at its commit (not a git checkout, or code changed since)."""


def _git(repo, *args) -> str:
    run = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise ArtifactError(f"{repo} is not a git checkout (git {args[0]}: {run.stderr.strip()}); the archive "
                            "holds the code at its commit: run it in a clone of the repository")
    return run.stdout


def commit(repo) -> str:
    """The checkout's commit, or ArtifactError where its code (outside results/) has uncommitted changes."""
    changed = _git(repo, "status", "--porcelain", "--untracked-files=no", "--", ".",
                   *(f":(exclude){e}" for e in CODE_EXCLUDES)).split("\n")
    changed = [line[3:] for line in changed if line.strip()]
    if changed:
        raise ArtifactError(f"uncommitted changes in {', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''}: "
                            "commit them (the archive holds the code at its commit), then rerun rule archive")
    return _git(repo, "rev-parse", "HEAD").strip()


def configfiles(repo, given: list[str]) -> tuple[list[str], dict[str, str], list[str]]:
    """The run's --configfile files for the bundle: (files inside `repo`, to add as run files; texts of those
    outside it, under CONFIGFILES/; every file's path in the bundle, in the order given)."""
    repo = Path(repo).resolve()
    inside, texts, paths = [], {}, []
    for i, name in enumerate(given):
        path = (repo / name).resolve()
        if path.is_relative_to(repo):
            inside.append(path.relative_to(repo).as_posix())
            paths.append(inside[-1])
        else:
            paths.append(f"{CONFIGFILES}/{i}-{path.name}")
            texts[paths[-1]] = path.read_text()
    return inside, texts, paths


def write(out, repo, files, texts: dict[str, str] | None = None) -> list[str]:
    """Write `out` (.tar.gz): the code of `repo` at its commit under membound-<commit>/, `files`
    (paths relative to `repo`) beside it, each once (a run's file over the committed one), and
    `texts` (path -> text, e.g. RECORD). Returns the archive's member names."""
    sha = commit(repo)
    prefix = f"membound-{sha[:12]}/"
    code = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", f"--prefix={prefix}", "HEAD"],
                          capture_output=True, check=True).stdout
    run_files = {prefix + Path(f).as_posix(): Path(repo) / f for f in files}
    names = []
    with tarfile.open(out, "w:gz") as bundle, tarfile.open(fileobj=io.BytesIO(code)) as source:
        for member in source.getmembers():
            if member.name not in run_files:
                bundle.addfile(member, source.extractfile(member) if member.isfile() else None)
                names.append(member.name)
        for name, path in sorted(run_files.items()):
            bundle.add(path, arcname=name)
            names.append(name)
        for name, text in sorted((texts or {}).items()):
            data = text.encode()
            member = tarfile.TarInfo(prefix + name)
            member.size, member.mtime, member.mode = len(data), int(time.time()), 0o644
            bundle.addfile(member, io.BytesIO(data))
            names.append(prefix + name)
    return names
