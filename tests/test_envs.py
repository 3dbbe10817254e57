"""The conda environment of the rules lists the package's own dependencies."""

import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"matplotlib": "matplotlib-base"}   # conda-forge's name for the same library
# the environment runs inside snakemake, whose executor plugins run in snakemake's own environment
NOT_IN_ENV = {"snakemake", "snakemake-executor-plugin-slurm", "snakemake-executor-plugin-slurm-jobstep"}


def test_conda_env_matches_pyproject_dependencies():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~ ]", d)[0].lower() for d in deps} - NOT_IN_ENV
    env = yaml.safe_load((REPO / "envs" / "membound.yaml").read_text())["dependencies"]
    listed = set()
    for entry in env:
        for item in entry["pip"] if isinstance(entry, dict) else [entry]:
            listed.add(re.split(r"[<>=!~ ]", item)[0].lower())
    missing = {n for n in names if CONDA_NAMES.get(n, n) not in listed}
    assert not missing, f"envs/membound.yaml lacks {sorted(missing)}"
