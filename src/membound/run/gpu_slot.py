"""`python -m membound.run.gpu_slot -- COMMAND...`: run COMMAND on a GPU of its own.

Snakemake's `gpu` resource bounds how many GPU jobs run at once; this wrapper decides which GPU
each one gets. Per GPU there is one lock file (LOCKS/<uuid>.lock); the wrapper takes the first
free one with flock(LOCK_EX | LOCK_NB), sets CUDA_VISIBLE_DEVICES to that GPU's UUID (and
MEMBOUND_GPU_INDEX, MEMBOUND_GPU_UUID) and runs COMMAND (membound.run.supervise: it ends with the
Snakemake that started it), which inherits the locked descriptor: the lock is held exactly as long
as COMMAND (and any child it leaves running) lives, and the kernel releases it when they end, a
crash or kill -9 included. No two jobs can hold one GPU; a job finding every GPU held waits for one.

It changes nothing, and runs COMMAND as it is, where SLURM gave the job its GPUs (the
scheduler's assignment is kept), or where nvidia-smi lists no GPU (the cpu profile, AMD).

Every job gets one CuPy kernel cache, KERNEL_CACHE (CUPY_CACHE_DIR, unless set): a kernel is
compiled by the first job that needs it and loaded from the cache by every later one.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path

from membound.run import devices, supervise

LOCKS = Path(os.environ.get("MEMBOUND_GPU_LOCKS", "/tmp/membound-gpu-locks"))  # one node's, all users'
POLL_S = 0.2
KERNEL_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "membound" / "cupy-kernels"


def scheduler_assigned(env=os.environ) -> bool:
    """True where SLURM allotted the job its GPUs (they are then kept as the scheduler set them)."""
    gpus = ("SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES")
    return "SLURM_JOB_ID" in env and any(k in env for k in gpus)


def _lock_file(lock_dir: Path, gpu: devices.Gpu) -> int:
    """An open descriptor of `gpu`'s lock file (made on first use, writable by every user of the node)."""
    if not lock_dir.is_dir():
        lock_dir.mkdir(parents=True, exist_ok=True)
        try:
            lock_dir.chmod(0o1777)   # shared by the node's users, each keeping their own files (as /tmp)
        except OSError:
            pass
    path = lock_dir / f"{gpu.uuid}.lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:
        fd = os.open(path, os.O_RDONLY)   # another user's file: a read descriptor locks as well
    try:
        os.fchmod(fd, 0o666)
    except OSError:
        pass
    return fd


def try_acquire(gpus: list[devices.Gpu], lock_dir: Path = LOCKS) -> tuple[devices.Gpu, int] | None:
    """The first GPU of `gpus` whose lock is free, locked, and the descriptor holding it; None if all are held."""
    for gpu in gpus:
        fd = _lock_file(lock_dir, gpu)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:   # who holds it, for a person looking at the lock files
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()} {' '.join(sys.argv[1:])[:500]}\n".encode())
        except OSError:
            pass
        return gpu, fd
    return None


def acquire(gpus: list[devices.Gpu], lock_dir: Path = LOCKS, poll_s: float = POLL_S) -> tuple[devices.Gpu, int]:
    """A GPU of `gpus` of this process's own, waiting (with one note on stderr) while all are held."""
    waited = False
    while (got := try_acquire(gpus, lock_dir)) is None:
        if not waited:
            print(f"gpu_slot: all {len(gpus)} GPUs are held (locks in {lock_dir}); waiting for one", file=sys.stderr,
                  flush=True)
            waited = True
        time.sleep(poll_s)
    return got


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        sys.exit("usage: python -m membound.run.gpu_slot -- COMMAND [ARGS...]")
    env = {"CUPY_CACHE_DIR": str(KERNEL_CACHE), **os.environ}
    if not scheduler_assigned(env):
        try:
            gpus = devices.visible(devices.listed(), env)
        except devices.DeviceError as err:
            sys.exit(f"error: {err}")
        if gpus:
            gpu, fd = acquire(gpus)
            os.set_inheritable(fd, True)   # COMMAND holds the lock from here on
            env.update(CUDA_VISIBLE_DEVICES=gpu.uuid, MEMBOUND_GPU_INDEX=str(gpu.index), MEMBOUND_GPU_UUID=gpu.uuid)
            print(f"gpu_slot: GPU {gpu.index} ({gpu.uuid})", file=sys.stderr, flush=True)
    sys.exit(supervise.run(command, env))


if __name__ == "__main__":
    main()
