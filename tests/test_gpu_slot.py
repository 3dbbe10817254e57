"""One job per GPU (membound.run.gpu_slot) on fake GPUs: a fake nvidia-smi lists them, the wrapper
locks them; racing jobs never share one, a killed holder frees its GPU, SLURM's choice is kept."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from membound.run import devices

GPUS = ["0, GPU-aaaa-0000, NVIDIA H200, 00000000:19:00.0", "1, GPU-bbbb-1111, NVIDIA H200, 00000000:3B:00.0"]
# The job: note which GPU it got and when it held it (one line, appended atomically), then hold it a while.
JOB = ("import os, sys, time; t0 = time.time(); time.sleep(float(sys.argv[2])); "
       "open(sys.argv[1], 'a').write(f\"{os.environ['CUDA_VISIBLE_DEVICES']} {os.environ['MEMBOUND_GPU_INDEX']} "
       "{t0} {time.time()}\\n\")")


@pytest.fixture
def node(tmp_path):
    """The environment of a node whose nvidia-smi lists GPUS, with its own lock folder, outside SLURM."""
    def make(lines=GPUS):
        (tmp_path / "smi.txt").write_text("\n".join(lines) + "\n")
        smi = tmp_path / "bin" / "nvidia-smi"
        smi.parent.mkdir(exist_ok=True)
        smi.write_text(f"#!/bin/sh\ncat {tmp_path / 'smi.txt'}\n")
        smi.chmod(0o755)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_") and k != "CUDA_VISIBLE_DEVICES"}
        return {**env, "PATH": f"{smi.parent}:{env['PATH']}", "MEMBOUND_GPU_LOCKS": str(tmp_path / "locks")}
    return make


def slot(env, *command, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "membound.run.gpu_slot", "--", *command], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def test_racing_jobs_never_share_a_gpu_and_use_both(node, tmp_path):
    env, log = node(), tmp_path / "held.txt"
    jobs = [slot(env, sys.executable, "-c", JOB, str(log), "0.3") for _ in range(8)]
    for job in jobs:
        assert job.wait(timeout=60) == 0, job.stderr.read()
    held = [line.split() for line in log.read_text().splitlines()]
    assert len(held) == 8
    assert {(uuid, index) for uuid, index, _, _ in held} == {("GPU-aaaa-0000", "0"), ("GPU-bbbb-1111", "1")}
    for uuid in ("GPU-aaaa-0000", "GPU-bbbb-1111"):
        spans = sorted((float(a), float(b)) for u, _, a, b in held if u == uuid)
        assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:])), f"{uuid} held twice at once"


def test_a_killed_holder_frees_its_gpu_for_the_next_job(node):
    env = node(GPUS[:1])
    holder = slot(env, "sleep", "60")
    lock = os.path.join(env["MEMBOUND_GPU_LOCKS"], "GPU-aaaa-0000.lock")
    for _ in range(100):
        if os.path.exists(lock) and open(lock).read().startswith(f"{holder.pid} "):
            break
        time.sleep(0.1)
    else:
        pytest.fail("the holder never took the GPU")
    waiter = slot(env, sys.executable, "-c", "import os; print(os.environ['CUDA_VISIBLE_DEVICES'])")
    time.sleep(1.5)
    assert waiter.poll() is None, "the second job ran while the first held the only GPU"
    os.kill(holder.pid, signal.SIGKILL)
    out, err = waiter.communicate(timeout=30)
    holder.wait()
    assert waiter.returncode == 0 and out.strip() == "GPU-aaaa-0000"
    assert "waiting for one" in err


def test_slurm_assignment_and_a_node_without_gpus_are_left_as_they_are(node):
    show = [sys.executable, "-c", "import os; print(os.environ.get('CUDA_VISIBLE_DEVICES', 'unset'))"]
    slurm = {**node(), "SLURM_JOB_ID": "42", "CUDA_VISIBLE_DEVICES": "1"}
    assert slot(slurm, *show).communicate(timeout=30)[0].strip() == "1"
    assert slot(node([]), *show).communicate(timeout=30)[0].strip() == "unset"


def test_the_exit_status_is_the_commands(node):
    job = slot(node(), sys.executable, "-c", "raise SystemExit(3)")
    assert job.wait(timeout=30) == 3


GPU_LIST = [devices.Gpu(0, "GPU-aaaa-0000", "NVIDIA H200", "00000000:19:00.0"),
            devices.Gpu(1, "GPU-bbbb-1111", "NVIDIA H200", "00000000:3B:00.0"),
            devices.Gpu(2, "GPU-cccc-2222", "NVIDIA H100 80GB HBM3", "00000000:5D:00.0")]


def test_visible_gpus_follow_cuda_visible_devices_by_index_or_uuid():
    assert devices.visible(GPU_LIST, {}) == GPU_LIST
    assert devices.visible(GPU_LIST, {"CUDA_VISIBLE_DEVICES": "1,GPU-aaaa"}) == [GPU_LIST[1], GPU_LIST[0]]
    assert devices.visible(GPU_LIST, {"CUDA_VISIBLE_DEVICES": ""}) == []
    with pytest.raises(devices.DeviceError, match="'7' names no single GPU"):
        devices.visible(GPU_LIST, {"CUDA_VISIBLE_DEVICES": "7"})


def test_mixed_models_are_refused_with_the_gpus_to_choose():
    devices.one_model(GPU_LIST[:2])
    with pytest.raises(devices.DeviceError, match=r"mixes GPU models \(2x NVIDIA H200, 1x NVIDIA H100 80GB HBM3\).*"
                                                  r"CUDA_VISIBLE_DEVICES=0,1 snakemake"):
        devices.one_model(GPU_LIST)


def test_pci_bus_ids_match_in_cuda_and_nvidia_smi_spelling():
    assert devices.by_bus_id("0000:3B:00.0", GPU_LIST) == GPU_LIST[1]
    assert devices.by_bus_id("0000:99:00.0", GPU_LIST) is None
    assert devices.smi_bus_id("0000:3b:00.0") == "00000000:3B:00.0"


def test_slots_default_to_the_gpus_and_refuse_more_than_there_are():
    assert devices.slots(None, GPU_LIST[:2]) == 2 and devices.slots(1, GPU_LIST[:2]) == 1
    assert devices.slots(None, []) == 1 and devices.slots(4, []) == 4    # no GPU listed (a dry run elsewhere)
    with pytest.raises(devices.DeviceError, match="gpu=3, but this node has 2 usable GPUs .*use gpu=2"):
        devices.slots(3, GPU_LIST[:2])
    with pytest.raises(devices.DeviceError, match="mixes GPU models"):
        devices.slots(None, GPU_LIST)
    assert devices.slots(None, GPU_LIST[:2], slurm=True) == 1
    with pytest.raises(devices.DeviceError, match="inside a SLURM allocation"):
        devices.slots(2, GPU_LIST[:2], slurm=True)


def test_every_job_shares_one_kernel_cache_unless_one_is_set(node, tmp_path):
    show = [sys.executable, "-c", "import os; print(os.environ['CUPY_CACHE_DIR'])"]
    env = {k: v for k, v in node().items() if k != "CUPY_CACHE_DIR"}
    shared = slot({**env, "XDG_CACHE_HOME": str(tmp_path)}, *show).communicate(timeout=30)[0].strip()
    assert shared == str(tmp_path / "membound" / "cupy-kernels")
    assert slot({**env, "CUPY_CACHE_DIR": "/x"}, *show).communicate(timeout=30)[0].strip() == "/x"


@pytest.mark.slow
def test_a_dry_run_on_two_gpus_sends_every_gpu_job_through_a_slot_one_job_per_repetition():
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "XDG_CONFIG_HOME": str(repo / ".no-user-profiles")}
    run = subprocess.run([sys.executable, "-m", "snakemake", "--profile", "profiles/h100", "all", "-n", "--forceall",
                          "-p", "--resources", "gpu=2"], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    commands = re.findall(r"^Shell command: (.*)$", run.stdout, re.MULTILINE)
    gpu_jobs = [c for c in commands if "membound.kernels.batch" in c or "membound.counters" in c]
    assert gpu_jobs and all(c.startswith("python -m membound.run.gpu_slot -- ") for c in gpu_jobs)
    stats = dict(re.findall(r"^(bench|counters\w*)\s+(\d+)$", run.stdout, re.MULTILINE))
    assert stats == {"bench": "20", "counters": "4", "counters_dgemm": "1"}    # 4 families x 5 repetitions
    spmv = next(c for c in gpu_jobs if "kernels.batch spmv" in c and "--rep 3" in c)
    assert spmv.count(" -- --matrix ") == 21 and "--out results/h100/raw/spmv.rep3.csv" in spmv


def test_rows_name_the_gpu_at_the_cuda_devices_bus_id(tmp_path, monkeypatch):
    from membound.run import runinfo

    smi = tmp_path / "nvidia-smi"
    smi.write_text('#!/bin/sh\n[ "$2" = "00000000:3B:00.0" ] && echo "1, GPU-bbbb-1111, NVIDIA H200, 580.1, 1980, 3201"\n')
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    info = runinfo._nvidia_smi("0000:3b:00.0")
    assert (info["device_index"], info["device_uuid"], info["device"]) == ("1", "GPU-bbbb-1111", "NVIDIA H200")
    assert runinfo._nvidia_smi("0000:99:00.0") == {}


def gone(pid: int) -> bool:
    """True once process `pid` has ended (a zombie no reaper has collected yet counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return True


@pytest.mark.parametrize("killed", ["snakemake", "shell"])
def test_a_job_ends_with_the_snakemake_or_shell_that_started_it_and_writes_nothing_after(node, tmp_path, killed):
    """kill -9 of Snakemake (or Snakemake stopping the job's shell): the command that gpu_slot runs is
    stopped within supervise.GRACE_S, before it would have written its file."""
    from membound.run import supervise

    late, pids = tmp_path / "late.csv", tmp_path / "pids"
    job = (f"import os, time; open({str(pids / 'job')!r}, 'w').write(str(os.getpid())); time.sleep(6); "
           f"open({str(late)!r}, 'w').write('written after its Snakemake was gone')")
    shell = f"set -e; {sys.executable} -m membound.run.gpu_slot -- {sys.executable} -c \"{job}\" > {tmp_path / 'log'} 2>&1"
    snakemake = (f"import os, subprocess, time; os.environ[{supervise.ENV!r}] = str(os.getpid()); "
                 f"p = subprocess.Popen(['bash', '-c', {shell!r}]); open({str(pids / 'shell')!r}, 'w').write(str(p.pid)); "
                 "time.sleep(60)")
    pids.mkdir()
    parent = subprocess.Popen([sys.executable, "-c", snakemake], env=node([]))
    for _ in range(200):
        if (pids / "job").exists() and (pids / "job").read_text():
            break
        time.sleep(0.05)
    else:
        pytest.fail("the job never started")
    os.kill(parent.pid if killed == "snakemake" else int((pids / "shell").read_text()), signal.SIGKILL)
    job_pid = int((pids / "job").read_text())
    deadline = time.time() + supervise.GRACE_S
    while not gone(job_pid) and time.time() < deadline:
        time.sleep(0.1)
    assert gone(job_pid), f"the job ran on after its {killed} was killed"
    time.sleep(6.5)
    assert not late.exists()
    assert killed == "shell" or "Snakemake (pid" in (tmp_path / "log").read_text()
    parent.kill()
    parent.wait()
