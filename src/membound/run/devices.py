"""The node's NVIDIA GPUs as nvidia-smi lists them, and the ones a run may use.

nvidia-smi ignores CUDA_VISIBLE_DEVICES, so the GPUs a run may use are filtered here: unset, every
GPU; set, the GPUs it names, by nvidia-smi index (CUDA numbers them in the same order on a node of
one model) or by UUID (a prefix such as GPU-5e1c is enough, as CUDA takes it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass

QUERY = ["--query-gpu=index,uuid,name,pci.bus_id", "--format=csv,noheader"]


class DeviceError(RuntimeError):
    """The GPUs cannot be used as asked: the message says why and what to do."""


@dataclass(frozen=True)
class Gpu:
    index: int       # nvidia-smi's index on the node
    uuid: str        # GPU-xxxxxxxx-...
    name: str        # e.g. NVIDIA H200
    pci_bus_id: str  # e.g. 00000000:19:00.0


def listed(nvidia_smi: str = "nvidia-smi") -> list[Gpu]:
    """Every GPU nvidia-smi lists ([] where it is absent or fails)."""
    if not shutil.which(nvidia_smi):
        return []
    try:
        out = subprocess.run([nvidia_smi, *QUERY], capture_output=True, text=True, timeout=30, check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return []
    gpus = []
    for line in out.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 4 and fields[0].isdigit():
            gpus.append(Gpu(int(fields[0]), fields[1], fields[2], fields[3]))
    return gpus


def visible(gpus: list[Gpu], env=os.environ) -> list[Gpu]:
    """The GPUs of `gpus` that CUDA_VISIBLE_DEVICES lets a process use, in its order; DeviceError
    for an entry that names none of them."""
    value = env.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return list(gpus)
    chosen = []
    for token in (t.strip() for t in value.split(",")):
        if not token:
            continue
        found = [g for g in gpus if (token.isdigit() and g.index == int(token)) or
                 (token.startswith("GPU-") and g.uuid.startswith(token))]
        if len(found) != 1:
            raise DeviceError(f"CUDA_VISIBLE_DEVICES={value}: '{token}' names no single GPU of this node "
                              f"({', '.join(f'{g.index}: {g.uuid}' for g in gpus) or 'none listed by nvidia-smi'}); "
                              "give nvidia-smi indices or GPU UUIDs")
        chosen += [g for g in found if g not in chosen]
    return chosen


def one_model(gpus: list[Gpu]) -> None:
    """DeviceError unless every GPU of `gpus` is the same model (a run measures one GPU model)."""
    models = Counter(g.name for g in gpus)
    if len(models) > 1:
        same = ",".join(str(g.index) for g in gpus if g.name == models.most_common(1)[0][0])
        raise DeviceError(f"this node mixes GPU models ({', '.join(f'{n}x {m}' for m, n in models.items())}): a run "
                          f"measures one; choose its GPUs, e.g. CUDA_VISIBLE_DEVICES={same} snakemake ...")


def bus_key(pci_bus_id: str) -> tuple[int, int, int, int]:
    """(domain, bus, device, function) of a PCI bus id in nvidia-smi's ('00000000:19:00.0') or
    CUDA's ('0000:19:00.0') spelling, so that the two compare."""
    domain, bus, rest = pci_bus_id.strip().lower().split(":")
    device, function = rest.split(".")
    return int(domain, 16), int(bus, 16), int(device, 16), int(function, 16)


def smi_bus_id(pci_bus_id: str) -> str:
    """`pci_bus_id` in nvidia-smi's spelling (an 8-digit domain), as its -i option takes it."""
    domain, bus, device, function = bus_key(pci_bus_id)
    return f"{domain:08X}:{bus:02X}:{device:02X}.{function:X}"


def by_bus_id(pci_bus_id: str, gpus: list[Gpu]) -> Gpu | None:
    """The GPU of `gpus` at PCI bus id `pci_bus_id` (either spelling), or None."""
    key = bus_key(pci_bus_id)
    return next((g for g in gpus if bus_key(g.pci_bus_id) == key), None)


def slots(requested: int | None, gpus: list[Gpu], slurm: bool = False) -> int:
    """How many GPU jobs a local run runs at once: `requested` (--resources gpu=N) or one per GPU
    in `gpus` (the usable ones, one model: DeviceError where they mix models or N exceeds them).
    Inside a SLURM allocation (`slurm`) the jobs keep the GPUs as SLURM set them: one at a time."""
    if slurm:
        if requested and requested > 1:
            raise DeviceError(f"--resources gpu={requested} inside a SLURM allocation: its jobs would share the "
                              "GPUs as SLURM set them; run with --profile slurm (one GPU per job) or gpu=1")
        return 1
    one_model(gpus)
    if requested and gpus and requested > len(gpus):
        raise DeviceError(f"--resources gpu={requested}, but this node has {len(gpus)} usable GPU"
                          f"{'s' if len(gpus) > 1 else ''} ({', '.join(str(g.index) for g in gpus)}): "
                          f"use gpu={len(gpus)} or fewer")
    return requested or max(len(gpus), 1)
