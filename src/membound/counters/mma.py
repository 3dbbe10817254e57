"""What one tensor-core instruction counted by ncu is worth: 2 m n k FLOPs of the MMA shape the
kernel issues, per operand type (DMMA: f64; HMMA: tf32, f16, bf16), never one factor for all. A sparse
mma.sp (HMMA.SP, counted among the HMMA instructions) is worth 2 m n k of its logical shape.

The shape is looked up in this order: the kernel's own source (src/membound/kernels/<family>/**.cu with
the headers it includes: its `mma.sync` of that operand type), a library kernel's name
(`..._tensor16x8x8_...` in cuBLAS/CUTLASS names), else the precision's record's shape on the spec's
vendor (peaks.at), marked "assumed" (exact only on a GPU with one shape per type, as the A100's FP64 m8n8k4).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pandas as pd

from membound.model.precision import FORMATS, fmt

KERNELS = Path(__file__).parents[1] / "kernels"   # membound's own CUDA sources (read, not imported)
KERNEL = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(")
# PTX mma.sync, and mma.sp (2:4-sparse A; its shape is the logical one, k counting the zeros it skips, so
# that its FLOPs are paper 002's C_TC with S of the logical operand, eq. 3 and 20): shape, optional
# layout, D type, then the A operand type (what the MMA computes in)
MMA = re.compile(r"mma(?:\.sp(?:::ordered_metadata)?)?\.sync\.aligned\.m(\d+)n(\d+)k(\d+)(?:\.row\.col)?\.\w+\."
                 rf"({'|'.join(f.tc_type for f in FORMATS.values())})\b")
LIBRARY_SHAPE = re.compile(r"tensor(\d+)x(\d+)x(\d+)")        # cuBLAS/CUTLASS names: ..._tensor16x8x8_...
INCLUDE = re.compile(r'^#include "([\w.]+\.cuh)"$', re.MULTILINE)  # a source's local headers
Shape = tuple[int, int, int]


def base_name(kernel_name: str) -> str:
    """A kernel name as ncu prints it, without return type, namespace, template arguments and
    parameters ('void scale_tc<float>(float *, ...)' -> 'scale_tc')."""
    head = re.split(r"[<(]", str(kernel_name), maxsplit=1)[0].strip()
    return head.split()[-1].split("::")[-1] if head else ""


def _sources() -> tuple[str, ...]:
    """The text of each of membound's own CUDA sources, with the local headers it includes."""
    texts = []
    for cu in sorted(KERNELS.rglob("*.cu")):
        text = cu.read_text()
        texts.append(text + "".join(next(KERNELS.rglob(h)).read_text() for h in INCLUDE.findall(text)))
    return tuple(texts)


@cache
def own_shapes() -> dict[str, dict[str, Shape]]:
    """Each kernel that membound's own CUDA sources define -> {operand type: the MMA shape its source
    file (with its headers) issues in that type}; a type with several shapes in one file is left out."""
    out = {}
    for text in _sources():
        found: dict[str, set[Shape]] = {}
        for m, n, k, kind in MMA.findall(text):
            found.setdefault(kind, set()).add((int(m), int(n), int(k)))
        shapes = {kind: next(iter(s)) for kind, s in found.items() if len(s) == 1}
        out.update({name: shapes for name in KERNEL.findall(text)})
    return out


@cache
def sparse_kernels() -> frozenset[str]:
    """Names of the kernels of membound's own sources that issue mma.sp: their FLOPs come from HMMA.SP
    instructions x the logical shape, never from ncu's op counters, whose count of a sparse MMA has
    not been checked against a known one here (docs/counters.md)."""
    return frozenset(name for text in _sources() if re.search(r"\bmma\.sp\b", text) for name in KERNEL.findall(text))


def own_kernels() -> frozenset[str]:
    """Names of the kernels that membound's own CUDA sources define."""
    return frozenset(own_shapes())


