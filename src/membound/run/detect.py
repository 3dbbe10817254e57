"""Which profile fits this machine, and the start-up check that a GPU profile's device is here.

`python -m membound.run.detect` prints the profile name for this machine (cpu when no GPU is found).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys

from membound.run import config


def device_names() -> list[str]:
    """Names of the GPUs that nvidia-smi or rocm-smi report ([] where neither answers)."""
    for cmd in (["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                ["rocm-smi", "--showproductname", "--csv"]):
        if shutil.which(cmd[0]):
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=True).stdout
            except (subprocess.SubprocessError, OSError):
                continue
            names = [line.strip() for line in out.splitlines() if line.strip()]
            if cmd[0] == "rocm-smi":
                names = [n for n in names if n.startswith("card")]
            if names:
                return names
    return []


def profile_for(names: list[str]) -> str:
    """The profile whose device_match is the longest substring of the first device name, else cpu."""
    if not names:
        return "cpu"
    best, best_len = "cpu", 0
    for profile in config.profiles():
        match = config.load_gpu(profile)["device_match"]
        if match and match in names[0] and len(match) > best_len:
            best, best_len = profile, len(match)
    return best


def this_machine() -> str:
    """The profile a run takes where no --profile is named (a bare `snakemake`), said on stderr."""
    name = profile_for(device_names())
    print(f"membound: no --profile: running this machine's, {name} (python -m membound.run.detect); "
          f"--profile <name> picks another", file=sys.stderr)
    return name


def require(profile: str, spec: dict) -> None:
    """Raise config.ConfigError unless the device that `profile` measures is present."""
    if spec["vendor"] == "cpu":
        return
    names = device_names()
    if not names:
        raise config.ConfigError(
            f"profile '{profile}' needs an {spec['name']}, but no GPU answers here (nvidia-smi/rocm-smi): "
            "run on a GPU node, or use --profile cpu (or --profile reference)")
    if profile_for(names) != profile:
        raise config.ConfigError(
            f"profile '{profile}' measures an {spec['name']}, but this node has {names[0]}: "
            f"use --profile {profile_for(names)}")
    if importlib.util.find_spec("cupy") is None:
        raise config.ConfigError(f"profile '{profile}' runs its kernels through CuPy, which is not installed: "
                                 f"{cupy_package(spec['vendor'], cuda_major())}")


def dry_run_note(profile: str, spec: dict) -> None:
    """For a dry run, which runs no onstart: one line on stderr where a real run would stop at require."""
    try:
        require(profile, spec)
    except config.ConfigError as err:
        print(f"membound: this was a dry run; the real run would stop before any job: {err}", file=sys.stderr)


def cuda_major() -> int | None:
    """The CUDA major version the NVIDIA driver supports (nvidia-smi's header), or None."""
    try:
        out = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    found = re.search(r"CUDA Version:\s*(\d+)", out)
    return int(found.group(1)) if found else None


def cupy_package(vendor: str, cuda: int | None) -> str:
    """What to install for CuPy on this node."""
    if vendor == "amd":
        return "install CuPy for ROCm (docs.cupy.dev: Installation, AMD ROCm)"
    if cuda is None:
        return "make install GPU=cuda12 (or GPU=cuda13: the node's CUDA major; docs/environment.md)"
    return f"make install GPU=cuda{cuda} (the driver supports CUDA {cuda}; docs/environment.md)"


if __name__ == "__main__":
    print(profile_for(device_names()))
