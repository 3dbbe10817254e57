"""The start-up check of a GPU profile: its device, CuPy, then the spec against the device, each a one-line
error; the profile `python -m membound.run.detect` names."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from membound.run import config, detect, probe


def test_a_gpu_profile_without_cupy_names_the_package_for_the_drivers_cuda(monkeypatch):
    monkeypatch.setattr(detect, "device_names", lambda: ["NVIDIA H100 80GB HBM3"])
    monkeypatch.setattr(detect.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(detect, "cuda_major", lambda: 13)
    with pytest.raises(config.ConfigError, match=r"profile 'h100' .* not installed: make install GPU=cuda13 "):
        detect.require("h100", config.load_gpu("h100"))


def test_cupy_advice_without_a_driver_version_and_on_amd():
    assert "GPU=cuda12 (or GPU=cuda13" in detect.cupy_package("nvidia", None)
    assert "ROCm" in detect.cupy_package("amd", None)


@pytest.mark.parametrize("listed, fix", [([], "ROCm"), (["NVIDIA H100 80GB HBM3"], "GPU=cuda13")])
def test_reading_a_gpu_without_cupy_names_the_package_of_its_vendor(monkeypatch, listed, fix):
    monkeypatch.setitem(sys.modules, "cupy", None)   # import cupy fails
    monkeypatch.setattr(probe.devices, "listed", lambda: [probe.devices.Gpu(0, "GPU-0", name, "0:0") for name in listed])
    with pytest.raises(probe.QueryError, match=f"not installed: .*{fix}"):
        probe.query()


# A profile from what the device reports (issue 71): tests/fixtures/devices/*.json are faked reports.
FIXTURES = Path(__file__).parent / "fixtures" / "devices"


def on(monkeypatch, gpu):
    """This node's GPU is the faked report `gpu`, CuPy installed."""
    raw = json.loads((FIXTURES / f"{gpu}.json").read_text())
    monkeypatch.setattr(detect, "device_names", lambda: [raw["props"]["name"]])
    monkeypatch.setattr(probe, "query", lambda: raw)
    monkeypatch.setattr(detect.importlib.util, "find_spec", lambda name: object())


@pytest.mark.parametrize("gpu, profile", [
    ("h100_sxm5", "h100"), ("h200", "h200"), ("gh200", "gh200"), ("a100_80gb_pcie", "a100"), ("mi250x", "mi250x"),
    ("h100_pcie", "h100_pcie"), ("a100_sxm4_40gb", "a100_sxm4_40gb"), ("l40s", "l40s"),
    ("rtx_4090", "geforce_rtx_4090"), ("mi300x", "mi300x")])
def test_detect_names_the_profile_whose_spec_describes_the_gpu_never_cpu(gpu, profile, monkeypatch, capsys):
    on(monkeypatch, gpu)
    assert detect.main() == profile
    curated = profile in config.profiles()
    assert ("no profile describes this" in capsys.readouterr().err) != curated


@pytest.mark.parametrize("gpu, profile, says", [
    ("h100_pcie", "h100", "profile 'h100' measures an NVIDIA H100 80GB HBM3 (SXM5), but this node's NVIDIA H100 PCIe "
     "has 114 SMs (spec 132), 2.04 TB/s (spec 3.35): use --profile profiles/h100_pcie (python -m membound.specs new "
     "writes "
     "it from this GPU)"),
    ("h100_pcie", "h200", "profile 'h200' measures an NVIDIA H200 (SXM, 141 GB), but this node has NVIDIA H100 PCIe: "
     "use --profile profiles/h100_pcie (python -m membound.specs new writes it from this GPU)"),
    ("a100_sxm4_40gb", "a100", "profile 'a100' measures an NVIDIA A100 80GB PCIe, but this node's NVIDIA "
     "A100-SXM4-40GB has 40 GB memory (spec 80), 1.56 TB/s (spec 1.94): use --profile profiles/a100_sxm4_40gb")])
def test_a_curated_profile_whose_spec_does_not_describe_the_gpu_stops_with_one_line(gpu, profile, says, monkeypatch):
    on(monkeypatch, gpu)
    with pytest.raises(config.ConfigError) as stop:
        detect.require(profile, config.load_gpu(profile))
    assert str(stop.value).startswith(says) and "\n" not in str(stop.value)


