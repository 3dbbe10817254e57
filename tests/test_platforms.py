"""Table 1 and the bounds table come from the spec files and the model, never typed in."""

import pytest

from membound import families
from membound.model import platforms
from membound.run import config


def test_table1_takes_the_papers_values_for_a100_and_gh200():
    gpus = {name: config.load_gpu(name) for name in config.profiles()}
    t = platforms.table1(gpus, "a100").set_index(["profile", "precision"])
    cols = ["memory_bandwidth_TBs", "cuda_core_TFLOPs", "tensor_core_TFLOPs", "l2_MB"]
    assert t.loc[("a100", "fp64"), cols].tolist() == [1.94, 9.7, 19.5, 40]
    assert t.loc[("gh200", "fp64"), cols].tolist() == [4.0, 34.0, 67.0, 50]
    assert t.loc[("a100", "fp64"), "tc_scale_ceiling_TFLOPs"] == pytest.approx(2.4375)
    assert t.loc[("a100", "fp64"), "this_profile"] and not t.loc[("h100", "fp64"), "this_profile"]
    assert t.loc[("a100", "fp64"), "paper_cuda_version"] == "12.1" and t.loc[("gh200", "fp64"), "paper_cuda_version"] == "12.6"
    assert t.loc[("a100", "fp64"), "device"] == "NVIDIA A100 80GB PCIe" and "PCIe" in t.loc[("a100", "fp64"), "notes"]
    assert t.loc[("h100", "fp64"), "paper_cuda_version"] == ""


def test_table1_has_a_row_per_precision_with_its_peaks_and_ceiling():
    gpus = {name: config.load_gpu(name) for name in ("a100", "h100", "cpu", "mi250x")}
    t = platforms.table1(gpus, "h100").set_index(["profile", "precision"])
    h = t.loc["h100"]
    assert list(h.index) == ["fp64", "fp32", "fp16"]                 # bf16 as fp16 on the H100: no row
    assert h.loc["fp32", ["cuda_core_TFLOPs", "tensor_core_TFLOPs", "mma_type", "mma_shape"]].tolist() == \
        [67.0, 494.5, "tf32", "m16n8k8"]
    assert h.loc["fp32", "tc_scale_ceiling_TFLOPs"] == pytest.approx(494.5 / 8)      # m16n8k8: 1/8
    assert h.loc["fp16", "tc_scale_ceiling_TFLOPs"] == pytest.approx(989.5 / 16)     # m16n8k16: 1/16
    assert h.loc["fp32", "balance_tensor_core"] == pytest.approx(494.5 / 3.35)
    assert h.loc["fp16", "element_bytes"] == 2 and h.loc["fp16", "alpha"] == pytest.approx(989.5 / 133.8)
    assert t.loc[("a100", "bf16"), "cuda_core_TFLOPs"] == 39.0                       # differs from fp16's 78
    cpu = t.loc["cpu"]
    assert (cpu["notes"] == [f"no tensor cores in {p}" for p in ("fp64", "fp32", "fp16")]).all()
    assert cpu["tensor_core_TFLOPs"].isna().all() and cpu["tc_scale_ceiling_TFLOPs"].isna().all()
    assert t.loc[("mi250x", "fp16"), "notes"] == "no published CUDA-core peak in fp16"


def test_every_spec_names_a_source_for_every_number():
    for name in config.profiles():
        spec = config.load_gpu(name)
        src = spec["sources"]
        assert set(src) >= {"memory_bandwidth_TBs", "peak_TFLOPs", "l2_MB", "memory_GB"}
        assert set(src["peak_TFLOPs"]) == set(spec["peak_TFLOPs"])


def test_bounds_on_a100_gemv_and_alpha():
    cfg = {"stencil": {"kernels": {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3}}},
           "precisions": ["fp64"]}
    b = platforms.bounds(cfg, config.load_gpu("a100")).set_index("kernel")
    assert b.loc["GEMV", "eq24_bound"] == pytest.approx(1.05, abs=1e-3)
    assert b.loc["SCALE", "eq23_bound"] == pytest.approx(2 - 2 / (1 + 19.5 / 9.7))
    assert b.loc["2d5pt t=3", "I_flop_per_byte"] == pytest.approx(15 / 8)
    assert (b["eq22_bound"] <= b["eq23_bound"] + 1e-12).all()


