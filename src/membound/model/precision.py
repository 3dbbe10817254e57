"""The precision axis: one record per number format (`Format`) with every trait that depends on it, and
the error bounds a case's check uses.

A case's `precision` names its storage format (the rows' column): fp64, fp32, fp16 or bf16 (PRECISIONS,
what the kernels run; a family runs those its IMPLS list). On CUDA cores it computes in that format,
except that fp16 and bf16 sums accumulate in fp32 (a policy of every membound kernel); on tensor cores
its MMA takes operands in the format's tensor-core type (f64, tf32, f16, bf16) and accumulates in fp64
(f64) or fp32 (tf32, f16, bf16). numpy has no bf16: its arrays hold the bit patterns as uint16 (the
device's too), `quantize` rounds float64 to them (to nearest, ties to even) and `decode` reads them
back as float32. The record holds the element size, the numpy and CUDA
types, both accumulators, the dense MMA the kernels issue (NVIDIA mma.sync; the CPU emulates it) and
AMD's MFMA (Table 1), the 2:4-sparse mma.sp, and the unit roundoffs the tolerances below are built on.
Their shapes and instructions are the PTX ISA's (9.7.14.5: mma.sync, 9.7.14.6: mma.sp, its sparsity
2:4 for f16/bf16 and 1:2 for tf32) and AMD's CDNA2 ISA (v_mfma_*); the CUDA sources issue the same.

Checks (docs/precision.md): inputs are drawn in float64 and rounded to the storage format
(`quantize`), and the reference is computed in float64 from the rounded values, so that it differs
from the kernel only by the kernel's own rounding. Its tolerance is an a-priori bound, not a guess:
for outputs y_i = sum over at most n terms a_ik x_k, with operands rounded to the tensor-core type
(relative error u_op each), products and sums in an accumulator of unit roundoff u_acc (any order of
summation) and the result rounded to storage (u_st), componentwise (Higham, Accuracy and Stability of
Numerical Algorithms, 2nd ed., eq. 3.5 and Lemma 3.1)

    |y_hat - y| <= e |A||x| + u_st (|y| + e |A||x|),   e = (1 + u_op)^2 (1 + gamma_n(u_acc)) - 1,

so that ||y_hat - y|| / ||y|| <= e (1 + u_st) R + u_st with R = || |A||x| || / ||A x|| from the data;
the float64 reference's own error, gamma_n(2^-53) R, is added. Tensor-core accumulation is taken as
truncating (u_acc = 2^-23 for the fp32 accumulator; Fasi et al., "Numerical behavior of NVIDIA
tensor cores", PeerJ CS 2021), DMMA as IEEE fp64.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

U64 = 2.0**-53


@dataclass(frozen=True)
class Mma:
    """One matrix instruction: its shape m, n, k (mma.sp: the logical one, k counting the zeros it skips),
    the operand type it computes in (PTX/ISA), the instruction, and for mma.sp its sparsity (kept, chunk):
    at most `kept` nonzeros of every `chunk` consecutive A elements of a row."""
    shape: tuple[int, int, int]
    type: str
    instruction: str
    sparsity: tuple[int, int] | None = None


@dataclass(frozen=True)
class Format:
    name: str          # the rows' `precision`
    bytes: int         # element size D (paper 000 eq. 5-13)
    numpy: str         # numpy dtype of storage (bf16: uint16, its bit patterns; `decode`)
    ctype: str         # CUDA C type of storage
    cuda_type: int     # its cudaDataType_t (cuSPARSE, cuBLAS): CUDA_R_64F 1, CUDA_R_32F 0, CUDA_R_16F 2, CUDA_R_16BF 14
    acc: str           # numpy dtype of the CUDA-core accumulator (fp16: float32)
    tc_acc: str        # numpy dtype of the tensor-core accumulator (the MMA's D)
    u: float           # unit roundoff of storage (round to nearest)
    acc_u: float       # unit roundoff of the CUDA-core accumulator (fp16: fp32 accumulation)
    tc_operand_u: float  # relative error of rounding a storage value to the MMA's operand type (0: exact)
    tc_acc_u: float    # unit roundoff of the tensor-core accumulator (truncating fp32: 2^-23)
    eta: float         # the absolute error of a rounding to storage that underflows: half the smallest subnormal
    mma: Mma           # the dense MMA the kernels issue (NVIDIA mma.sync, sm_80+; emulated on the CPU)
    mfma: Mma | None   # AMD CDNA2's dense MFMA (Table 1: no membound kernel issues it); None: none
    mma_sp: Mma | None = None   # the 2:4-sparse mma.sp (the stencils' tc_sparse); None: none in this format
    runs: bool = True  # a precision the kernels run (PRECISIONS); else the specs' Table 1 alone
    peaks_as: str = ""  # a spec that lists no peaks of this format has this one's (bf16: fp16's, equal on Hopper)
    ncu_tensor: str = ""  # ncu's op counter of the tensor path of its MMA type (less ".sum"; docs/counters.md)
    cc_ops: tuple[str, ...] = ()  # ncu's SASS add, mul, fma of its CUDA cores (and rocprof's VALU's); (): none
    tuned_as: str = ""  # the precision whose tuned knobs (SpMV's TC_*, the 2:4 stencils' FRAG_SMEM) it borrows
    cuda_macros: tuple[tuple[str, int], ...] = ()  # -D macros its CUDA kernels need beside ELEM (stencil_real.cuh)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.numpy)

    @property
    def tc_type(self) -> str:
        """The tensor-core operand type (PTX): f64 | tf32 | f16 | bf16."""
        return self.mma.type

    @property
    def tensor_column(self) -> str:
        """The counter rows' column of `ncu_tensor` (tensor_fp64_ops, tensor_tf32_ops, ...: its source type)."""
        return f"tensor_{self.ncu_tensor.split('_src_')[1].split('_dst_')[0]}_ops"

    @property
    def tuned(self) -> str:
        """The precision whose tuned knobs the kernels use in this one (`tuned_as`, else itself)."""
        return self.tuned_as or self.name

    def matrix(self, vendor: str) -> Mma:
        """The dense matrix instruction of a device of `vendor` (a spec's: nvidia, amd or cpu, which
        emulates NVIDIA's); ValueError where that vendor has none in this format."""
        found = self.mfma if vendor == "amd" else self.mma
        if found is None:
            raise ValueError(f"no {vendor} matrix instruction in {self.name} (membound.model.precision.FORMATS)")
        return found


