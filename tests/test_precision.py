"""The precision axis: formats, rounding of inputs, and the a-priori error bounds of the checks."""

import re

import numpy as np
import pytest

from membound import families
from membound.kernels import harness, source_text
from membound.model import precision
from membound.run import config


def test_formats_name_their_sizes_and_roundoffs():
    f = precision.FORMATS
    assert [f[p].bytes for p in ("fp64", "fp32", "fp16")] == [8, 4, 2]
    assert f["fp32"].tc_type == "tf32" and f["fp32"].tc_operand_u == 2.0**-11   # 10 stored mantissa bits
    assert f["fp16"].u == 2.0**-11 and f["fp16"].acc_u == 2.0**-24              # fp16 sums accumulate in fp32
    with pytest.raises(ValueError, match="fp64, fp32, fp16, bf16"):
        precision.fmt("fp8")
    assert f["bf16"].bytes == 2 and f["bf16"].u == 2.0**-8 and f["bf16"].acc_u == 2.0**-24   # 8-bit significand


def ieee_bf16(bits: int) -> float:
    """The value of bf16 bit pattern `bits` by the IEEE 754 binary definition (1 sign, 8 exponent bits of
    bias 127, 7 fraction bits; exponent 0: subnormal, 255: inf or NaN)."""
    sign, exponent, fraction = -1.0 if bits >> 15 else 1.0, bits >> 7 & 0xFF, bits & 0x7F
    if exponent == 0xFF:
        return float("nan") if fraction else sign * float("inf")
    if exponent == 0:
        return sign * (fraction / 2**7 * 2.0**-126)
    return sign * ((1 + fraction / 2**7) * 2.0 ** (exponent - 127))


def test_bf16_decodes_every_bit_pattern_as_ieee_defines_it():
    bits = np.arange(2**16, dtype=np.uint16)
    expected = np.array([ieee_bf16(int(b)) for b in bits])
    got = precision.decode(bits, "bf16")
    assert got.dtype == np.float32
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.array_equal(np.signbit(got), bits >= 0x8000)


def test_bf16_encodes_to_nearest_with_ties_to_even():
    finite = np.array([b for b in range(2**16) if (b >> 7 & 0xFF) != 0xFF], dtype=np.uint16)
    values = np.array([ieee_bf16(int(b)) for b in finite])
    assert np.array_equal(precision.quantize(values, "bf16"), finite)              # every finite value kept
    ordered = values[finite < 0x8000]                                            # +0 ... largest: patterns ascend
    mid = (ordered[:-1] + ordered[1:]) / 2                                       # exact in float64
    low, high = finite[:len(mid)], finite[1:len(mid) + 1]
    even = np.where(low % 2 == 0, low, high)
    assert np.array_equal(precision.quantize(mid, "bf16"), even)                  # a tie: to the even pattern
    above = np.nextafter(mid, np.inf)                                            # just above: up, also where a
    assert np.array_equal(precision.quantize(above, "bf16"), high)               # float32 cast would tie (no double rounding)
    assert np.array_equal(precision.quantize(-mid, "bf16"), even | 0x8000)
    assert precision.quantize([1 + 2**-9], "bf16")[0] == 0x3F80                    # 1 + u/2: below the tie, to 1
    assert precision.encode_bf16(np.array([np.inf, -np.inf, np.nan, 2.0**128]))[:2].tolist() == [0x7F80, 0xFF80]
    assert precision.encode_bf16(np.array([np.nan]))[0] == 0x7FC0
    assert precision.encode_bf16(np.array([2.0**128]))[0] == 0x7F80               # beyond the range: inf
    with pytest.raises(ValueError, match="exceed bf16's largest finite value 3.3895e"):
        precision.quantize([3.4e38], "bf16")
    assert precision.largest("bf16") == (2 - 2**-7) * 2.0**127


def test_quantize_rounds_and_refuses_values_beyond_the_range():
    assert precision.quantize([1 + 2**-12], "fp16")[0] == 1.0
    assert precision.quantize([1 + 2**-12], "fp32").dtype == np.float32
    with pytest.raises(ValueError, match="exceed fp16"):
        precision.quantize([7e4], "fp16")


def test_gamma_is_higham_lemma_3_1():
    assert precision.gamma(10, 2.0**-24) == pytest.approx(10 * 2.0**-24 / (1 - 10 * 2.0**-24))
    assert precision.gamma(2**24, 2.0**-24) == float("inf")


def test_the_bound_of_one_product_in_tf32_is_two_operand_roundings():
    ref = np.array([3.0, -4.0])
    tol = precision.dot_tolerance("fp32", "tensor_core", 1, ref, np.abs(ref))
    e = (1 + 2.0**-11) ** 2 * (1 + precision.gamma(1, 2.0**-23)) - 1
    assert tol == pytest.approx(e * (1 + 2.0**-24) + 2.0**-24 + precision.gamma(1, 2.0**-53))


