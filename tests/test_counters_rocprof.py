"""rocprof v1 and rocprofv3 parsing on fixtures written in the tools' documented formats (no AMD GPU here)."""

from pathlib import Path

import pytest

from membound.counters import rocprof
from membound.counters.ncu import CounterError

FIX = Path(__file__).parent / "fixtures" / "rocprof"
N = 2**20


def test_pmc_input_per_arch():
    assert "TCC_EA_RDREQ_32B_sum" in rocprof.pmc_text("gfx90a")
    assert "TCC_EA0_WRREQ_64B_sum" in rocprof.pmc_text("gfx942")
    lines = rocprof.pmc_text("gfx90a").splitlines()
    assert all(line.startswith("pmc: ") and len(line.split()) == 5 for line in lines)   # four counters a pass
    for counter in ("SQ_INSTS_VALU_MFMA_MOPS_F64", "SQ_INSTS_VALU_MFMA_MOPS_F16", "SQ_INSTS_VALU_FMA_F32",
                    "SQ_INSTS_VALU_TRANS_F16"):
        assert counter in rocprof.pmc_text("gfx90a")


def _per(files):
    per = rocprof.achieved(rocprof.read_dispatches([FIX / f for f in files]))
    return per.assign(kernel=per["kernel_name"].str.split("(").str[0]).set_index("kernel")


@pytest.mark.parametrize("files", [["v1_results.csv"], ["v3_pass_1.csv", "v3_pass_2.csv"]])
def test_scale_flops_bytes_time(files):
    scale = _per(files).loc["scale_cuda_core"]
    assert scale["kernel_name"] == "scale_cuda_core(double*, double const*, double, long)"
    assert scale["flops"] == N and scale["flops_tensor"] == 0 and scale["flops_valu_fp64"] == N
    assert scale["dram_read"] == 8 * N and scale["dram_write"] == 8 * N
    assert scale["time_s"] == pytest.approx(7e-6)


@pytest.mark.parametrize("files", [["v1_results.csv"], ["v3_pass_1.csv", "v3_pass_2.csv"]])
def test_each_precision_counts_its_own_counters(files):
    per = _per(files)
    fp32 = per.loc["scale_cuda_core<float>"]                       # 16384 v_mul_f32 wave instructions
    assert fp32["flops_valu_fp32"] == N == fp32["flops"] and fp32["flops_valu_fp64"] == 0
    assert fp32["dram_read"] == 4 * N and fp32["dram_write"] == 4 * N
    fp16 = per.loc["scale_tensor_core<__half>"]                    # 16x16x16 MFMA: 32 FLOPs per element
    assert fp16["flops_tensor"] == 32 * N and fp16["flops_cuda_core"] == 0
    assert fp16["dram_bytes"] == 4 * N and fp16["time_s"] == pytest.approx(2e-6)


def test_flop_formula_weights():
    d = rocprof.read_dispatches(FIX / "v1_results.csv")
    for s in ("F64", "F32", "F16"):
        d.loc[0, [f"SQ_INSTS_VALU_{op}_{s}" for op in ("ADD", "MUL", "FMA", "TRANS")]] = [1, 0, 1, 1]
    d.loc[0, [f"SQ_INSTS_VALU_MFMA_MOPS_{s}" for s in ("F64", "F32", "F16", "BF16")]] = 1
    got = rocprof.achieved(d).loc[0]
    assert got["flops_valu_fp16"] == got["flops_valu_fp32"] == got["flops_valu_fp64"] == 64 + 128 + 64
    assert got["flops_tensor"] == 4 * 512 and got["flops"] == 3 * 256 + 4 * 512


def test_helper_kernel_kept_apart():
    rows = rocprof.summarize(rocprof.read_dispatches(FIX / "v1_results.csv"))
    assert list(rows["kernel_name"]) == ["scale_cuda_core(double*, double const*, double, long)", "fill_kernel",
                                         "scale_cuda_core<float>(float*, float const*, float, long)",
                                         "scale_tensor_core<__half>(__half*, __half const*, __half, long)"]
    assert list(rows["flops"]) == [N, 0, N, 32 * N]


@pytest.mark.parametrize("counter", ["SQ_INSTS_VALU_FMA_F64", "SQ_INSTS_VALU_MUL_F16", "SQ_INSTS_VALU_MFMA_MOPS_BF16"])
def test_missing_counters_named(tmp_path, counter):
    bad = tmp_path / "r.csv"
    bad.write_text((FIX / "v1_results.csv").read_text().replace(counter, "OTHER"))
    with pytest.raises(CounterError, match=counter):
        rocprof.achieved(rocprof.read_dispatches(bad))