def _mma(m: int, n: int, k: int, acc: str, op: str, sparsity=None) -> Mma:
    """The PTX mma.sync (mma.sp where `sparsity`) of shape m n k, D and C in `acc`, A and B in `op`."""
    head = "mma.sp::ordered_metadata" if sparsity else "mma"
    return Mma((m, n, k), op, f"{head}.sync.aligned.m{m}n{n}k{k}.row.col.{acc}.{op}.{op}.{acc}", sparsity)


FORMATS = {f.name: f for f in (
    Format("fp64", 8, "float64", "double", 1, "float64", "float64", U64, U64, 0.0, U64, 2.0**-1075,
           _mma(8, 8, 4, "f64", "f64"), Mma((16, 16, 4), "f64", "v_mfma_f64_16x16x4f64"),
           ncu_tensor="sm__ops_path_tensor_src_fp64", cc_ops=("dadd", "dmul", "dfma")),
    Format("fp32", 4, "float32", "float", 0, "float32", "float32", 2.0**-24, 2.0**-24, 2.0**-11, 2.0**-23, 2.0**-150,
           _mma(16, 8, 8, "f32", "tf32"), Mma((16, 16, 4), "f32", "v_mfma_f32_16x16x4f32"),
           _mma(16, 8, 16, "f32", "tf32", (1, 2)), ncu_tensor="sm__ops_path_tensor_src_tf32_dst_fp32",
           cc_ops=("fadd", "fmul", "ffma")),
    Format("fp16", 2, "float16", "__half", 2, "float32", "float32", 2.0**-11, 2.0**-24, 0.0, 2.0**-23, 2.0**-25,
           _mma(16, 8, 16, "f32", "f16"), Mma((16, 16, 16), "f16", "v_mfma_f32_16x16x16f16"),
           _mma(16, 8, 32, "f32", "f16", (2, 4)), ncu_tensor="sm__ops_path_tensor_src_fp16",
           cc_ops=("hadd", "hmul", "hfma")),
    Format("bf16", 2, "uint16", "__nv_bfloat16", 14, "float32", "float32", 2.0**-8, 2.0**-24, 0.0, 2.0**-23, 2.0**-134,
           _mma(16, 8, 16, "f32", "bf16"), Mma((16, 16, 16), "bf16", "v_mfma_f32_16x16x16bf16_1k"),
           _mma(16, 8, 32, "f32", "bf16", (2, 4)), peaks_as="fp16",
           ncu_tensor="sm__ops_path_tensor_src_bf16_dst_fp32", tuned_as="fp16", cuda_macros=(("BF16", 1),)),
)}
PRECISIONS = tuple(name for name, f in FORMATS.items() if f.runs)
SPARSITIES = ("dense", "2:4")   # the rows' `sparsity`: dense MMA, or 2:4-structured sparse MMA (mma.sp)


