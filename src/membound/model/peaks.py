"""A device spec's numbers in one precision, read through one accessor, `at(gpu, precision)`: the
dense peaks of CUDA cores (AMD: the vector ALUs) and tensor cores (AMD: the matrix cores) and the
bandwidth (config/gpus/<gpu>.yaml: peak_TFLOPs.<precision>, memory_bandwidth_TBs), where the device has
them the 2:4-sparse tensor cores' peak (peak_TFLOPs.<precision>.sparse_tensor_core, the datasheets'
"with sparsity" figure), and from the precision's record (membound.model.precision) the element size D
and the matrix instruction's shape and operand type on the spec's vendor (NVIDIA's mma.sync and mma.sp,
AMD's MFMA).

A precision whose tensor-core peak is null has no tensor cores on that device (the CPU spec: all of
them; its MMA tiles are emulated with numpy), or, where the spec's source of it begins "absent" (a spec
written from a device: membound.specs), a peak neither the device nor its architecture's record tells:
`note` says which, and every table, figure and claim that needs the peak prints it instead of a number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from membound.model import equations
from membound.model.precision import FORMATS

SPEC_PRECISIONS = tuple(FORMATS)     # bf16: listed in a spec where its peaks differ from fp16's (Format.peaks_as)
ELEMENT_BYTES = {f.name: f.bytes for f in FORMATS.values()}
UNITS = ("cuda_core", "tensor_core")


@dataclass(frozen=True)
class Peaks:
    precision: str
    bandwidth: float                            # TB/s
    cuda_core: float | None                     # dense TFLOP/s; None: not published for this device
    tensor_core: float | None                   # dense TFLOP/s; None: no tensor cores in this precision
    mma_shape: tuple[int, int, int] | None      # m, n, k of one MMA instruction (emulated where no tensor cores)
    mma_type: str                               # its operand type (PTX/ISA: f64, tf32, f32, f16, bf16)
    sparse_tensor_core: float | None = None     # 2:4-sparse tensor cores (mma.sp), logical TFLOP/s; None: none
    sparse_mma_shape: tuple[int, int, int] | None = None   # logical m, n, k of one mma.sp instruction
    absent: tuple[str, ...] = ()                # the units whose null peak is unknown, not none (sources: "absent")

    @property
    def element_bytes(self) -> int:
        """D, the element size of the precision (paper 000 eq. 5-13)."""
        return FORMATS[self.precision].bytes

    @property
    def has_tensor_cores(self) -> bool:
        return self.tensor_core is not None

    @property
    def alpha(self) -> float:
        """alpha = P_TC / P_CC, the tensor-core to CUDA-core peak ratio (paper 000 eq. 19); NaN where
        either peak is missing."""
        return self.tensor_core / self.cuda_core if self.tensor_core and self.cuda_core else math.nan

    def peak(self, unit: str, sparsity: str = "dense") -> float | None:
        """The TFLOP/s of `unit` (cuda_core or tensor_core) in this precision, or None; with sparsity
        "2:4" the sparse tensor cores' (logical FLOPs, counting the zeros mma.sp skips: paper 002 eq. 20)."""
        if sparsity == "2:4":
            return self.sparse_tensor_core if unit == "tensor_core" else None
        return {"cuda_core": self.cuda_core, "tensor_core": self.tensor_core}[unit]

    def balance(self, unit: str = "cuda_core", sparsity: str = "dense") -> float:
        """Machine balance P / B of `unit` in FLOP/byte (paper 000 eq. 1); NaN without its peak."""
        peak = self.peak(unit, sparsity)
        return equations.machine_balance(peak, self.bandwidth) if peak else math.nan

    @property
    def note(self) -> str:
        """What a table must say instead of this precision's tensor-core numbers ('' where it has them)."""
        unknown = "peak in {} unknown: neither the device nor its architecture's record tells (the spec's sources)"
        missing = [] if self.tensor_core else [unknown.format(f"tensor-core {self.precision}") if "tensor_core" in
                                               self.absent else f"no tensor cores in {self.precision}"]
        missing += [] if self.cuda_core else [unknown.format(f"CUDA-core {self.precision}") if "cuda_core" in
                                              self.absent else f"no published CUDA-core peak in {self.precision}"]
        return "; ".join(missing)


def at(gpu: dict, precision: str) -> Peaks:
    """The numbers of spec `gpu` in `precision` (fp64, fp32, fp16, bf16; one the spec does not list, those
    of its record's `peaks_as`: bf16 fp16's), or a ValueError naming the missing key and the fix."""
    listed_peaks = gpu.get("peak_TFLOPs", {})
    same = FORMATS[precision].peaks_as if precision in FORMATS else ""
    peaks = listed_peaks.get(precision, listed_peaks.get(same) if same else None)
    if precision not in SPEC_PRECISIONS or peaks is None:
        raise ValueError(f"spec '{gpu.get('name')}' has no peak_TFLOPs.{precision}: add its CUDA-core and tensor-core "
                         f"peaks, with their sources, to config/gpus/*.yaml (precisions: {', '.join(SPEC_PRECISIONS)})")
    f = FORMATS[precision]
    mma = f.mfma if gpu.get("vendor") == "amd" else f.mma
    sparse = peaks.get("sparse_tensor_core")
    why = gpu.get("sources", {}).get("peak_TFLOPs", {}).get(precision if precision in listed_peaks else same, {})
    absent = tuple(u for u in UNITS if peaks[u] is None and str(why.get(u, "")).startswith("absent"))
    return Peaks(precision, gpu["memory_bandwidth_TBs"], peaks["cuda_core"], peaks["tensor_core"],
                 mma.shape if mma else None, mma.type if mma else "", sparse,
                 f.mma_sp.shape if sparse and f.mma_sp else None, absent)


def no_rows(gpu: dict, precision: str, what: str) -> str:
    """What a table or figure says for a precision without `what` rows: that, and why there may be none."""
    note = at(gpu, precision).note
    return f"no {precision} {what} rows in this run's raw results" + (f"\n({note})" if note else "")


def listed(gpu: dict) -> list[str]:
    """The precisions spec `gpu` gives peaks for, in SPEC_PRECISIONS order; ValueError for a name that
    has no precision record (the spec schema does not type them: membound.model.precision does)."""
    if unknown := sorted(set(gpu.get("peak_TFLOPs", {})) - set(SPEC_PRECISIONS)):
        raise ValueError(f"spec '{gpu.get('name')}' has peak_TFLOPs.{unknown[0]}, a precision without a record: "
                         f"use one of {', '.join(SPEC_PRECISIONS)} (membound.model.precision.FORMATS)")
    return [p for p in SPEC_PRECISIONS if p in gpu.get("peak_TFLOPs", {})]


def covered(gpu: dict) -> list[str]:
    """The precisions `at` answers for spec `gpu`: those it lists, and those whose record reads a listed
    one's peaks (Format.peaks_as: bf16 where only fp16 is listed), in SPEC_PRECISIONS order."""
    own = listed(gpu)
    return [p for p in SPEC_PRECISIONS if p in own or FORMATS[p].peaks_as in own]


def row_precision(row) -> str:
    """The precision of a raw row (a mapping): its `precision`, or fp64 where it has none (rows written
    before the column existed, as membound.run.raw.later_columns completes them)."""
    p = row.get("precision") if hasattr(row, "get") else None
    return p if isinstance(p, str) and p else "fp64"
