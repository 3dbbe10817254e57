"""The `originals` config block, checked at start-up before any job runs (workflow/rules/common.smk):
its shape by the config schema, then here every executable (it exists and may be run) and every
stencil it is named for (configured, run by the code, in Table 3 under `problems: paper`, a whole
number of the code's launches). Each failure is one line naming the key and the fix."""

from __future__ import annotations

import os
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