def fmt(name: str) -> Format:
    """The Format of precision `name` that the kernels run, or ValueError naming the valid ones."""
    if name not in PRECISIONS:
        raise ValueError(f"unknown precision '{name}': use one of {', '.join(PRECISIONS)}")
    return FORMATS[name]


def of_dtype(dtype) -> str:
    """The precision whose storage dtype is `dtype`; ValueError where none is."""
    found = [name for name in PRECISIONS if FORMATS[name].dtype == np.dtype(dtype)]
    if not found:
        raise ValueError(f"no precision stores {np.dtype(dtype)} (precisions: {', '.join(PRECISIONS)})")
    return found[0]


def _xp(a):
    """CuPy where `a` is a CuPy array (model/ may not import run.measure's array_module), else numpy."""
    cupy = sys.modules.get("cupy")
    return cupy if cupy is not None and isinstance(a, cupy.ndarray) else np


def largest(precision: str) -> float:
    """The largest finite value of `precision`'s storage format (bf16: 0x7F7F, (2 - 2^-7) 2^127)."""
    f = fmt(precision)
    return float(decode(np.array([0x7F7F], np.uint16), "bf16")[0]) if f.name == "bf16" else float(np.finfo(f.dtype).max)


def quantize(values, precision: str):
    """`values` (float64; numpy, or CuPy: rounded on the device) rounded to the storage format of
    `precision`, as an array of its dtype (bf16: the bit patterns, `encode_bf16`). ValueError where a
    finite value falls outside the format's range (it would become inf)."""
    f = fmt(precision)
    xp = _xp(values)
    values = xp.asarray(values, dtype=xp.float64)
    big = largest(precision)
    if values.size and float(xp.nanmax(xp.abs(values))) > big:
        raise ValueError(f"values up to {float(xp.nanmax(xp.abs(values))):.3g} exceed {precision}'s largest finite "
                         f"value {big:.5g}")
    return encode_bf16(values) if f.name == "bf16" else values.astype(f.dtype)


