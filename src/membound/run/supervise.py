"""A job's command run as a child that ends with the Snakemake that started it (gpu_slot runs every
benchmark, counter and original-code job through it).

Snakemake killed outright (kill -9, a closed terminal's SIGKILL, the OOM killer) leaves its job's
shell alive, and a benchmark under it would run on and write its raw file into a run nobody waits
for. So the command runs in a process group of its own, and this process ends the whole group
(SIGTERM, SIGKILL after GRACE_S) as soon as
- the Snakemake process named by MEMBOUND_SNAKEMAKE_PID (workflow/rules/common.smk sets it) ends, or
- this process's own parent ends (Linux's PR_SET_PDEATHSIG: Snakemake stopping the job's shell);
it forwards SIGINT, SIGTERM and SIGHUP to the group, and the command dies with this process should
this one be killed outright (PR_SET_PDEATHSIG again). Raw files are written atomically
(outputs.recorded), so a job stopped so leaves none: the next run redoes it.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys

ENV = "MEMBOUND_SNAKEMAKE_PID"
GRACE_S = 10.0
POLL_MS = 500
PR_SET_PDEATHSIG = 1
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Have Linux send `sig` to this process when its parent ends (a no-op where prctl is missing)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def snakemake_pidfd(env=os.environ) -> int | None:
    """A pidfd of the Snakemake process that started this job (readable once it ends); None where
    unknown (run by hand), already gone or without pidfds."""
    try:
        return os.pidfd_open(int(env[ENV]))
    except (KeyError, ValueError, OSError, AttributeError):
        return None


def stop(child: subprocess.Popen, why: str) -> None:
    """End `child`'s process group: SIGTERM, then SIGKILL after GRACE_S."""
    print(f"supervise: {why}: stopping {' '.join(child.args)[:200]}", file=sys.stderr, flush=True)
    for sig, wait_s in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(child.pid, sig)
            child.wait(wait_s)
            return
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return


def _signal_group(child: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(child.pid, signum)
    except ProcessLookupError:
        pass


def run(command: list[str], env: dict) -> int:
    """Run `command` with `env` (inheritable descriptors kept: gpu_slot's lock) until it ends, or until
    Snakemake or this process's parent does; its exit status (128 + signal where a signal ended it)."""
    parent = os.getppid()
    die_with_parent(signal.SIGTERM)
    child = subprocess.Popen(command, env=env, close_fds=False, start_new_session=True, preexec_fn=die_with_parent)
    for sig in FORWARDED:
        signal.signal(sig, lambda signum, frame: _signal_group(child, signum))
    poller = select.poll()
    pidfd = snakemake_pidfd(env)
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    while child.poll() is None:
        if poller.poll(POLL_MS) and child.poll() is None:
            stop(child, f"Snakemake (pid {env[ENV]}) has ended")
        elif os.getppid() != parent and child.poll() is None:
            stop(child, "the job's shell has ended")
    return 128 - child.returncode if child.returncode < 0 else child.returncode
