"""The machine inventory with the commands replaced: what present tools give, and absent ones
recorded as absent, never an error."""

import json
import sys

import pytest

from membound import inventory

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
