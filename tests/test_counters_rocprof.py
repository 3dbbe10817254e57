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
    assert all(line.startswith("pmc: ") for line in rocprof.pmc_text("gfx90a").splitlines())
    assert "SQ_INSTS_VALU_MFMA_MOPS_F64" in rocprof.pmc_text("gfx90a")


@pytest.mark.parametrize("files", [["v1_results.csv"], ["v3_pass_1.csv", "v3_pass_2.csv"]])
def test_scale_flops_bytes_time(files):
    per = rocprof.achieved(rocprof.read_dispatches([FIX / f for f in files]))
    scale = per[per["kernel_name"].str.startswith("scale_cuda_core")].iloc[0]
    assert scale["kernel_name"] == "scale_cuda_core(double*, double const*, double, long)"
    assert scale["flops"] == N and scale["flops_tensor"] == 0
    assert scale["dram_read"] == 8 * N and scale["dram_write"] == 8 * N
    assert scale["time_s"] == pytest.approx(7e-6)


def test_flop_formula_weights():
    d = rocprof.read_dispatches(FIX / "v1_results.csv")
    d.loc[0, ["SQ_INSTS_VALU_ADD_F64", "SQ_INSTS_VALU_FMA_F64", "SQ_INSTS_VALU_TRANS_F64",
              "SQ_INSTS_VALU_MFMA_MOPS_F64", "SQ_INSTS_VALU_MUL_F64"]] = [1, 1, 1, 1, 0]
    assert rocprof.achieved(d).loc[0, "flops"] == 64 + 128 + 64 + 512


def test_helper_kernel_kept_apart():
    rows = rocprof.summarize(rocprof.read_dispatches(FIX / "v1_results.csv"))
    assert list(rows["kernel_name"]) == ["scale_cuda_core(double*, double const*, double, long)", "fill_kernel"]


def test_missing_counters_named(tmp_path):
    bad = tmp_path / "r.csv"
    bad.write_text((FIX / "v1_results.csv").read_text().replace("SQ_INSTS_VALU_FMA_F64", "OTHER"))
    with pytest.raises(CounterError, match="SQ_INSTS_VALU_FMA_F64"):
        rocprof.achieved(rocprof.read_dispatches(bad))
