"""The locked environment (docs/environment.md): the pip locks envs/requirements*.txt, compiled from
pyproject.toml by `uv pip compile` with the reference runs' package versions, and the rules' conda
env envs/membound.yaml, written from the CUDA 13 lock for the reference runs' Python.

`python -m membound.run.environment UV` (what `make lock` runs) rewrites all four files.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

LOCKS = {None: "envs/requirements.txt", "cuda12": "envs/requirements-cuda12.txt",
         "cuda13": "envs/requirements-cuda13.txt"}
CONDA_ENV = "envs/membound.yaml"
CONDA_LOCK = "cuda13"               # the rules' conda env: the reference runs' CUDA
INVENTORIES = "results/reference/*/raw/inventory.json"
MACHINES = ("x86_64", "aarch64")    # the profiles' hosts (gh200 is aarch64)
# the conda env installs membound itself from the checkout: Snakemake copies the env file to
# <conda prefix>/<hash>.yaml and conda runs its pip from there, so with the default prefix
# (<checkout>/.snakemake/conda) the checkout is two folders up
CONDA_SELF = "-e ../.."


def reference(repo: Path) -> tuple[str, dict[str, str]]:
    """The reference runs' Python and package versions (every inventory.json under `repo`; they must
    agree): CuPy as the wheel of the run's CUDA major, and that major's toolkit at nvcc's release."""
    seen = {}
    for path in sorted(repo.glob(INVENTORIES)):
        inv = json.loads(path.read_text())
        packages = dict(inv["packages"])
        if "cupy" in packages:
            major = inv["cuda"]["runtime"].split(".")[0]
            packages[f"cupy-cuda{major}x"] = packages.pop("cupy")
            if inv["nvcc"].get("version", "").split(".")[0] == major:
                packages["cuda-toolkit"] = inv["nvcc"]["version"] + ".*"
        seen[str(path.relative_to(repo))] = (inv["python"]["version"], packages)
    if not seen or len({json.dumps(v) for v in seen.values()}) != 1:
        raise ValueError(f"the reference inventories {sorted(seen)} must exist and agree on Python and packages")
    return next(iter(seen.values()))


def constraints(python: str, packages: dict[str, str], extra: str | None) -> str:
    """uv's constraints for the lock of `extra`: the reference's versions for the reference's Python
    (another Python gets the newest release that supports it), its CuPy version for either CUDA
    major, its CUDA toolkit release for its own major only."""
    major_minor = ".".join(python.split(".")[:2])
    pins = {n: v for n, v in packages.items() if not n.startswith("cupy-cuda") and n != "cuda-toolkit"}
    cupy = next((v for n, v in packages.items() if n.startswith("cupy-cuda")), None)
    if extra and cupy:
        pins[f"cupy-{extra}x"] = cupy
    lines = [f'{name}=={version} ; python_version == "{major_minor}"\n' for name, version in sorted(pins.items())]
    if extra and f"cupy-{extra}x" in packages and "cuda-toolkit" in packages:  # nvJitLink too (cuSPARSE's)
        lines += [f"{name}=={packages['cuda-toolkit']}\n" for name in ("cuda-toolkit", "nvidia-nvjitlink")]
    return "".join(lines)


def locked(lockfile, python: str, machine: str = "x86_64") -> dict[str, str]:
    """The packages of `lockfile` (name -> version) that install with `python` on Linux `machine`."""
    env = {"python_version": ".".join(python.split(".")[:2]), "python_full_version": python,
           "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": machine,
           "implementation_name": "cpython", "platform_python_implementation": "CPython"}
    pins = {}
    for line in Path(lockfile).read_text().splitlines():
        if not line or line[0] in "# -":  # comments, hashes (indented) and options
            continue
        req = Requirement(line.split(" \\")[0])
        if req.marker is None or req.marker.evaluate(env):
            pins[canonicalize_name(req.name)] = str(req.specifier).removeprefix("==")
    return pins


def conda_env(repo: Path, lockfile: str, python: str) -> str:
    """envs/membound.yaml: conda-forge's `python`, then every package of `lockfile` for it through pip."""
    per_machine = [locked(repo / lockfile, python, m) for m in MACHINES]
    if any(p != per_machine[0] for p in per_machine):
        raise ValueError(f"{lockfile} differs between {' and '.join(MACHINES)}: one conda env cannot hold it")
    pip = "".join(f"      - {name}=={version}\n" for name, version in sorted(per_machine[0].items()))
    return f"""# The rules' conda environment (`snakemake --sdm conda`), written by `make lock` from {lockfile}
# for the reference runs' Python (docs/environment.md); do not edit. membound itself is installed
# from the checkout, which works with Snakemake's default --conda-prefix (.snakemake/conda).
channels:
  - conda-forge
  - nodefaults
dependencies:
  - python={python}
  - pip
  - pip:
{pip}      - {CONDA_SELF}
"""


def conda_prefix_problem(conda_prefix, checkout) -> str | None:
    """Why the rules' conda env could not install membound from `checkout` with Snakemake's
    `conda_prefix` (None: the default, .snakemake/conda in the working directory), or None."""
    prefix = Path(conda_prefix or ".snakemake/conda").resolve()
    if (prefix / ".." / "..").resolve() == Path(checkout).resolve():
        return None
    return (f"--sdm conda: {CONDA_ENV} installs membound from the folder two above the conda prefix ({prefix}), "
            f"which is not this checkout ({checkout}); run snakemake from the checkout without --conda-prefix "
            "and --directory (or use the venv: make install; docs/environment.md)")


def compile_locks(uv: str, repo: Path) -> list[str]:
    """Write every lock and the conda env with the `uv` executable; the paths written."""
    python, packages = reference(repo)
    oldest = tomllib.loads((repo / "pyproject.toml").read_text())["project"]["requires-python"].removeprefix(">=")
    for extra, lock in LOCKS.items():
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as pins:
            pins.write(constraints(python, packages, extra))
            pins.flush()
            extras = ["--extra", "test"] + (["--extra", extra] if extra else [])
            same = ["-c", LOCKS[None]] if extra else []  # a GPU lock: the CPU lock's versions, plus CuPy
            subprocess.run([uv, "pip", "compile", "pyproject.toml", *extras, "-c", pins.name, *same, "--universal",
                            "--python-version", oldest, "--generate-hashes", "--no-annotate", "--quiet",
                            "--custom-compile-command", "make lock", "-o", lock], cwd=repo, check=True)
    (repo / CONDA_ENV).write_text(conda_env(repo, LOCKS[CONDA_LOCK], python))
    return [*LOCKS.values(), CONDA_ENV]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m membound.run.environment UV (the uv executable; `make lock` installs one)")
    print("written:", *compile_locks(sys.argv[1], Path.cwd()))
