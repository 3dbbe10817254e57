"""The per-precision spec fields (peak_TFLOPs) and their accessor, membound.model.peaks (with the MMA of the
precision's record), on every device spec and on hand-computed datasheet values."""

import copy
import math

import pytest

from membound.model import peaks, precision
from membound.run import config


@pytest.mark.parametrize("name", config.profiles())
def test_every_spec_fits_the_schema_and_gives_each_run_precision(name):
    spec = config.load_gpu(name)
    config.check(spec, "gpu", name)
    assert peaks.listed(spec)[:3] == ["fp64", "fp32", "fp16"]
    for p in peaks.listed(spec):
        got = peaks.at(spec, p)
        assert got.mma_shape and len(got.mma_shape) == 3 and got.mma_type
        assert got.cuda_core is None or got.cuda_core > 0


def test_bf16_is_listed_only_where_it_differs_from_fp16():
    for name in config.profiles():
        spec = config.load_gpu(name)
        if "bf16" in spec["peak_TFLOPs"]:
            assert spec["peak_TFLOPs"]["bf16"] != spec["peak_TFLOPs"]["fp16"]


def test_bf16_reads_fp16s_peaks_where_its_own_are_not_listed():
    h200, a100 = config.load_gpu("h200"), config.load_gpu("a100")
    bf16, fp16 = peaks.at(h200, "bf16"), peaks.at(h200, "fp16")
    assert (bf16.cuda_core, bf16.tensor_core, bf16.sparse_tensor_core) == (133.8, 989.5, 1979.0)
    assert bf16.alpha == fp16.alpha and bf16.element_bytes == 2
    assert (bf16.mma_type, bf16.mma_shape, bf16.sparse_mma_shape) == ("bf16", (16, 8, 16), (16, 8, 32))
    assert (peaks.at(a100, "bf16").cuda_core, peaks.at(a100, "bf16").alpha) == (39.0, 312.0 / 39.0)   # its own
    assert "bf16" not in peaks.listed(h200)                                        # Table 1: no row of its own


def test_h100_datasheet_peaks_and_alphas():
    h100 = config.load_gpu("h100")
    fp64, fp32, fp16 = (peaks.at(h100, p) for p in ("fp64", "fp32", "fp16"))
    assert (fp64.cuda_core, fp64.tensor_core, fp64.mma_shape, fp64.mma_type) == (34.0, 67.0, (8, 8, 4), "f64")
    assert (fp32.cuda_core, fp32.tensor_core, fp32.mma_shape, fp32.mma_type) == (67.0, 494.5, (16, 8, 8), "tf32")
    assert (fp16.cuda_core, fp16.tensor_core, fp16.mma_shape, fp16.mma_type) == (133.8, 989.5, (16, 8, 16), "f16")
    assert fp32.alpha == pytest.approx(7.38060, abs=1e-5) and fp16.alpha == pytest.approx(7.39537, abs=1e-5)
    assert [p.element_bytes for p in (fp64, fp32, fp16)] == [8, 4, 2]
    assert fp32.balance("cuda_core") == pytest.approx(20.0) and fp32.balance("tensor_core") == pytest.approx(147.612, abs=1e-3)
    assert all(p.note == "" and p.has_tensor_cores for p in (fp64, fp32, fp16))


def test_sparse_only_datasheet_figures_are_halved_and_say_so():
    for name in ("h100", "h200", "gh200"):
        src = config.load_gpu(name)["sources"]["peak_TFLOPs"]
        assert "halved" in src["fp32"]["tensor_core"] and "sparsity" in src["fp32"]["tensor_core"]
        assert "halved" in src["fp16"]["tensor_core"]


def test_a_device_without_tensor_cores_says_so():
    for p in ("fp64", "fp32", "fp16"):
        got = peaks.at(config.load_gpu("cpu"), p)
        assert not got.has_tensor_cores and math.isnan(got.alpha) and math.isnan(got.balance("tensor_core"))
        assert got.note == f"no tensor cores in {p}" and got.peak("cuda_core") > 0
    mi = peaks.at(config.load_gpu("mi250x"), "fp16")
    assert mi.has_tensor_cores and mi.note == "no published CUDA-core peak in fp16" and math.isnan(mi.alpha)
    assert peaks.at(config.load_gpu("mi250x"), "fp32").alpha == 1.0      # packed FP32 vector = FP32 matrix


def test_a_missing_precision_names_the_key_and_the_fix():
    spec = copy.deepcopy(config.load_gpu("h100"))
    del spec["peak_TFLOPs"]["fp16"]
    with pytest.raises(ValueError, match=r"peak_TFLOPs\.fp16.*config/gpus"):
        peaks.at(spec, "fp16")
    with pytest.raises(ValueError, match="fp8"):
        peaks.at(spec, "fp8")
    spec["peak_TFLOPs"]["fp8"] = spec["peak_TFLOPs"]["fp32"]
    config.check(spec, "gpu", "h100")                      # the schema types no precision: the records do
    with pytest.raises(ValueError, match=r"peak_TFLOPs\.fp8, a precision without a record: use one of fp64, "):
        peaks.listed(spec)


def test_the_schema_rejects_the_old_fields_and_an_mma_of_its_own():
    """A spec holds no MMA shape: the precision's record gives it per vendor (precision.Format)."""
    spec = copy.deepcopy(config.load_gpu("h100"))
    with pytest.raises(config.ConfigError, match="fp64_vector_TFLOPs"):
        config.check({**spec, "fp64_vector_TFLOPs": 34.0}, "gpu", "h100")
    with pytest.raises(config.ConfigError, match="'mma' was unexpected"):
        config.check({**spec, "mma": {"fp32": {"shape": [16, 8, 8], "type": "tf32"}}}, "gpu", "h100")


def test_the_mma_of_a_spec_is_its_vendors_in_the_precisions_record():
    for name in config.profiles():
        spec = config.load_gpu(name)
        for p in peaks.listed(spec):
            mma = precision.FORMATS[p].matrix(spec["vendor"])
            assert (peaks.at(spec, p).mma_shape, peaks.at(spec, p).mma_type) == (mma.shape, mma.type)
    amd, nvidia = (peaks.at(config.load_gpu(name), "fp32") for name in ("mi250x", "h100"))
    assert (amd.mma_type, nvidia.mma_type) == ("f32", "tf32") and amd.mma_shape != nvidia.mma_shape


def test_a_rows_precision():
    assert peaks.row_precision({"precision": "fp16"}) == "fp16"
    assert peaks.row_precision({}) == peaks.row_precision({"precision": float("nan")}) == "fp64"
