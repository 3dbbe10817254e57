"""Loading and checking the workflow's configuration: the device spec and the matrix list."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
GPUS_DIR = REPO / "config" / "gpus"
MATRICES_FILE = REPO / "config" / "matrices.yaml"


class ConfigError(ValueError):
    """A one-line, user-facing configuration error that names the input and the fix."""


def profiles() -> list[str]:
    """Names of the devices that have a spec file (config/gpus/<name>.yaml)."""
    return sorted(p.stem for p in GPUS_DIR.glob("*.yaml"))


def load_gpu(name: str) -> dict:
    """The spec of device `name`, from config/gpus/<name>.yaml."""
    path = GPUS_DIR / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"unknown gpu '{name}': choose one of {', '.join(profiles())} "
                          f"(or add config/gpus/{name}.yaml)")
    return yaml.safe_load(path.read_text())


def reference_gpus(primary: str, root: str = "results/reference") -> list[str]:
    """The GPUs the reference profile renders: `primary`, then every other GPU with a spec whose
    committed raw results exist (<root>/<gpu>/raw/), sorted."""
    others = sorted(g for g in profiles() if g != primary and (Path(root) / g / "raw").is_dir())
    return [primary, *others]


def merge(base: dict, override: dict) -> dict:
    """A deep copy of `base` with the keys of `override` merged in, nested dicts key by key."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_matrices(path: Path = MATRICES_FILE) -> list[dict]:
    """The 21 matrices of the paper's Table 2, in the paper's order (D1..D21)."""
    return yaml.safe_load(Path(path).read_text())["matrices"]


def select_matrices(selection, matrices: list[dict] | None = None) -> list[dict]:
    """The matrices named by `selection` ('all' or a list of names), or a ConfigError."""
    matrices = load_matrices() if matrices is None else matrices
    if selection == "all":
        return matrices
    by_name = {m["name"]: m for m in matrices}
    unknown = [s for s in selection if s not in by_name]
    if unknown:
        raise ConfigError(f"unknown matrix {', '.join(unknown)} in config 'matrices': "
                          f"valid names are {', '.join(by_name)}")
    return [by_name[s] for s in selection]