@pytest.mark.gpu
def test_gpu_dot_tolerance_takes_device_arrays():
    import cupy as cp

    rng = np.random.default_rng(2)
    ref, abs_ref = rng.uniform(-1, 1, 10**6), rng.uniform(1, 2, 10**6)
    host = precision.dot_tolerance("fp16", "tensor_core", 300, ref, abs_ref)
    assert precision.dot_tolerance("fp16", "tensor_core", 300, cp.asarray(ref), cp.asarray(abs_ref)) == \
        pytest.approx(host, rel=1e-12)


@pytest.mark.parametrize("p", ["fp32", "fp16"])
def test_float32_sums_stay_inside_the_bound_and_a_wrong_sum_does_not(p):
    rng = np.random.default_rng(1)
    a = precision.quantize(rng.uniform(-1, 1, (64, 4096)), p).astype(np.float64)
    x = precision.quantize(rng.uniform(-1, 1, 4096), p).astype(np.float64)
    ref, abs_ref = a @ x, np.abs(a) @ np.abs(x)
    got = (a.astype(np.float32) @ x.astype(np.float32)).astype(precision.fmt(p).dtype)
    tol = precision.dot_tolerance(p, "cuda_core", 4096, ref, abs_ref)
    err = np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref)
    assert err <= tol
    wrong = got.astype(np.float64) + 4 * tol * np.linalg.norm(ref) / np.sqrt(len(ref))
    assert np.linalg.norm(wrong - ref) / np.linalg.norm(ref) > tol


def test_select_pairs_impls_with_the_precisions_they_have(capsys):
    impls = (harness.Impl("f", "a", "cuda_core", "R", "cpu", precisions=("fp64", "fp32")),
             harness.Impl("f", "b", "tensor_core", "R", "cpu", precisions=("fp64",)))
    assert harness.Impl("f", "d", "cuda_core", "R").precisions == precision.PRECISIONS   # the default: all
    chosen = harness.select(impls, "cpu", ["fp64", "fp32"])
    assert [(i.name, p) for i, p in chosen] == [("a", "fp64"), ("b", "fp64"), ("a", "fp32")]
    assert "fp32: not implemented by b" in capsys.readouterr().err
    with pytest.raises(ValueError, match="precisions"):
        harness.Impl("f", "c", "cuda_core", "R", precisions=("fp8",))


def test_the_cuda_sources_issue_the_records_instructions():
    """Each family's tensor-core source issues exactly the run precisions' mma.sync of the record (the
    stencils' sparse header their mma.sp): the record and the CUDA sources hold the same shapes."""
    dense = {precision.FORMATS[p].mma.instruction for p in precision.PRECISIONS}
    sparse = {precision.FORMATS[p].mma_sp.instruction for p in precision.PRECISIONS if precision.FORMATS[p].mma_sp}
    issued = re.compile(r"mma[.a-z:_]*\.sync\.aligned\.[a-z0-9.]*[a-z0-9]")
    for source, expected in (("scale.cu", dense), ("gemv_tc.cu", dense), ("spmv_mma.cuh", dense),
                             ("stencil_mma.cuh", dense), ("stencil_sp.cuh", sparse)):
        assert set(issued.findall(source_text(source))) == expected, source     # with its headers (half16.cuh)


def test_the_configs_precisions_are_the_records_names():
    """The config schema types no precision: the rules add the records' names as its enum."""
    assert "enum" not in config.schema_of("config")["properties"]["precisions"]["items"]
    blocks = families.config_blocks()
    assert config.schema_of("config", blocks)["properties"]["precisions"]["items"]["enum"] == list(precision.PRECISIONS)
    with pytest.raises(config.ConfigError, match="'fp8' is not one of"):
        config.check({"precisions": ["fp8"]}, "config", "--config", partial=True, blocks=blocks)


def test_a_record_gives_every_trait_and_every_record_runs():
    for name, f in precision.FORMATS.items():
        assert f.mma.type == f.tc_type and f.mma.shape[1] == 8 and f.mma.instruction.split(".")[-1] in ("f64", "f32")
        assert np.dtype(f.tc_acc).itemsize == {"f64": 8, "f32": 4}[f.mma.instruction.split(".")[-1]]
        assert f.mma_sp is None or (f.mma_sp.shape[2] == 2 * f.mma.shape[2] and f.mma_sp.type == f.mma.type)   # k doubled
    assert precision.PRECISIONS == ("fp64", "fp32", "fp16", "bf16")
    with pytest.raises(ValueError, match="unknown precision 'fp8': use one of fp64, fp32, fp16, bf16"):
        precision.fmt("fp8")
    assert precision.of_dtype(np.float16) == "fp16" and precision.of_dtype(np.uint16) == "bf16"
    with pytest.raises(ValueError, match="no precision stores int32"):
        precision.of_dtype(np.int32)
