"""One run per results folder: the running Snakemake's pid, host and start, recorded once it holds
Snakemake's lock (onstart), so that a second run on the same folder stops at start with one line saying
which run holds it and to wait. Snakemake's own LockException advises --unlock, which is right only for
the lock a killed run left (its pid is gone), never while the run that holds it is going on."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

FOLDER = Path(".snakemake") / "membound"


def record_path(results: str) -> Path:
    """Where the run of `results` (e.g. results/cpu) records itself, under the working directory."""
    return FOLDER / (results.replace("/", "+") + ".run.json")


def _running(pid: int) -> bool:
    """True where `pid` is a live Snakemake process of this host in this working directory."""
    try:
        proc = Path(f"/proc/{pid}")
        return b"snakemake" in (proc / "cmdline").read_bytes() and (proc / "cwd").resolve() == Path.cwd().resolve()
    except OSError:
        return False


def holder(results: str) -> str:
    """The run that holds `results` ('' if none: no record, another host's, or its process gone)."""
    try:
        run = json.loads(record_path(results).read_text())
        pid, host, since = int(run["pid"]), str(run["host"]), str(run["since"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if host != socket.gethostname() or pid == os.getpid() or not _running(pid):
        return ""
    return f"pid {pid}, started {since}"


def refuse_second(results: str) -> str:
    """One line for a second run while another holds `results` ('' where none does)."""
    held = holder(results)
    if not held:
        return ""
    return (f"membound: another run ({held}) is writing {results}/; wait until it ends, then run again "
            "(not --unlock: that is only for the lock a killed run left)")


def hold(results: str) -> None:
    """Record this process as the run of `results` (it holds Snakemake's lock)."""
    path = record_path(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    run = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S")}
    path.write_text(json.dumps(run) + "\n")


def release(results: str) -> None:
    """Drop the record of `results` if it is this process's."""
    path = record_path(results)
    try:
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass
