"""This node's GPU as it reports itself, and whether a device spec describes it.

`query()` reads the first GPU this process sees (CuPy's device 0, so CUDA_VISIBLE_DEVICES applies): its
device properties and attributes through CuPy (CUDA, or ROCm's HIP), and on NVIDIA nvidia-smi's row for
it. The clocks are the rated maximum the CUDA runtime reports (CUDA 13's cudaDeviceProp may lack the
clock fields: its attributes have them), else nvidia-smi's clocks.max (above the rated boost on GeForce
cards). The raw report is a plain dict: `props` (getDeviceProperties), `attributes` (CuPy's
Device.attributes, named as CuPy names them) and `smi_query` (nvidia-smi's CSV, header and one row);
`device(raw)` reads one into a `Device` whose every number names where it came from, so that a report
saved elsewhere reads the same (tests/fixtures/devices/, among them a real H100's). `mismatches`
compares a spec with a device: SMs, memory, L2 and the peak bandwidth from the memory clock, its
transfers per clock (config/archs.yaml) and the bus width, each within TOLERANCE.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field

import yaml

from membound.run import config, devices

TOLERANCE = 0.05            # a spec describes a device whose numbers are within 5% of its own
SMI_FIELDS = ("name", "compute_cap", "memory.total", "clocks.max.sm", "clocks.max.memory")
MiB = 2**20


class QueryError(RuntimeError):
    """The device cannot be read: one line naming the device and what is missing."""


@dataclass(frozen=True)
class Device:
    vendor: str              # nvidia | amd
    name: str                # as the device names itself, e.g. NVIDIA H100 PCIe
    arch: str                # sm_90 | gfx90a
    units: int               # SMs (NVIDIA) or CUs (AMD)
    clock_MHz: float         # the maximum SM (engine) clock
    memory_clock_MHz: float  # the maximum memory clock, as the device reports it
    bus_bits: int            # the memory bus width
    memory_GiB: float
    l2_MiB: float
    sources: dict = field(default_factory=dict, compare=False)   # each field's origin

    @property
    def unit(self) -> str:
        return "CU" if self.vendor == "amd" else "SM"

    @property
    def sm(self) -> int:
        """The compute capability as a number (sm_90: 90); 0 on AMD."""
        return int(self.arch[3:]) if self.arch.startswith("sm_") else 0


def archs() -> dict:
    """config/archs.yaml: one record per architecture, checked against its schema."""
    data = yaml.safe_load(config.ARCHS_FILE.read_text())
    config.check(data, "archs", "config/archs.yaml")
    return data


def bandwidth_TBs(device: Device, record: dict) -> float:
    """Peak memory bandwidth: transfers per memory clock (the architecture's record) x clock x bus width."""
    return record["memory_transfers_per_clock"] * device.memory_clock_MHz * 1e6 * device.bus_bits / 8 / 1e12


def slug(name: str) -> str:
    """A profile name for a device name: NVIDIA H100 PCIe -> h100_pcie, AMD Instinct MI300X -> mi300x."""
    short = re.sub(r"^(NVIDIA|AMD)\s+(Instinct\s+)?", "", name.strip(), flags=re.I)
    return re.sub(r"[^a-z0-9]+", "_", short.lower()).strip("_") or "gpu"


def new_name(name: str) -> str:
    """The profile name `python -m membound.specs new` gives device `name`: its slug, with _device where a
    curated spec (not one written from a device) has that name already."""
    base = slug(name)
    taken = base in config.profiles() and "generated" not in config.load_gpu(base)
    return f"{base}_device" if taken else base


def device(raw: dict) -> Device:
    """The Device of a raw report (query()'s, or a saved one); QueryError naming what it lacks."""
    props, attrs, smi = raw.get("props") or {}, raw.get("attributes") or {}, smi_fields(raw.get("smi_query", ""))
    name = str(smi.get("name") or _text(props.get("name")) or "the GPU").strip()
    amd = bool(props.get("gcnArchName"))
    got, src, missing = {}, {}, []

    def take(key, *choices):
        for value, scale, origin in choices:
            if value not in (None, "", "[N/A]", "N/A"):
                got[key], src[key] = float(value) * scale, origin
                return
        missing.append(key)

    if amd:
        arch, src["arch"] = _text(props["gcnArchName"]).split(":")[0], "device: hipDeviceProp.gcnArchName"
    elif props.get("major") is not None:
        arch, src["arch"] = f"sm_{props['major']}{props['minor']}", "device: cudaDeviceProp.major/minor"
    elif smi.get("compute_cap"):
        arch, src["arch"] = "sm_" + smi["compute_cap"].replace(".", ""), "device: nvidia-smi compute_cap"
    else:
        arch = ""
        missing.append("compute capability")
    api = "hipDeviceProp" if amd else "cudaDeviceProp"
    take("units", (props.get("multiProcessorCount"), 1, f"device: {api}.multiProcessorCount"),
         (attrs.get("MultiProcessorCount"), 1, "device: cudaDevAttrMultiProcessorCount"))
    take("clock_MHz", (props.get("clockRate"), 1e-3, f"device: {api}.clockRate"),
         (attrs.get("ClockRate"), 1e-3, "device: cudaDevAttrClockRate"),
         (smi.get("clocks.max.sm"), 1, "device: nvidia-smi clocks.max.sm"))
    take("memory_clock_MHz", (props.get("memoryClockRate"), 1e-3, f"device: {api}.memoryClockRate"),
         (attrs.get("MemoryClockRate"), 1e-3, "device: cudaDevAttrMemoryClockRate"),
         (smi.get("clocks.max.memory"), 1, "device: nvidia-smi clocks.max.memory"))
    take("bus_bits", (props.get("memoryBusWidth"), 1, f"device: {api}.memoryBusWidth"),
         (attrs.get("GlobalMemoryBusWidth"), 1, "device: cudaDevAttrGlobalMemoryBusWidth"))
    take("memory_GiB", (smi.get("memory.total"), 1 / 1024, "device: nvidia-smi memory.total (MiB)"),
         (props.get("totalGlobalMem"), 1 / 2**30, f"device: {api}.totalGlobalMem"))
    take("l2_MiB", (props.get("l2CacheSize"), 1 / MiB, f"device: {api}.l2CacheSize"),
         (attrs.get("L2CacheSize"), 1 / MiB, "device: cudaDevAttrL2CacheSize"))
    if missing:
        raise QueryError(f"{name}: the device query gave no {', '.join(missing)}; "
                         "a spec needs each (python -m membound.specs new --report FILE takes a saved report)")
    return Device("amd" if amd else "nvidia", name, arch, int(got["units"]), got["clock_MHz"],
                  got["memory_clock_MHz"], int(got["bus_bits"]), got["memory_GiB"], got["l2_MiB"], src)


def mismatches(spec: dict, dev: Device, records: dict) -> list[str]:
    """What of `spec` does not describe `dev` beyond TOLERANCE: '114 SMs (spec 132)', ... ([]: it does)."""
    record = records.get(dev.arch)
    found = {"sm_count": (dev.units, f"{dev.unit}s"), "memory_GB": (dev.memory_GiB, "GB memory"),
             "l2_MB": (dev.l2_MiB, "MB L2"),
             "memory_bandwidth_TBs": (bandwidth_TBs(dev, record) if record else None, "TB/s")}
    out = []
    for key, (value, unit) in found.items():
        if key not in spec:
            continue
        if value is None:
            out.append(f"bandwidth unknown ({dev.arch} has no record in config/archs.yaml)")
        elif abs(value - spec[key]) > TOLERANCE * spec[key]:
            out.append(f"{value:.3g} {unit} (spec {spec[key]:g})")
    return out


def cuda_major() -> int | None:
    """The CUDA major version the NVIDIA driver supports (nvidia-smi's header), or None."""
    try:
        out = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    found = re.search(r"CUDA Version:\s*(\d+)", out)
    return int(found.group(1)) if found else None


def cupy_package(vendor: str, cuda: int | None) -> str:
    """What to install for CuPy on this node."""
    if vendor == "amd":
        return "install CuPy for ROCm (docs.cupy.dev: Installation, AMD ROCm)"
    if cuda is None:
        return "make install GPU=cuda12 (or GPU=cuda13: the node's CUDA major; docs/environment.md)"
    return f"make install GPU=cuda{cuda} (the driver supports CUDA {cuda}; docs/environment.md)"


def query() -> dict:
    """The raw report of the first GPU this process sees; QueryError (one line) where it cannot be read."""
    try:
        import cupy as cp
    except ImportError:
        nvidia = devices.listed()
        name = nvidia[0].name if nvidia else "this node's GPU"
        raise QueryError(f"{name}: its SMs, L2 and bus width are read through CuPy, which is not installed: "
                         f"{cupy_package('nvidia' if nvidia else 'amd', cuda_major())}") from None
    try:
        dev = cp.cuda.Device(0)
        props = {k: _text(v) for k, v in cp.cuda.runtime.getDeviceProperties(dev.id).items()}
        attrs = dict(dev.attributes)
    except Exception as err:    # noqa: BLE001 - CuPy raises its runtime's own error types
        raise QueryError(f"CuPy could not read GPU 0 ({type(err).__name__}: {err})") from None
    return {"props": props, "attributes": attrs, "smi_query": "" if props.get("gcnArchName") else nvidia_smi(props)}


def nvidia_smi(props: dict) -> str:
    """nvidia-smi's CSV of SMI_FIELDS for the GPU of CUDA properties `props` (by its PCI bus id); '' where
    nvidia-smi is absent or fails (the properties and attributes stand in for it)."""
    if not shutil.which("nvidia-smi"):
        return ""
    bus = f"{props.get('pciDomainID', 0):04x}:{props.get('pciBusID', 0):02x}:{props.get('pciDeviceID', 0):02x}.0"
    cmd = ["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv", "-i", devices.smi_bus_id(bus)]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return ""


def smi_fields(csv: str) -> dict:
    """nvidia-smi's `--format=csv` output (a header, then the GPU's row) as {field: value}, the units
    ("[MiB]", "MiB") dropped; {} where it has no row."""
    lines = [line for line in csv.splitlines() if line.strip()]
    if len(lines) < 2:
        return {}
    keys = [re.sub(r"\s*\[.*\]$", "", k.strip()) for k in lines[0].split(",")]
    values = [re.sub(r"\s+(MiB|MHz|W)$", "", v.strip()) for v in lines[1].split(",")]
    return dict(zip(keys, values))


def _text(value):
    return value.decode() if isinstance(value, bytes) else value
