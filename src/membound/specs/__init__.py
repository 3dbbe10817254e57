"""A device spec (config/gpus/<name>.yaml) from what the device reports (membound.run.probe) and its
architecture's record (config/archs.yaml), and two specs compared number by number.

Peaks: units (SMs or CUs) x maximum clock x FLOP per clock per unit of the record, in each precision of
membound.model.precision that the record lists; a tensor-core peak only where the precision's record has
a matrix instruction on the vendor (NVIDIA mma.sync, AMD MFMA; 2:4-sparse: NVIDIA's mma.sp), named in its
source. Bandwidth: the record's transfers per memory clock x the memory clock x the bus width. What
neither tells is null with its source saying "absent: ..." (peaks.at says so for the tables), never
a guess.
"""

from __future__ import annotations

import datetime

from membound.model import peaks
from membound.model.precision import FORMATS
from membound.run.probe import Device, bandwidth_TBs

UNITS = ("cuda_core", "tensor_core", "sparse_tensor_core")
MIN_SM = 80          # membound's kernels issue mma.sync in f64 and bf16: sm_80 or later


class SpecError(ValueError):
    """No spec can be written for this device: one line naming it and what is missing."""


def record_of(dev: Device, records: dict) -> dict:
    """The architecture record of `dev`, or SpecError naming the device and what is missing."""
    if dev.vendor == "nvidia" and dev.sm < MIN_SM:
        raise SpecError(f"{dev.name} is {dev.arch}: membound needs sm_80 or later (mma.sync in f64 and bf16); "
                        "no spec written")
    if dev.arch not in records:
        known = ", ".join(k for k, r in records.items() if r["vendor"] == dev.vendor)
        kind = "AMD target" if dev.vendor == "amd" else "NVIDIA architecture"
        raise SpecError(f"{dev.name}: unknown {kind} {dev.arch} (config/archs.yaml has {known}): add its record, "
                        "each number with its source; no spec written")
    return records[dev.arch]


def _sig(x: float) -> float:
    return float(f"{x:.4g}")


def _tensor_clock(dev: Device, record: dict) -> tuple[float | None, str]:
    """The clock (MHz) of tensor peaks with an FP32 accumulator and its source: the device's maximum,
    or where the record lists the clock its vendor states them at (Hopper: tensor_clock_MHz), that
    one; None and why where the record knows none for this maximum."""
    if "tensor_clock_MHz" not in record:
        return dev.clock_MHz, dev.sources["clock_MHz"]
    listed, why = record["tensor_clock_MHz"], record["sources"]["tensor_clock_MHz"]
    if round(dev.clock_MHz) not in listed:
        return None, (f"absent: {dev.arch}'s tensor peaks hold at a clock the device does not report, known for a "
                      f"maximum of {', '.join(map(str, listed))} MHz, not {dev.clock_MHz:g} (config/archs.yaml "
                      f"{dev.arch}: {why})")
    return listed[round(dev.clock_MHz)], (f"config/archs.yaml {dev.arch} tensor_clock_MHz at a maximum of "
                                          f"{dev.clock_MHz:g}")


def _peak(dev: Device, record: dict, precision: str, unit: str) -> tuple[float | None, str]:
    """One peak of `dev` in TFLOP/s and its source."""
    arch, fmt = dev.arch, FORMATS[precision]
    rate = record["flop_per_clock"][precision].get(unit)
    why = record["sources"]["flop_per_clock"][precision].get(unit, f"none: config/archs.yaml {arch} lists none")
    if rate is None:
        return None, why
    mhz, clock, instruction = dev.clock_MHz, dev.sources["clock_MHz"], ""
    if unit != "cuda_core":
        if dev.vendor == "amd":     # the record has AMD's dense MFMA; a sparse peak rests on the arch record alone
            mma = fmt.mfma
        else:
            mma = fmt.mma_sp if unit == "sparse_tensor_core" else fmt.mma
        if mma is None:
            return None, f"none: membound.model.precision's {precision} record has no {dev.vendor} {unit} instruction"
        instruction = f"; {mma.instruction} (membound.model.precision)"
        if fmt.tc_acc == "float32":
            mhz, clock = _tensor_clock(dev, record)
            if mhz is None:
                return None, clock
            if "GeForce" in dev.name and "geforce_tensor_factor" in record:
                rate *= record["geforce_tensor_factor"]
                instruction += (f"; x{record['geforce_tensor_factor']:g} on GeForce "
                                f"({record['sources']['geforce_tensor_factor']})")
    value = dev.units * mhz * 1e6 * rate / 1e12
    return _sig(value), (f"{dev.units} {dev.unit}s ({dev.sources['units']}) x {mhz:g} MHz ({clock}) x {rate:g} "
                         f"FLOP/clock/{dev.unit} (config/archs.yaml {arch}: {why}){instruction}")


