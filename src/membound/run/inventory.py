"""The machine inventory: what the benchmarks ran on, probed on the machine that runs them.

GPUs (nvidia-smi), CUDA runtime and CuPy, nvcc, ncu, rocm-smi, rocprof, CPU, memory, OS, Python,
the membound version, the versions of the workflow's main packages and of every installed
distribution, and the workflow's git commit. A probe whose tool is
missing or fails is recorded as {"status": "absent", "why": ...}, never an error; every command
goes through `run`, the one place tests replace.
"""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import membound

PRESENT, ABSENT = "present", "absent"
PACKAGES = ("snakemake", "numpy", "scipy", "pandas", "cupy", "matplotlib")
GPU_FIELDS = ("index", "name", "driver_version", "memory.total", "clocks.max.sm", "clocks.max.mem",
              "clocks.sm", "clocks.mem", "power.limit")
TOOLS = {  # probe: (command, regular expression of its version, or None to keep the output)
    "nvcc": (["nvcc", "--version"], r"release ([\d.]+)"),
    "ncu": (["ncu", "--version"], r"Version ([\d.]+)"),
    "rocm_smi": (["rocm-smi", "--showproductname", "--showdriverversion"], None),
    "rocprof": (["rocprof", "--version"], None),
}


def run(cmd: list[str]) -> str | None:
    """The standard output of `cmd`, or None where its tool is not on PATH, fails or hangs."""
    if not shutil.which(cmd[0]):
        return None
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return None


def absent(why: str) -> dict:
    """An absent probe, with the reason."""
    return {"status": ABSENT, "why": why}


def gpus() -> dict:
    """Every GPU nvidia-smi reports: name, driver, memory, current and maximum clocks, power limit."""
    out = run(["nvidia-smi", f"--query-gpu={','.join(GPU_FIELDS)}", "--format=csv,noheader"])
    if out is None:
        return absent("nvidia-smi not found or failed")
    devices = [dict(zip(GPU_FIELDS, (v.strip() for v in line.split(","))))
               for line in out.splitlines() if line.strip()]
    return {"status": PRESENT, "devices": devices}


def cuda() -> dict:
    """CUDA (or HIP) runtime and driver versions and the devices CuPy sees."""
    try:
        import cupy as cp

        rt = cp.cuda.runtime
        names = [rt.getDeviceProperties(i)["name"].decode() for i in range(rt.getDeviceCount())]
        runtime, driver = rt.runtimeGetVersion(), rt.driverGetVersion()
    except Exception as err:  # noqa: BLE001 - no CuPy, no driver or no device: all mean absent
        return absent(f"CuPy: {type(err).__name__}: {err}")
    return {"status": PRESENT, "api": "HIP" if rt.is_hip else "CUDA", "runtime": f"{runtime // 1000}.{runtime % 1000 // 10}",
            "driver": f"{driver // 1000}.{driver % 1000 // 10}", "cupy": cp.__version__, "devices": names}


def tool(name: str) -> dict:
    """The version (or the first lines of the version output) of one of TOOLS."""
    cmd, pattern = TOOLS[name]
    out = run(cmd)
    if out is None:
        return absent(f"{cmd[0]} not found or failed")
    found = re.search(pattern, out) if pattern else None
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return {"status": PRESENT, "version": found.group(1) if found else "", "output": lines[:12]}


def _proc(path: str, key: str) -> str | None:
    """The value of the first `key: value` line of a /proc file (None where there is none)."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.split(":")[0].strip() == key:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu() -> dict:
    """CPU model, logical CPUs and the CPUs this process may use."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"model": _proc("/proc/cpuinfo", "model name") or platform.processor() or platform.machine(),
            "arch": platform.machine(), "logical_cpus": os.cpu_count(), "usable_cpus": usable}


def memory() -> dict:
    """Total memory from /proc/meminfo."""
    total = _proc("/proc/meminfo", "MemTotal")
    if total is None:
        return absent("/proc/meminfo not readable")
    return {"status": PRESENT, "total_GiB": round(int(total.split()[0]) / 2**20, 1)}


def system() -> dict:
    """OS distribution, kernel and host name."""
    try:
        distribution = platform.freedesktop_os_release().get("PRETTY_NAME", "")
    except OSError:
        distribution = ""
    return {"os": platform.system(), "distribution": distribution, "kernel": platform.release(),
            "host": platform.node()}


def version(package: str) -> str:
    """The installed version of `package` (its distribution, else its module's __version__), or 'absent'."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        return str(importlib.import_module(package).__version__)
    except Exception:  # noqa: BLE001 - a package that does not import is absent here
        return ABSENT


def installed() -> dict[str, str]:
    """Every distribution installed in this environment, name -> version, sorted by name."""
    found = {dist.metadata["Name"]: dist.version for dist in importlib.metadata.distributions() if dist.metadata["Name"]}
    return dict(sorted(found.items(), key=lambda item: item[0].lower()))


def git(repo) -> dict:
    """The workflow's commit and whether tracked files differ from it."""
    head = run(["git", "-C", str(repo), "rev-parse", "HEAD"])
    if head is None:
        return absent(f"no git, or {repo} is not a git checkout")
    status = run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"])
    return {"status": PRESENT, "commit": head.strip(), "dirty": None if status is None else bool(status.strip())}


CODE = ("Snakefile", "workflow", "src", "scripts", "config", "profiles", "envs", "pyproject.toml")


def provenance(commits: list[str]) -> str:
    """Which code measured: one sentence per recorded row commit (runinfo.commit), and the command
    that lists the code files (CODE) changed since (a command, not its output: the text would go
    stale with the next commit). Nothing here reads the checkout: the same rows give the same text
    in a clone and in an unpacked archive (`python -m membound.ae verify`)."""
    if not commits:
        return "The raw rows name no git commit (they predate the column): the code that measured is unknown."
    out = []
    for c in commits:
        sha = c.removesuffix("+dirty")
        if sha != c:
            out.append(f"Measured at commit {sha} with uncommitted changes: no commit holds that code.")
        else:
            out.append(f"Measured at commit {sha}; in a clone of the repository, `git diff --stat {sha[:7]} -- "
                       f"{' '.join(CODE)}` lists the code changed since.")
    return " ".join(out)


def collect(repo) -> dict:
    """The whole inventory of this machine, for the workflow checkout at `repo`."""
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpus": gpus(), "cuda": cuda(), **{name: tool(name) for name in TOOLS},
        "cpu": cpu(), "memory": memory(), "system": system(),
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation(),
                   "executable": sys.executable},
        "membound": membound.__version__,
        "packages": {p: version(p) for p in PACKAGES},
        "installed": installed(),
        "workflow": git(repo),
    }
