"""The locked environment (docs/environment.md): the locks hold the reference runs' versions and
pyproject's requirements, `make install` installs them, the rules' conda env equals the CUDA 13 lock,
and the package outside a checkout stops with one line."""

import json
import platform
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from membound.run import environment

REPO = Path(__file__).resolve().parents[1]
INVENTORY = json.loads((REPO / "results" / "reference" / "h200" / "raw" / "inventory.json").read_text())
REFERENCE_PYTHON = INVENTORY["python"]["version"]
PYTHONS = sorted({REFERENCE_PYTHON, platform.python_version()})  # the reference runs' and this machine's
CUDA = ("nvidia-", "cuda-", "cupy-")


def test_the_locks_hold_the_reference_runs_versions_for_their_python():
    nvcc = INVENTORY["nvcc"]["version"]
    for extra, lockfile in environment.LOCKS.items():
        pins = environment.locked(REPO / lockfile, REFERENCE_PYTHON)
        for name, version in INVENTORY["packages"].items():
            if name != "cupy":
                assert pins[name] == version, (lockfile, name)
        assert pins.get(f"cupy-{extra}x") == (INVENTORY["packages"]["cupy"] if extra else None), lockfile
    cuda13 = environment.locked(REPO / environment.LOCKS["cuda13"], REFERENCE_PYTHON)
    assert all(cuda13[n].startswith(nvcc + ".") for n in ("cuda-toolkit", "nvidia-cuda-nvrtc")), cuda13


@pytest.mark.parametrize("python", PYTHONS)
def test_each_lock_meets_pyproject_and_a_gpu_lock_adds_cuda_only(python):
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    cpu = environment.locked(REPO / environment.LOCKS[None], python)
    env = {"python_version": ".".join(python.split(".")[:2]), "python_full_version": python, "sys_platform": "linux"}
    for extra, lockfile in environment.LOCKS.items():
        pins = environment.locked(REPO / lockfile, python)
        for line in project["dependencies"] + project["optional-dependencies"]["test"] + \
                project["optional-dependencies"].get(extra, []):
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate(env):
                assert req.specifier.contains(pins.get(canonicalize_name(req.name), "0"), prereleases=True), \
                    f"{lockfile} lacks {line} for Python {python}: run make lock"
        added = {n: v for n, v in pins.items() if n not in cpu}
        assert {n: pins[n] for n in cpu} == cpu and all(n.startswith(CUDA) for n in added), lockfile
        assert bool(added) == bool(extra), lockfile


def test_the_venv_holds_the_cpu_lock():
    differ = {name: (version, _installed(name))
              for name, version in environment.locked(REPO / environment.LOCKS[None], platform.python_version()).items()
              if _installed(name) != version}
    assert not differ, f"this venv differs from {environment.LOCKS[None]} (locked, installed): {differ}; run make install"


def _installed(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def test_make_install_installs_the_lock_then_membound_without_dependencies(tmp_path):
    plan = subprocess.run(["make", "-n", "-B", "install", f"VENV={tmp_path}", "GPU=cuda13"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout
    order = [f"pip install -q -r {environment.LOCKS[None]}", "pip install -q --no-deps -e .",
             f"pip install -q -r {environment.LOCKS['cuda13']}"]
    assert all(step in plan for step in order) and sorted(order, key=plan.index) == order, plan
    wrong = subprocess.run(["make", "-n", "install", f"VENV={tmp_path}", "GPU=cuda11"], cwd=REPO,
                           capture_output=True, text=True)
    assert wrong.returncode != 0 and "GPU=cuda11: no lock envs/requirements-cuda11.txt" in wrong.stderr


def test_the_conda_env_is_the_cuda13_lock_for_the_reference_python():
    text = (REPO / environment.CONDA_ENV).read_text()
    deps = yaml.safe_load(text)["dependencies"]
    assert f"python={REFERENCE_PYTHON}" in deps
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    locked = environment.locked(REPO / environment.LOCKS["cuda13"], REFERENCE_PYTHON)
    assert sorted(pip) == sorted([f"{n}=={v}" for n, v in locked.items()] + [environment.CONDA_SELF])
    assert text == environment.conda_env(REPO, environment.LOCKS["cuda13"], REFERENCE_PYTHON), "run make lock"


def test_the_conda_env_finds_the_checkout_only_from_the_default_prefix(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    assert environment.conda_prefix_problem(None, REPO) is None
    assert environment.conda_prefix_problem(REPO / ".snakemake" / "conda", REPO) is None
    why = environment.conda_prefix_problem(tmp_path / "envs", REPO)
    assert why.startswith("--sdm conda: envs/membound.yaml installs membound") and "\n" not in why
    monkeypatch.chdir(tmp_path)  # snakemake --directory elsewhere: its .snakemake/ is there
    assert "not this checkout" in environment.conda_prefix_problem(None, REPO)


def test_license_is_mit_and_named_in_pyproject():
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"] == "MIT"
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License") and "the membound authors" in text


def _config_from(site: Path, cwd: Path, **env):
    """`config.profiles()` of a non-editable copy of the package in `site`, run in `cwd`."""
    code = f"import sys; sys.path.insert(0, {str(site)!r}); from membound.run import config; print(config.profiles())"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", **env})


def _non_editable(tmp_path: Path) -> Path:
    """What a non-editable `pip install .` puts in site-packages: the package and its package data."""
    site = tmp_path / "site-packages"
    shutil.copytree(REPO / "src" / "membound", site / "membound")
    return site


def test_a_non_editable_install_reads_the_checkout_or_stops_with_one_line(tmp_path):
    site = _non_editable(tmp_path)
    profiles = sorted(p.stem for p in (REPO / "config" / "gpus").glob("*.yaml"))
    assert _config_from(site, REPO).stdout.strip() == str(profiles)
    assert _config_from(site, tmp_path, MEMBOUND_CHECKOUT=str(REPO)).stdout.strip() == str(profiles)
    for run, says in ((_config_from(site, tmp_path), f"run from a checkout: no config/gpus/ and workflow/ beside the "
                                                     f"installed package or in {tmp_path}"),
                      (_config_from(site, REPO, MEMBOUND_CHECKOUT=str(tmp_path)),
                       f"MEMBOUND_CHECKOUT={tmp_path} has no config/gpus/")):
        assert run.returncode == 1 and run.stdout == "" and len(run.stderr.splitlines()) == 1, run.stderr
        assert says in run.stderr


def test_a_non_editable_install_imports_and_measures_outside_a_checkout(tmp_path):
    """Only what reads the checkout's files stops (in one line, when called): every module imports and
    a benchmark CLI measures."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(_non_editable(tmp_path))}
    code = ("import importlib, pkgutil, membound; [importlib.import_module(m.name) for m in "
            "pkgutil.walk_packages(membound.__path__, 'membound.') if not m.name.endswith('__main__')]")
    imports = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert imports.returncode == 0 and imports.stderr == "", imports.stderr
    out = tmp_path / "scale.csv"
    bench = subprocess.run([sys.executable, "-m", "membound.kernels.scale", "--backend", "cpu", "--out", str(out),
                            "--warmup", "1", "--reps", "1", "--log2-min", "10", "--log2-max", "10", "--precisions",
                            "fp64"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert bench.returncode == 0, bench.stderr[-2000:]
    assert "scale,numpy,cuda_core" in out.read_text()
    check = subprocess.run([sys.executable, "-m", "membound.run.profiles", "check", "cpu"], cwd=tmp_path,
                           capture_output=True, text=True, env=env)
    assert check.returncode == 1 and check.stderr.count("\n") == 1 and "run from a checkout" in check.stderr
