"""What a result was measured on: the run-info columns of every raw CSV row."""

from __future__ import annotations

import datetime as dt
import functools
import os
import platform
import shutil
import subprocess
from pathlib import Path

import numpy as np

import membound
from membound.run import config, devices, inventory


def _nvidia_smi(pci_bus_id: str) -> dict:
    """Index, UUID, name, driver and current clocks of the GPU at `pci_bus_id` from nvidia-smi ({}
    where it is absent). By bus id: nvidia-smi ignores CUDA_VISIBLE_DEVICES (membound.run.devices)."""
    if not shutil.which("nvidia-smi"):
        return {}
    fields = "index,uuid,name,driver_version,clocks.sm,clocks.mem"
    try:
        out = subprocess.run(["nvidia-smi", "-i", devices.smi_bus_id(pci_bus_id), f"--query-gpu={fields}",
                              "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return {}
    fields = [v.strip() for v in (out.splitlines() or [""])[0].split(",")]
    if len(fields) != 6:
        return {}
    index, uuid, name, driver, sm, mem = fields
    return {"device_index": index, "device_uuid": uuid, "device": name, "driver": driver, "sm_clock_mhz": sm,
            "mem_clock_mhz": mem}


def _cuda() -> dict:
    import cupy as cp

    rt = cp.cuda.runtime
    device = cp.cuda.Device().id
    props = rt.getDeviceProperties(device)
    version = rt.runtimeGetVersion()
    info = {"device": props["name"].decode(), "device_index": device, "device_uuid": "",
            "vendor": "amd" if rt.is_hip else "nvidia",
            "runtime": f"{'HIP' if rt.is_hip else 'CUDA'} {version // 1000}.{version % 1000 // 10}",
            "cupy": cp.__version__, "l2_bytes": props["l2CacheSize"],
            "driver": str(rt.driverGetVersion())}
    info.update(_nvidia_smi(rt.deviceGetPCIBusId(device)))
    return info


@functools.cache
def commit(repo: Path | None = None) -> str:
    """The git commit of the workflow checkout `repo` (config.found()), '+dirty' appended where tracked
    files differ from it ('' outside a git checkout): the code that measured a row."""
    repo = repo or config.found()
    if repo is None:
        return ""
    git = inventory.git(repo)
    return "" if git["status"] != inventory.PRESENT else git["commit"] + ("+dirty" if git["dirty"] else "")


def describe(backend: str) -> dict:
    """Run-info columns for `backend` ('cuda' or 'cpu'): device (its name, nvidia-smi index and UUID on
    the node: which GPU of a multi-GPU node measured), driver, versions, clocks, host, the
    SLURM job id (empty outside SLURM), date, membound version and git commit."""
    info = {"device": platform.processor() or platform.machine(), "device_index": "", "device_uuid": "",
            "vendor": "cpu", "driver": "",
            "runtime": f"numpy {np.__version__}", "cupy": "", "sm_clock_mhz": "", "mem_clock_mhz": "",
            "l2_bytes": ""}
    if backend == "cuda":
        info.update(_cuda())
    info.update({"numpy": np.__version__, "host": platform.node(),
                 "slurm_job": os.environ.get("SLURM_JOB_ID", ""),
                 "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                 "membound": membound.__version__, "commit": commit()})
    return info


def has_gpu() -> bool:
    """True when CuPy imports and sees at least one device."""
    try:
        import cupy as cp

        return cp.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - any import or driver failure means: no usable GPU
        return False