def test_bounds_per_precision_on_h100_datasheet_values():
    """Eq. 23 per precision from the H100 SXM datasheet (dense TF32 and FP16 tensor peaks are its
    sparse figures halved), by hand: fp64 alpha = 67/34, 2 - 2/(1 + 1.97059) = 1.32673; tf32 alpha
    = 494.5/67 = 7.38060, 2 - 2/8.38060 = 1.76135; fp16 alpha = 989.5/133.8 = 7.39537, 1.76177."""
    cfg = {"stencil": {"kernels": {}}, "precisions": ["fp64", "fp32", "fp16"]}
    b = platforms.bounds(cfg, config.load_gpu("h100")).set_index(["kernel", "precision"])
    assert b.loc[("SCALE", "fp64"), "eq23_bound"] == pytest.approx(1.32673, abs=1e-5)
    assert b.loc[("SCALE", "fp32"), "eq23_bound"] == pytest.approx(1.76135, abs=1e-5)
    assert b.loc[("SCALE", "fp16"), "eq23_bound"] == pytest.approx(1.76177, abs=1e-5)
    assert b.loc[("SCALE", "fp32"), "I_flop_per_byte"] == 1 / 8 and b.loc[("SCALE", "fp16"), "I_flop_per_byte"] == 1 / 4
    assert b.loc[("GEMV", "fp16"), "I_flop_per_byte"] == pytest.approx(1.0, rel=1e-4)        # 2/D
    assert b.loc[("SCALE", "fp32"), "balance"] == pytest.approx(67 / 3.35)
    assert (b["note"] == "").all()


def test_bounds_say_no_tensor_cores_instead_of_a_number():
    cfg = {"stencil": {"kernels": {}}, "precisions": ["fp64", "fp16"]}
    b = platforms.bounds(cfg, config.load_gpu("cpu")).set_index(["kernel", "precision"])
    assert b.loc[("SCALE", "fp16"), "note"] == "no tensor cores in fp16"
    assert b[["eq22_bound", "eq23_bound"]].isna().all().all() and b["eq24_bound"].notna().all()


def test_analytical_scale_and_spmv_rows():
    gpu = config.load_gpu("h100")
    a = families.analytical_row({"kernel": "scale", "unit": "cuda_core", "n": 1024}, gpu)
    assert (a["W"], a["Q"], a["I"]) == (1024, 16384, 1 / 16)
    t = families.analytical_row({"kernel": "scale", "unit": "tensor_core", "n": 1024}, gpu)
    assert t["W_exec_per_item"] == 16          # 1/8 of an m8n8k4 MMA: 8 MACs per element
    s = families.analytical_row({"kernel": "spmv", "unit": "cuda_core", "rows": 10, "cols": 10, "nnz": 40}, gpu)
    assert s["W"] == 80 and s["Q"] == (40 + 20) * 8 + 51 * 4
    tc = families.analytical_row({"kernel": "spmv", "unit": "tensor_core", "rows": 10, "cols": 10, "nnz": 40,
                                "mma": 3}, gpu)
    assert tc["W"] == 80 and tc["W_exec"] == 3 * 512  # the plan's MMAs, 2 m n k each


def test_analytical_rows_take_their_precision():
    gpu = config.load_gpu("h100")
    row = {"kernel": "scale", "n": 1024}
    assert families.analytical_row({**row, "unit": "cuda_core", "precision": "fp32"}, gpu)["Q"] == 8 * 1024
    assert families.analytical_row({**row, "unit": "cuda_core", "precision": float("nan")}, gpu)["Q"] == 16 * 1024
    assert families.analytical_row({**row, "unit": "tensor_core", "precision": "fp32"}, gpu)["W_exec_per_item"] == 16
    assert families.analytical_row({**row, "unit": "tensor_core", "precision": "fp16"}, gpu)["W_exec_per_item"] == 32
    s = families.analytical_row({"kernel": "spmv", "unit": "tensor_core", "rows": 10, "cols": 10, "nnz": 40, "mma": 3,
                               "precision": "fp16"}, gpu)
    assert s["Q"] == (40 + 20) * 2 + 51 * 4 and s["W_exec"] == 3 * 2 * 16 * 8 * 16
    g = families.analytical_row({"kernel": "gemv", "unit": "tensor_core", "rows": 4, "cols": 4, "precision": "fp16"}, gpu)
    assert g["Q"] == (16 + 8) * 2 and g["W_exec"] == 32 * 8


def test_analytical_cuda_core_stencil_counts_launches():
    kernels = {"2d9pt": {"shape": "box", "dims": 2, "radius": 1, "depth": 3}}
    row = {"kernel": "stencil", "unit": "cuda_core", "problem": "2d9pt", "n": 100, "depth": 3, "steps": 12}
    a = families.analytical_row(row, config.load_gpu("h100"), kernels)
    assert a["W_per_item"] == 18 and a["Q_per_item"] == pytest.approx(16 / 3)
    assert a["I"] == pytest.approx(3.375)      # paper 002 Table 2 row 1


def test_unknown_kernel_is_an_error():
    with pytest.raises(ValueError, match="unknown kernel"):
        families.analytical_row({"kernel": "fft"}, config.load_gpu("h100"))