def encode_bf16(values):
    """float values (numpy or CuPy) as bf16 bit patterns (uint16): rounded once, to nearest with ties to
    even, on the grid of 8-bit significands (spacing 2^(e-7) in [2^e, 2^(e+1)), e >= -126; subnormals
    2^-133); beyond the largest finite value inf; NaN stays NaN (0x7FC0 with its sign)."""
    xp = _xp(values)
    x = xp.asarray(values, dtype=xp.float64)
    _, e = xp.frexp(x)                                             # |x| in [2^(e-1), 2^e)
    step = xp.ldexp(xp.ones_like(x), xp.maximum(e - 1, -126) - 7)
    r = xp.where(xp.isfinite(x), xp.round(x / step) * step, x)     # exact: a power-of-two scaling; round: ties to even
    with np.errstate(over="ignore"):                               # r is a bf16 value, or beyond: inf
        bits = (r.astype(xp.float32).view(xp.uint32) >> 16).astype(xp.uint16)
    return xp.where(xp.isnan(x), xp.where(xp.signbit(x), 0xFFC0, 0x7FC0).astype(xp.uint16), bits)


def rounded(values, precision: str):
    """`values` rounded to `precision` (quantize) and read back (decode), as float64 (numpy or CuPy)."""
    return decode(quantize(values, precision), precision).astype(np.float64)


def store(values, precision: str):
    """Float values (numpy or CuPy) rounded to `precision`'s storage, as its kernels round a result (to
    nearest; beyond the range inf, no error: `quantize` checks inputs)."""
    return encode_bf16(values) if fmt(precision).name == "bf16" else values.astype(fmt(precision).dtype, copy=False)


def compute_dtype(precision: str) -> np.dtype:
    """The numpy dtype that holds `precision`'s values for arithmetic (`decode`'s): storage's, bf16 float32."""
    return np.dtype(np.float32) if fmt(precision).name == "bf16" else fmt(precision).dtype


def nan(precision: str):
    """NaN in `precision`'s storage dtype (bf16: the pattern 0x7FC0), to poison outputs with."""
    return np.uint16(0x7FC0) if fmt(precision).name == "bf16" else fmt(precision).dtype.type(np.nan)


def decode(values, precision: str):
    """The numbers an array of `precision` holds, in a float dtype numpy (or CuPy) computes in: bf16's
    bit patterns (uint16) as float32 (exact); anything else (another format's storage, values already
    decoded) as it is."""
    xp = _xp(values)
    values = xp.asarray(values)
    if fmt(precision).name != "bf16" or values.dtype != np.uint16:
        return values
    return (values.astype(xp.uint32) << 16).view(xp.float32)


def gamma(n: int, u: float) -> float:
    """gamma_n = n u / (1 - n u), the bound of n roundings (Higham, Lemma 3.1); inf when n u >= 1."""
    nu = n * u
    return nu / (1 - nu) if nu < 1 else float("inf")


def dot_tolerance(precision: str, unit: str, terms: int, ref, abs_ref) -> float:
    """The relative 2-norm error bound of outputs that each sum at most `terms` products (module
    docstring), for `unit` cuda_core or tensor_core in `precision`; `ref` is the float64 result
    A x and `abs_ref` the float64 |A| |x| of the same (rounded) inputs (numpy, or CuPy: their norms are
    taken on the device)."""
    f = fmt(precision)
    tc = unit == "tensor_core"
    u_op, u_acc = (f.tc_operand_u, f.tc_acc_u) if tc else (0.0, f.acc_u)
    e = (1 + u_op) ** 2 * (1 + gamma(max(terms, 1), u_acc)) - 1
    _, r = _norm_and_ratio(ref, abs_ref)
    return float(e * (1 + f.u) * r + f.u + gamma(max(terms, 1), U64) * r)


def _norm_and_ratio(ref, abs_ref) -> tuple[float, float]:
    """||ref|| and R = |||A||x||| / ||A x|| (1 where ref is 0), in float64: for CuPy arrays on their
    device (no copy), else with numpy (model/ may not import run.measure's array_module)."""
    def norm(a):
        xp = _xp(a)
        return float(xp.linalg.norm(xp.asarray(a, dtype=xp.float64).ravel()))

    n = norm(ref)
    return n, (norm(abs_ref) / n if n > 0 else 1.0)


