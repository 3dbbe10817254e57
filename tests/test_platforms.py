"""Table 1 and the bounds table come from the spec files and the model, never typed in."""

import pytest

from membound import families
from membound.model import platforms
from membound.run import config


def test_table1_takes_the_papers_values_for_a100_and_gh200():
    gpus = {name: config.load_gpu(name) for name in config.profiles()}
    t = platforms.table1(gpus, "a100").set_index("profile")
    assert t.loc["a100", ["memory_bandwidth_TBs", "fp64_cuda_core_TFLOPs", "fp64_tensor_core_TFLOPs", "l2_MB"]].tolist() == [1.94, 9.7, 19.5, 40]
    assert t.loc["gh200", ["memory_bandwidth_TBs", "fp64_cuda_core_TFLOPs", "fp64_tensor_core_TFLOPs", "l2_MB"]].tolist() == [4.0, 34.0, 67.0, 50]
    assert t.loc["a100", "tc_scale_ceiling_TFLOPs"] == pytest.approx(2.4375)
    assert t.loc["a100", "this_profile"] and not t.loc["h100", "this_profile"]
    assert t.loc["a100", "paper_cuda_version"] == "12.1" and t.loc["gh200", "paper_cuda_version"] == "12.6"
    assert t.loc["a100", "device"] == "NVIDIA A100 80GB PCIe" and "PCIe" in t.loc["a100", "notes"]
    assert t.loc["h100", "paper_cuda_version"] == ""


def test_h200_l2_is_the_60_mib_the_device_reports():
    assert config.load_gpu("h200")["l2_MB"] * 2**20 == 62_914_560


def test_every_spec_names_a_source_for_every_number():
    for name in config.profiles():
        spec = config.load_gpu(name)
        assert set(spec["sources"]) >= {"memory_bandwidth_TBs", "fp64_vector_TFLOPs", "fp64_matrix_TFLOPs", "l2_MB"}


def test_bounds_on_a100_gemv_and_alpha():
    cfg = {"stencil": {"kernels": {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3}}}}
    b = platforms.bounds(cfg, config.load_gpu("a100")).set_index("kernel")
    assert b.loc["GEMV", "eq24_bound"] == pytest.approx(1.05, abs=1e-3)
    assert b.loc["SCALE", "eq23_bound"] == pytest.approx(2 - 2 / (1 + 19.5 / 9.7))
    assert b.loc["2d5pt t=3", "I_flop_per_byte"] == pytest.approx(15 / 8)
    assert (b["eq22_bound"] <= b["eq23_bound"] + 1e-12).all()


def test_analytical_scale_and_spmv_rows():
    gpu = config.load_gpu("h100")
    a = families.analytical_row({"kernel": "scale", "unit": "cuda_core", "n": 1024}, gpu)
    assert (a["W"], a["Q"], a["I"]) == (1024, 16384, 1 / 16)
    t = families.analytical_row({"kernel": "scale", "unit": "tensor_core", "n": 1024}, gpu)
    assert t["W_exec_per_item"] == 16          # 1/max(m, n) of an m8n8k4 MMA: 8 MACs per element
    s = families.analytical_row({"kernel": "spmv", "unit": "cuda_core", "rows": 10, "cols": 10, "nnz": 40}, gpu)
    assert s["W"] == 80 and s["Q"] == (40 + 20) * 8 + 51 * 4
    tc = families.analytical_row({"kernel": "spmv", "unit": "tensor_core", "rows": 10, "cols": 10, "nnz": 40,
                                "mma": 3}, gpu)
    assert tc["W"] == 80 and tc["W_exec"] == 3 * 512  # the plan's MMAs, 2 m n k each


def test_analytical_cuda_core_stencil_counts_launches():
    kernels = {"2d9pt": {"shape": "box", "dims": 2, "radius": 1, "depth": 3}}
    row = {"kernel": "stencil", "unit": "cuda_core", "problem": "2d9pt", "n": 100, "depth": 3, "steps": 12}
    a = families.analytical_row(row, config.load_gpu("h100"), kernels)
    assert a["W_per_item"] == 18 and a["Q_per_item"] == pytest.approx(16 / 3)
    assert a["I"] == pytest.approx(3.375)      # paper 002 Table 2 row 1


def test_unknown_kernel_is_an_error():
    with pytest.raises(ValueError, match="unknown kernel"):
        families.analytical_row({"kernel": "fft"}, config.load_gpu("h100"))