def generate(dev: Device, records: dict) -> dict:
    """The spec of `dev` (the curated specs' keys and schema, plus sm_count and `generated`)."""
    record = record_of(dev, records)
    peak, src = {}, {}
    for precision in FORMATS:
        if precision not in record["flop_per_clock"]:
            continue
        units = UNITS if "sparse_tensor_core" in record["flop_per_clock"][precision] else UNITS[:2]
        found = {unit: _peak(dev, record, precision, unit) for unit in units}
        peak[precision] = {unit: value for unit, (value, _) in found.items()}
        src[precision] = {unit: why for unit, (_, why) in found.items()}
    for precision, fmt in FORMATS.items():   # bf16 listed only where it differs from fp16 (Format.peaks_as)
        if fmt.peaks_as and peak.get(precision) == peak.get(fmt.peaks_as):
            peak.pop(precision, None)
            src.pop(precision, None)
    bw = bandwidth_TBs(dev, record)
    return {
        "name": dev.name, "vendor": dev.vendor, "device_match": dev.name, "arch": dev.arch, "sm_count": dev.units,
        "memory_bandwidth_TBs": _sig(bw), "peak_TFLOPs": peak, "l2_MB": round(dev.l2_MiB, 2),
        "memory_GB": round(dev.memory_GiB, 1), "profiler": "rocprof" if dev.vendor == "amd" else "ncu",
        "generated": f"python -m membound.specs new, {datetime.date.today().isoformat()}, from the device and "
                     f"config/archs.yaml {dev.arch}: review every source, then keep it (README, Your GPU)",
        "sources": {
            "memory_bandwidth_TBs": (f"{record['memory_transfers_per_clock']:g} transfers per clock (config/archs.yaml "
                                     f"{dev.arch}: {record['sources']['memory_transfers_per_clock']}) x "
                                     f"{dev.memory_clock_MHz:g} MHz ({dev.sources['memory_clock_MHz']}) x "
                                     f"{dev.bus_bits} bit ({dev.sources['bus_bits']})"),
            "peak_TFLOPs": src,
            "l2_MB": f"{dev.sources['l2_MiB']}, in MiB",
            "memory_GB": f"{dev.sources['memory_GiB']}, in GiB (the datasheets' GB)",
            "sm_count": dev.sources["units"],
        },
    }


def compared(new: dict, old: dict) -> list[tuple[str, float | None, float | None, float | None]]:
    """(quantity, new, old, relative difference) for SMs, memory, L2, bandwidth and every peak either
    spec gives (bf16 through peaks_as); the difference None where either lacks the number."""
    rows = [(key, new.get(key), old.get(key)) for key in ("sm_count", "memory_GB", "l2_MB", "memory_bandwidth_TBs")]
    for precision in dict.fromkeys(peaks.covered(new) + peaks.covered(old)):
        a, b = (peaks.at(s, precision) if precision in peaks.covered(s) else None for s in (new, old))
        for unit in ("cuda_core", "tensor_core"):
            for sparsity in ("dense", "2:4") if unit == "tensor_core" else ("dense",):
                label = f"{precision} {'sparse_' if sparsity == '2:4' else ''}{unit} TFLOP/s"
                rows.append((label, a and a.peak(unit, sparsity), b and b.peak(unit, sparsity)))
    return [(k, a, b, abs(a - b) / b if a is not None and b else None) for k, a, b in rows]