def tc_operand(values, precision: str) -> np.ndarray:
    """Storage values of `precision` as its tensor-core operand type sees them: fp32 rounded to tf32 as
    the kernels' cvt.rna.tf32.f32 does (to nearest, ties away from zero, 10 stored mantissa bits, kept
    in float32; inf and NaN kept); fp64 and fp16 unchanged, bf16 decoded to float32 (f64, f16 and bf16
    operands are the storage values)."""
    if fmt(precision).name == "bf16":
        return decode(values, precision)
    values = np.asarray(values, dtype=fmt(precision).dtype)
    if fmt(precision).tc_type != "tf32":
        return values
    bits = values.view(np.uint32)
    return np.where(np.isfinite(values), ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32), values)


def stencil_tolerance(precision: str, unit: str, points: int, steps: int, ref, abs_ref, *, fused: int = 0,
                      depth: int = 1, weight_sum: float = 1.0, x_max: float = 1.0) -> float:
    """The relative 2-norm error bound of `steps` time steps of a `points`-point stencil on N outputs
    (docs/precision.md, "Stencils"); `ref` is the float64 result of the steps from the rounded input
    and weights, `abs_ref` the same with |w| and |x| (their ratio of norms is R), `weight_sum` sum |w|
    and `x_max` max |x|.

    Step by step (fused = 0: cc_naive, cc_tb), each step sums `points` products in the CUDA-core
    accumulator and rounds to storage, e1 = (1 + u_st)(1 + gamma_K(u_acc)) - 1 per step, so that
    |y_hat - y| <= ((1 + e1)^T - 1) |W|^T |x| after T steps (induction: |y_hat_s| <= (1 + e1)^s |W|^s |x|).
    Fused (fused = K^(t) points, tc and tc_twin: T/t launches of the fused stencil): per launch the
    operands are rounded (A: the input to the tensor-core type; B: the fused weights, computed in
    float64, rounded to storage and then to the tensor-core type), K^(t) products are summed in
    `unit`'s accumulator (tensor_core: the tensor cores'; cuda_core, the twin: the CUDA cores') and
    the result is rounded to storage: e_L = (1 + u_A)(1 + u_B)(1 + gamma_K(t)(u_acc))(1 + u_st) - 1,
    and |fuse(w)| <= fuse(|w|) gives the same |W|^T |x|. Underflow adds at most eta per rounding of a
    weight (times the K^(t) inputs it multiplies) or an output, carried through the later steps by
    at most max(1, sum |w|) each. The float64 reference's own error ((1 + gamma_K(2^-53))^T - 1) R is added."""
    f = fmt(precision)
    norm, r = _norm_and_ratio(ref, abs_ref)
    grow = max(1.0, weight_sum) ** steps
    if fused:
        launches = steps // depth
        u_acc = f.tc_acc_u if unit == "tensor_core" else f.acc_u
        u_a = f.tc_operand_u
        u_b = (1 + gamma(depth * points, U64)) * (1 + f.u) * (1 + f.tc_operand_u) - 1
        e = (1 + u_a) * (1 + u_b) * (1 + gamma(fused, u_acc)) * (1 + f.u) - 1
        total = (1 + e) ** launches - 1
        absolute = launches * f.eta * (fused * x_max + 1) * (grow * (1 + e) ** launches) ** 2
    else:
        e = (1 + f.u) * (1 + gamma(points, f.acc_u)) - 1
        total = (1 + e) ** steps - 1
        absolute = steps * f.eta * grow * (1 + e) ** steps
    reference_error = (1 + gamma(points, U64)) ** steps - 1
    scale = np.sqrt(np.size(ref)) / norm if norm > 0 else 0.0
    return float(total * r + absolute * scale + reference_error * r)
