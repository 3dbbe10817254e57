"""The machine inventory with the commands replaced: what present tools give, and absent ones
recorded as absent, never an error."""

import json
import shutil
import subprocess
import sys

import pytest

from membound.run import inventory, runinfo

SMI = ("0, NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB, 1980 MHz, 2619 MHz, 1755 MHz, 2619 MHz, 700.00 W\n"
       "1, NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB, 1980 MHz, 2619 MHz, 345 MHz, 2619 MHz, 700.00 W\n")
OUTPUTS = {
    "nvidia-smi": SMI,
    "nvcc": "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\n",
    "ncu": "NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2024.1.1.0 (build 33998838) (public-release)\n",
    "git": "0123456789abcdef0123456789abcdef01234567\n",
}


@pytest.fixture
def gpu_node(monkeypatch):
    """A node with nvidia-smi, nvcc, ncu and git (a clean checkout), and no ROCm."""
    calls = []

    def run(cmd):
        calls.append(cmd)
        if cmd[0] == "git" and "status" in cmd:
            return ""
        return OUTPUTS.get(cmd[0])

    monkeypatch.setattr(inventory, "run", run)
    monkeypatch.setitem(sys.modules, "cupy", None)       # CuPy not importable
    return calls


def test_gpu_node_inventory(gpu_node):
    inv = inventory.collect("/repo")
    assert [d["name"] for d in inv["gpus"]["devices"]] == ["NVIDIA H100 80GB HBM3"] * 2
    d = inv["gpus"]["devices"][0]
    assert (d["driver_version"], d["memory.total"], d["clocks.max.sm"], d["power.limit"]) == \
        ("550.54.15", "81559 MiB", "1980 MHz", "700.00 W")
    assert inv["nvcc"]["version"] == "12.4" and inv["ncu"]["version"] == "2024.1.1.0"
    assert inv["workflow"] == {"status": "present", "commit": OUTPUTS["git"].strip(), "dirty": False}
    assert ["git", "-C", "/repo", "rev-parse", "HEAD"] in gpu_node


def test_absent_probes_are_recorded_not_raised(gpu_node):
    inv = inventory.collect("/repo")
    for probe in ("rocm_smi", "rocprof", "cuda"):
        assert inv[probe]["status"] == "absent" and inv[probe]["why"]
    json.dumps(inv)                                     # everything is JSON


def test_bare_machine_has_every_tool_absent(monkeypatch):
    monkeypatch.setattr(inventory, "run", lambda cmd: None)
    inv = inventory.collect("/nowhere")
    absent = [k for k, v in inv.items() if isinstance(v, dict) and v.get("status") == "absent"]
    assert set(absent) >= {"gpus", "nvcc", "ncu", "rocm_smi", "rocprof", "workflow"}
    assert inv["cpu"]["logical_cpus"] >= 1 and inv["python"]["version"]
    assert set(inv["packages"]) == {"snakemake", "numpy", "scipy", "pandas", "cupy", "matplotlib"}


def test_every_installed_package_and_the_membound_version_are_recorded():
    import importlib.metadata

    import membound
    inv = inventory.collect("/nowhere")
    assert inv["membound"] == membound.__version__
    every = {d.metadata["Name"] for d in importlib.metadata.distributions()}
    assert set(inv["installed"]) == every and len(every) > len(inv["packages"])
    assert inv["installed"]["pytest"] == importlib.metadata.version("pytest")


def test_dirty_checkout(monkeypatch):
    monkeypatch.setattr(inventory, "run", lambda cmd: " M Snakefile\n" if "status" in cmd else "abc\n")
    assert inventory.git("/repo") == {"status": "present", "commit": "abc", "dirty": True}


def test_run_answers_none_for_a_missing_or_failing_command():
    assert inventory.run(["no-such-tool-here", "--version"]) is None
    assert inventory.run([sys.executable, "-c", "raise SystemExit(3)"]) is None
    assert inventory.run([sys.executable, "-c", "print('ok')"]) == "ok\n"


def test_package_versions():
    assert inventory.version("pandas") != "absent"
    assert inventory.version("no_such_package_xyz") == "absent"


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path):
    """A git checkout with one commit of code (src/x.py) and a README."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("r\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    return tmp_path, _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "code")


@pytest.mark.skipif(shutil.which("git") is None, reason="no git here")
def test_row_commit_names_the_checkout_and_its_uncommitted_changes(checkout, tmp_path_factory):
    repo, sha = checkout
    assert runinfo.commit.__wrapped__(repo) == sha
    (repo / "src" / "x.py").write_text("x = 2\n")
    assert runinfo.commit.__wrapped__(repo) == sha + "+dirty"
    assert runinfo.commit.__wrapped__(tmp_path_factory.mktemp("bare")) == ""


def test_provenance_names_the_commit_and_whether_a_commit_holds_that_code():
    sha = "0123456789abcdef" * 2 + "01234567"
    assert inventory.provenance([sha]) == (f"Measured at commit {sha}; in a clone of the repository, `git diff --stat "
                                           f"{sha[:7]} -- Snakefile workflow src scripts config profiles envs "
                                           "pyproject.toml` lists the code changed since.")
    assert "uncommitted changes" in inventory.provenance([sha + "+dirty"])
    assert "code that measured is unknown" in inventory.provenance([])
