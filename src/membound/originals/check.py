"""The `originals` config block, checked at start-up before any job runs (workflow/rules/common.smk):
its shape by the config schema, then here every executable (it exists, may be run, and is a program
this machine runs: an ELF binary of its architecture or a script whose #! interpreter exists) and every
stencil it is named for (configured, run by the code, in Table 3 under `problems: paper`, a whole
number of the code's launches). Each failure is one line naming the key and the fix."""

from __future__ import annotations

import os
import platform
import shlex
from collections.abc import Mapping

from membound.originals.codes import CODES, LAUNCH_STEPS, supports
from membound.originals.problems import PAPER, configured, executable
from membound.run.config import ConfigError


def check(config: Mapping) -> None:
    """Raise a ConfigError for the first bad entry of config `originals` (nothing to check without one)."""
    for code in configured(config):
        entry, title = config["originals"][code], CODES[code].title
        if not CODES[code].per_stencil:
            _runnable(executable(config, code, "")[0], f"originals.{code}.executable", title)
            continue
        for name in entry["executables"]:
            key = f"originals.{code}.executables.{name}"
            _stencil(config, code, name, key)
            _runnable(executable(config, code, name)[0], key, title)


def _runnable(path: str, key: str, title: str) -> None:
    if not os.path.exists(path):
        raise ConfigError(f"{key}: {path} does not exist; build {title} by its own instructions (docs/originals.md) "
                          "and give the executable's path, or drop the key")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ConfigError(f"{key}: {path} is not an executable file; give the binary the build made (chmod +x it)")
    why = _not_a_program(path)
    if why:
        raise ConfigError(f"{key}: {path} {why}; give the binary {title}'s build made on this machine")


ELF_MACHINES = {"x86_64": 62, "aarch64": 183, "ppc64le": 21}   # uname -m -> the ELF header's e_machine


def _not_a_program(path: str) -> str:
    """Why this machine cannot run the file `path` ('' where it can): neither an ELF binary of this
    machine's architecture nor a script whose #! interpreter exists."""
    with open(path, "rb") as fh:
        head = fh.read(256)
    if head.startswith(b"\x7fELF"):
        found = int.from_bytes(head[18:20], "little" if head[5:6] == b"\x01" else "big")
        ours = ELF_MACHINES.get(platform.machine())
        if ours is None or found == ours:
            return ""
        return f"is an ELF binary for another architecture (e_machine {found}, not {platform.machine()})"
    if head.startswith(b"#!"):
        line = head[2:].split(b"\n", 1)[0].decode(errors="replace").strip()
        interpreter = (shlex.split(line) or [""])[0]
        if interpreter and os.access(interpreter, os.X_OK):
            return ""
        return f"is a script whose interpreter '{interpreter}' (its #! line) is not here"
    return "is neither an ELF binary nor a script with a #! line, so not a program this machine runs"


def _stencil(config: Mapping, code: str, name: str, key: str) -> None:
    stencils = config["stencil"]["kernels"]
    if name not in stencils:
        raise ConfigError(f"{key}: no stencil '{name}' in stencil.kernels; name one of {', '.join(stencils)}")
    st = stencils[name]
    why = supports(code, st["shape"], st["dims"], st["radius"])
    if why:
        raise ConfigError(f"{key}: {why}; drop the key")
    if config["originals"]["problems"] == "paper" and name not in PAPER[code]:
        raise ConfigError(f"{key}: paper 000's Table 3 gives {CODES[code].title} no domain for {name}; drop the key "
                          "or set originals.problems: ours")
    per_launch = LAUNCH_STEPS.get(code, {}).get(f"{st['shape']}{st['dims']}d{st['radius']}r", (1,))[0]
    if config["stencil"]["steps"] % per_launch:
        raise ConfigError(f"{key}: stencil.steps {config['stencil']['steps']} is not a whole number of "
                          f"{CODES[code].title}'s launches of {per_launch} steps; set stencil.steps to a multiple of it")
