"""Which profile fits this machine, and the start-up check that a GPU profile's device is here.

`python -m membound.run.detect` prints the profile name for this machine: cpu where no GPU answers, else
the profile whose spec describes this GPU (its name, SMs, memory, L2 and bandwidth: probe.mismatches),
a curated one before one written from a device; where none does, the name `python -m membound.specs new`
gives the one it writes, and a line on stderr says so.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

from membound.run import config, probe
from membound.run.probe import cuda_major, cupy_package


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


def _best(name: str, keep=lambda spec: True) -> str | None:
    """The profile whose device_match is in `name` and whose spec `keep` accepts: a curated one before one
    written from a device, then the longest device_match; None where none is."""
    fits = [("generated" in spec, -len(spec["device_match"]), profile)
            for profile, spec in ((p, config.load_gpu(p)) for p in config.profiles())
            if spec["device_match"] and spec["device_match"] in name and keep(spec)]
    return min(fits)[2] if fits else None


def profile_for(names: list[str]) -> str:
    """By the first device name alone (the stencils' tuned tiles: runner.device_gpu), else cpu."""
    return (_best(names[0]) if names else None) or "cpu"


def profile_of(dev: probe.Device) -> str | None:
    """The profile whose spec describes `dev`: its device_match in the name, its numbers within
    probe.TOLERANCE (probe.mismatches); None where none does."""
    records = probe.archs()
    return _best(dev.name, lambda spec: not probe.mismatches(spec, dev, records))


def to_write(name: str) -> str:
    """The profile `specs new` would write for the GPU called `name`, by its path (a profile written since
    `make install` linked the names is found by its path alone)."""
    return f"profiles/{probe.new_name(name)} (python -m membound.specs new writes it from this GPU)"


def to_use(dev: probe.Device) -> str:
    """The profile to name for `dev`: the one that describes it, or the one `specs new` would write."""
    return profile_of(dev) or to_write(dev.name)


def other(names: list[str]) -> str:
    """The profile to name for this node's GPU: by its report (to_use) where CuPy reads it, else by name."""
    try:
        return to_use(probe.device(probe.query()))
    except probe.QueryError:
        found = profile_for(names)
        return found if found != "cpu" else to_write(names[0])


def this_machine() -> str:
    """The profile a run takes where no --profile is named (a bare `snakemake`), said on stderr: the one
    whose spec describes this GPU (as `make run` takes it; by its name alone where CuPy cannot read it),
    cpu where no GPU answers; a GPU that no profile describes raises config.ConfigError, never cpu."""
    names = device_names()
    try:
        name = profile_of(probe.device(probe.query())) if names else "cpu"
    except probe.QueryError:
        name = profile_for(names)    # the start-up check (require) then says what is missing
    if name is None or (names and name == "cpu"):
        raise config.ConfigError(f"no --profile, and no profile describes this {names[0]}: `make run` writes one "
                                 f"from it and runs it, or name one: --profile {other(names)}")
    print(f"membound: no --profile: running this machine's, {name} (python -m membound.run.detect); "
          f"--profile <name> picks another", file=sys.stderr)
    return name


def require(profile: str, spec: dict) -> None:
    """Raise config.ConfigError unless the device that `profile` measures is present and its spec
    describes it (probe.mismatches)."""
    if spec["vendor"] == "cpu":
        return
    names = device_names()
    if not names:
        raise config.ConfigError(
            f"profile '{profile}' needs an {spec['name']}, but no GPU answers here (nvidia-smi/rocm-smi): "
            "run on a GPU node, or use --profile cpu (or --profile reference)")
    if spec["device_match"] not in names[0]:
        raise config.ConfigError(f"profile '{profile}' measures an {spec['name']}, but this node has {names[0]}: "
                                 f"use --profile {other(names)}")
    if importlib.util.find_spec("cupy") is None:
        raise config.ConfigError(f"profile '{profile}' runs its kernels through CuPy, which is not installed: "
                                 f"{cupy_package(spec['vendor'], cuda_major())}")
    try:
        dev = probe.device(probe.query())
    except probe.QueryError as err:
        raise config.ConfigError(f"profile '{profile}': {err}") from None
    if wrong := probe.mismatches(spec, dev, probe.archs()):
        raise config.ConfigError(f"profile '{profile}' measures an {spec['name']}, but this node's {dev.name} has "
                                 f"{', '.join(wrong)}: use --profile {to_use(dev)}")


def dry_run_note(profile: str, spec: dict) -> None:
    """For a dry run, which runs no onstart: one line on stderr where a real run would stop at require."""
    try:
        require(profile, spec)
    except config.ConfigError as err:
        print(f"membound: this was a dry run; the real run would stop before any job: {err}", file=sys.stderr)


def main() -> str:
    """This machine's profile (the module's docstring); SystemExit with one line where the GPU cannot be read."""
    if not device_names():
        return "cpu"
    try:
        dev = probe.device(probe.query())
    except probe.QueryError as err:
        raise SystemExit(f"membound: {err}") from None
    if found := profile_of(dev):
        return found
    print(f"membound: no profile describes this {dev.name}: python -m membound.specs new writes "
          f"{probe.new_name(dev.name)} from it", file=sys.stderr)
    return probe.new_name(dev.name)


if __name__ == "__main__":
    print(main())