def shape(kernel_name: str, kind: str = "f64", fallback=None) -> tuple[Shape | None, str]:
    """The shape (m, n, k) of one `kind` MMA instruction (f64, tf32, f16, bf16) of `kernel_name` and
    where it comes from (module docstring); (None, 'unknown') where nothing gives it."""
    if own := own_shapes().get(base_name(kernel_name), {}).get(kind):
        return own, "its source's mma.sync"
    if match := LIBRARY_SHAPE.search(str(kernel_name)):
        return tuple(map(int, match.groups())), "its name"
    return (tuple(fallback), "the spec's mma shape, assumed") if fallback else (None, "unknown")


def _count(value) -> float:
    """An instruction count, 0 where not collected (NaN, or a counter CSV from before the column)."""
    return 0.0 if value is None or pd.isna(value) else float(value)


def _part(count: float, name: str, kernel_name: str, kind: str, fallback) -> tuple[float, str]:
    """FLOPs of `count` MMA instructions of `kind` and how they were counted ('' where none ran)."""
    if not count:
        return 0.0, ""
    s, why = shape(kernel_name, kind, fallback)
    if s is None:
        return float("nan"), f"{name} instructions of unknown shape ({why}): not counted"
    m, n, k = s
    return count * 2 * m * n * k, f"{name} instructions x {2 * m * n * k} (m{m}n{n}k{k}{'' if kind == 'f64' else ' ' + kind}, {why})"


# ncu's tensor-path op counters per tensor-core type (1 FLOP per unit, checked on the H100 against
# cuBLAS HGEMM/TF32 GEMM and membound's SCALE, docs/counters.md) and their columns in the launches
# (bf16: fp16's unit, assumed); from the records (precision.Format.ncu_tensor)
OPS = {f.tc_type: (f.tensor_column, f.ncu_tensor) for f in FORMATS.values()}


def _ops(l, kind: str) -> tuple[float, str] | None:
    """The op counter of `kind` where ncu measured it, else None."""
    column, metric = OPS[kind]
    return (float(l[column]), f"{metric} (1 FLOP per unit)") if pd.notna(l.get(column, float("nan"))) else None


def tensor_flops(launches: pd.DataFrame, fallbacks: dict) -> tuple[pd.Series, list[str]]:
    """Per launch: tensor-path FLOPs and where they come from. Each type from its op counter (OPS)
    where measured, else from instructions x 2 m n k: FP64 DMMA; TF32 and FP16 HMMA of the launch
    precision's type, less the HFMA2.MMA instructions that ncu counts on the same pipe (register
    moves and constants the compiler issues there, in any kernel). `fallbacks`: precision -> the
    spec's shape."""
    flops, how = [], []
    for _, l in launches.iterrows():
        precision, name = l.get("precision", "fp64"), l["kernel_name"]
        dmma = _ops(l, "f64") or _part(_count(l["dmma_inst"]), "DMMA", name, "f64", fallbacks.get("fp64"))
        kind = fmt(precision).tc_type
        hmma_inst = _count(l.get("hmma_inst")) - _count(l.get("hfma2_mma_inst"))
        if kind == "f64":
            hmma = (float("nan"), "HMMA instructions in an fp64 launch: not counted") if hmma_inst else (0.0, "")
        elif base_name(name) not in sparse_kernels() and (measured := _ops(l, kind)):
            hmma = measured
        elif pd.isna(l.get("hmma_inst", float("nan"))):
            hmma = float("nan"), "HMMA instructions not collected (ncu lacks the metric): not counted"
        else:
            hmma = _part(hmma_inst, "HMMA", name, kind, fallbacks.get(precision))
        flops.append(dmma[0] + hmma[0])
        how.append("; ".join(h for h in (dmma[1], hmma[1]) if h) or "no tensor instructions")
    return pd.Series(flops, index=launches.index, dtype=float), how
