"""Loading and checking the workflow's configuration: the device spec, the matrix list, and the
run's config assembled from its layers in one documented order (config/README.md, "Precedence")."""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import jsonschema
import yaml


def found() -> Path | None:
    """The membound checkout whose config/, profiles/ and workflow/ the package reads: $MEMBOUND_CHECKOUT,
    else the one the package lies in (an editable install), else the working directory; None where none is."""
    given = os.environ.get("MEMBOUND_CHECKOUT")
    for place in [Path(given)] if given else [Path(__file__).resolve().parents[3], Path.cwd()]:
        if (place / "config" / "gpus").is_dir() and (place / "workflow").is_dir():
            return place.resolve()
    return None


@functools.cache
def checkout() -> Path:
    """found(), or a stop with one line: a non-editable install carries the code only, and only what
    reads the checkout's files (the workflow, the profiles, the device specs) needs one."""
    if (place := found()) is not None:
        return place
    given = os.environ.get("MEMBOUND_CHECKOUT")
    if given:
        raise SystemExit(f"membound: MEMBOUND_CHECKOUT={given} has no config/gpus/ and workflow/; set it to a membound "
                         "checkout (docs/environment.md)")
    raise SystemExit(f"membound: run from a checkout: no config/gpus/ and workflow/ beside the installed package or in "
                     f"{Path.cwd()}; cd into the membound checkout or set MEMBOUND_CHECKOUT to it (docs/environment.md)")


PATHS = {"REPO": ".", "GPUS_DIR": "config/gpus", "ARCHS_FILE": "config/archs.yaml",
         "MATRICES_FILE": "config/matrices.yaml", "DEFAULTS_FILE": "config/config.yaml", "SCHEMAS": "workflow/schemas"}


def in_checkout(key: str) -> Path:
    """The checkout's file or folder PATHS[key], found on first use: importing membound needs no checkout."""
    return (checkout() / PATHS[key]).resolve()


def __getattr__(name: str) -> Path:
    """config.REPO, config.GPUS_DIR, ... (PATHS): in_checkout(name)."""
    if name in PATHS:
        return in_checkout(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


EMPTY = MappingProxyType({})
PROFILE_KEYS = ("gpu", "reference")  # a profile's own: its device, hence its results folder, and its mode


LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)   # libyaml's safe loader where PyYAML has it: 7x faster


def read_yaml(path) -> object:
    """A YAML file's data (plain types only, as yaml.safe_load)."""
    return yaml.load(Path(path).read_text(), Loader=LOADER)


class ConfigError(ValueError):
    """A one-line, user-facing configuration error that names the input and the fix."""


def profiles() -> list[str]:
    """Names of the devices that have a spec file (config/gpus/<name>.yaml)."""
    return sorted(p.stem for p in in_checkout("GPUS_DIR").glob("*.yaml"))


def load_gpu(name: str) -> dict:
    """The spec of device `name`, from config/gpus/<name>.yaml."""
    path = in_checkout("GPUS_DIR") / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"unknown gpu '{name}': choose one of {', '.join(profiles())} "
                          f"(or add config/gpus/{name}.yaml)")
    return read_yaml(path)


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


def check_interpreter(executable: str) -> None:
    """Stop if the Python running Snakemake has a space in its path: Snakemake runs `script:` rules
    with that path unquoted (snakemake/snakemake#2645), so every one of them would fail."""
    if " " in executable:
        raise ConfigError(f"the Python running Snakemake, {executable}, has a space in its path, which "
                          "breaks Snakemake's script: rules (snakemake/snakemake#2645); install into a venv "
                          "at a path without one: make install VENV=~/.venvs/membound")


def check(data: dict, schema: str, source: str, partial: bool = False,
          blocks: Mapping[str, dict] = EMPTY) -> None:
    """Raise a one-line ConfigError naming `source` and the offending key unless `data` fits the
    schema `schema` (schema_of(schema, blocks); `partial`: a layer, where no key is required)."""
    rules = schema_of(schema, blocks)
    if partial:
        rules = _optional(rules)
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(rules).iter_errors(data))
    if error is not None:
        where = ".".join(map(str, error.absolute_path)) or "top level"
        raise ConfigError(f"{source}: {where}: {error.message} (keys and values: config/README.md)")


def check_depths(kernels: dict) -> None:
    """Each stencil's `depth` (Table 3's, the claims' and the twin's) among its `depths` (the fusion
    sweep, optional), or a one-line ConfigError with the fix."""
    for name, spec in kernels.items():
        if spec["depth"] not in spec.get("depths", [spec["depth"]]):
            raise ConfigError(f"stencil.kernels.{name}: depths {spec['depths']} lack its depth {spec['depth']} "
                              f"(Table 3's and the claims'): add {spec['depth']} to depths")