def test_a_curated_profile_on_its_own_gpu_starts(monkeypatch):
    on(monkeypatch, "h200")     # its bandwidth from the device, 4.92 TB/s, is 2.4% above the spec's
    detect.require("h200", config.load_gpu("h200"))


def test_detect_reads_a_stand_in_nvidia_smi_and_cupy(tmp_path):
    """`python -m membound.run.detect` on an L40S (today's code said cpu): nvidia-smi on PATH and a CuPy
    module that answer as the faked report does."""
    report = FIXTURES / "l40s.json"
    (tmp_path / "nvidia-smi").write_text(f"""#!{sys.executable}
import json, sys
sys.path.insert(0, {str(Path(probe.__file__).parents[2])!r})
from membound.run.probe import smi_fields
smi = smi_fields(json.load(open({str(report)!r}))["smi_query"])
fields = next(a for a in sys.argv if a.startswith("--query-gpu=")).split("=", 1)[1].split(",")
if "--format=csv" in sys.argv:
    print(", ".join(fields))
print(", ".join(smi.get(f, "[N/A]") for f in fields))
""")
    (tmp_path / "nvidia-smi").chmod(0o755)
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "__init__.py").write_text(f"""import json
from types import SimpleNamespace
raw = json.load(open({str(report)!r}))
runtime = SimpleNamespace(getDeviceProperties=lambda device: raw["props"])
cuda = SimpleNamespace(Device=lambda i: SimpleNamespace(id=i, attributes=raw["attributes"]), runtime=runtime)
""")
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    run = subprocess.run([sys.executable, "-m", "membound.run.detect"], capture_output=True, text=True, env=env)
    assert run.stdout == "l40s\n", run.stderr
    assert run.stderr == ("membound: no profile describes this NVIDIA L40S: python -m membound.specs new writes "
                          "l40s from it\n")


@pytest.mark.parametrize("gpu, profile", [("h100_sxm5", "h100"), ("l40s", "l40s")])
def test_make_runs_profile_is_the_one_that_describes_the_gpu_else_one_written_from_it(gpu, profile, monkeypatch,
                                                                                        capsys, tmp_path):
    from membound.specs import __main__ as specs_cli

    on(monkeypatch, gpu)
    for folder in ("config/gpus", "profiles"):
        (tmp_path / folder).mkdir(parents=True)
    monkeypatch.setattr(config, "REPO", tmp_path)
    assert specs_cli.main(["new", "--if-missing"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{profile}\n"
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    if gpu == "l40s":
        assert err == ("membound: no profile describes this NVIDIA L40S: wrote config/gpus/l40s.yaml and "
                       "profiles/l40s/ from the device; running it (review its sources: README, Your GPU)\n")
        assert written == ["config", "config/gpus", "config/gpus/l40s.yaml", "profiles", "profiles/l40s",
                           "profiles/l40s/config.v8+.yaml", "profiles/l40s/membound.yaml"]
    else:
        assert err == "" and written == ["config", "config/gpus", "profiles"]


@pytest.mark.parametrize("gpu, profile", [("h100_sxm5", "h100"), ("l40s", None), ("h100_pcie", None)])
def test_a_bare_snakemake_takes_the_profile_that_describes_the_gpu_never_cpu(gpu, profile, monkeypatch):
    """A bare `snakemake` (profiles/default) takes what `python -m membound.run.detect` and `make run` take:
    on a GPU no profile describes it stops with one line naming the one to write, never cpu or another card's."""
    on(monkeypatch, gpu)
    if profile:
        assert detect.this_machine() == profile
        return
    with pytest.raises(config.ConfigError) as stop:
        detect.this_machine()
    assert "no profile describes this NVIDIA" in str(stop.value) and "membound.specs new" in str(stop.value)
    assert "\n" not in str(stop.value)


def test_the_profile_to_write_is_named_by_its_path_which_snakemake_finds_unlinked(monkeypatch):
    """A profile `specs new` writes is not linked into Snakemake's profile folder until `make install` runs
    again, so `--profile <name>` would not find it: the fix names it `profiles/<name>`."""
    on(monkeypatch, "h100_pcie")
    assert detect.to_use(probe.device(probe.query())).startswith("profiles/h100_pcie ")
    monkeypatch.setattr(probe, "query", lambda: (_ for _ in ()).throw(probe.QueryError("no CuPy")))
    assert detect.other(["NVIDIA L40S"]).startswith("profiles/l40s ")