RANGES = (("scale", "log2_min", "log2_max"), ("ncu", "scale_log2_min", "scale_log2_max"))  # (block, low, high)


def check_ranges(merged: dict) -> None:
    """Each range of RANGES not reversed (an empty range, which the schema cannot see: no job could run
    it), or a one-line ConfigError with the fix."""
    for block, low, high in RANGES:
        lo, hi = merged[block][low], merged[block][high]
        if lo > hi:
            raise ConfigError(f"{block}.{low} {lo} is above {block}.{high} {hi}, an empty range: "
                              f"set {block}.{low} <= {block}.{high}")


def schema_of(name: str, blocks: Mapping[str, dict] = EMPTY) -> dict:
    """The schema workflow/schemas/<name>.schema.yaml with `blocks` (key -> schema) added as required
    properties: the config's takes every kernel family's block (the `schema` of each registry entry,
    membound.families, which the rules pass in; run/ imports no registry)."""
    rules = read_yaml(in_checkout("SCHEMAS") / f"{name}.schema.yaml")
    rules["properties"].update(blocks)
    rules["required"] = [*rules["required"], *(key for key in blocks if key not in rules["required"])]
    return rules


def _optional(schema):
    """`schema` with every `required` list removed, at every depth."""
    if isinstance(schema, dict):
        return {k: _optional(v) for k, v in schema.items() if k != "required"}
    return [_optional(v) for v in schema] if isinstance(schema, list) else schema


def typed(value):
    """A --config value with YAML's types: Snakemake keeps `false`, and numbers inside {...} or [...],
    as strings; this reads them as YAML does in a config file."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, str):
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError:
            return value
        return parsed if isinstance(parsed, (bool, int, float)) else value
    return value


def assemble(configfiles, command_line: dict, gpu: str | None = None,
             blocks: Mapping[str, dict] = EMPTY, detected=None) -> tuple[dict, list[str]]:
    """The run's config and its layers' names, lowest precedence first:
    config/config.yaml < the device spec's `workload:` < the configfiles (the profile's
    profiles/<name>/membound.yaml, then any --configfile) < --config. `gpu` and `reference` come from
    the profile alone (`gpu` given: a module of the Snakefile for that GPU; none: the profile that
    `detected()` names, where given, as if its membound.yaml came first). Every layer and the
    merged result are checked against the config's schema with the families' `blocks` (schema_of)."""
    command_line = typed(dict(command_line))
    if taken := [key for key in PROFILE_KEYS if key in command_line]:
        raise ConfigError(f"--config {taken[0]}=...: '{taken[0]}' belongs to the profile; drop it and pick "
                          f"the profile instead: --profile <name> ({', '.join(profiles())} or reference)")
    repo, defaults = checkout(), in_checkout("DEFAULTS_FILE")
    layers = [(str(Path(f).resolve().relative_to(repo)) if Path(f).resolve().is_relative_to(repo) else str(f),
               read_yaml(f) or {}) for f in configfiles]
    chosen = {}
    for source, layer in layers:
        check(layer, "config", source, partial=True, blocks=blocks)
        chosen = merge(chosen, layer)
    if "gpu" not in chosen and detected is not None:
        file = f"profiles/{detected()}/membound.yaml"
        layers.insert(0, (file, read_yaml(repo / file)))
        chosen = merge(layers[0][1], chosen)
    if "gpu" not in chosen:
        raise ConfigError("no gpu chosen: run with --profile <name> (" + ", ".join(profiles()) + ", reference), "
                          "before any overlay (--profile slurm); a --configfile replaces the profile's, so name "
                          "that too: "
                          "--configfile profiles/<name>/membound.yaml yours.yaml")
    chosen["gpu"] = gpu or chosen["gpu"]
    spec = load_gpu(chosen["gpu"])
    check(spec, "gpu", f"config/gpus/{chosen['gpu']}.yaml")
    layers = [(str(defaults.relative_to(repo)), read_yaml(defaults)),
              (f"config/gpus/{chosen['gpu']}.yaml workload", spec.get("workload", {})),
              *layers, ("--config", command_line)]
    merged = {}
    for source, layer in layers:
        check(layer, "config", source, partial=True, blocks=blocks)
        merged = merge(merged, layer)
    merged["gpu"] = chosen["gpu"]
    check(merged, "config", "the merged config", blocks=blocks)
    check_depths(merged["stencil"]["kernels"])
    check_ranges(merged)
    return merged, [source if i == 0 else f"{source} ({', '.join(layer)})"
                    for i, (source, layer) in enumerate(layers) if layer]


def load_matrices(path: Path | None = None) -> list[dict]:
    """The 21 matrices of the paper's Table 2 (config/matrices.yaml), in the paper's order (D1..D21)."""
    return read_yaml(path or in_checkout("MATRICES_FILE"))["matrices"]


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
