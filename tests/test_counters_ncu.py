"""ncu CSV parsing on real H100 output (tests/fixtures/ncu/, captured with ncu 2025.3.1), the DGEMM
check of the FP64 tensor counter, and the profiler's error paths."""

from pathlib import Path

import pandas as pd
import pytest

from membound.counters import dgemm, ncu

FIX = Path(__file__).parent / "fixtures" / "ncu"
N = 2**28


def scale():
    return ncu.summarize(ncu.parse_launches(FIX / "scale_h100_raw.csv")).set_index("impl")


def test_scale_h100_is_16_bytes_and_1_flop_per_element():
    s = scale()
    cc = s.loc["cuda_core"]
    assert cc["tag"] == "membound:scale:cuda_core:n_2_28" and cc["part"] == "main" and cc["launches"] == 1
    assert cc["flops"] == N and cc["dmul"] == N                    # W: one DMUL per element
    assert abs(cc["dram_bytes"] / N - 16) / 16 < 0.05              # Q: 16 B per element within 5%
    assert cc["time_s"] == pytest.approx(1.41616e-3)
    tc = s.loc["tensor_core"]                                      # mma m8n8k4: 32 elements, 512 FLOPs each
    assert tc["dmma_inst"] == N // 32 and tc["flops_tensor"] == 512 * N // 32 and tc["flops_cuda_core"] == 0


def test_dgemm_counter_is_one_flop_per_unit_and_2048_per_dmma():
    counters = ncu.summarize(ncu.parse_launches(FIX / "dgemm_h100_raw.csv"))
    check = dgemm.check_counter(pd.read_csv(FIX / "dgemm_h100_rows.csv"), counters)
    assert check["ok"].all() and len(check) == 2
    assert (check["flops_per_op_unit"] == 1.0).all()
    assert (check["flops_per_dmma"] == 2048).all()                 # cuBLAS sm90 kernels use m16n8k8 DMMA


def test_dgemm_check_fails_on_a_wrong_counter():
    counters = ncu.summarize(ncu.parse_launches(FIX / "dgemm_h100_raw.csv"))
    counters["tensor_fp64_ops"] = counters["tensor_fp64_ops"] / 2     # a counter that counted FMAs
    check = dgemm.check_counter(pd.read_csv(FIX / "dgemm_h100_rows.csv"), counters)
    assert not check["ok"].any()


def test_without_the_ops_counter_dmma_instructions_times_the_mma_shape():
    launches = ncu.parse_launches(FIX / "scale_h100_raw.csv")
    launches["tensor_fp64_ops"] = float("nan")                     # as on a GPU without the counter
    tc = ncu.summarize(launches, mma_shape=(8, 8, 4)).set_index("impl").loc["tensor_core"]
    assert tc["flops_tensor"] == 512 * N // 32 and "DMMA" in tc["tensor_flops_from"]


def test_helper_kernels_are_their_own_rows():
    launches = ncu.parse_launches(FIX / "scale_h100_raw.csv")
    helper = launches.iloc[[0]].assign(id=9, kernel_name="partition_kernel", time_ns=1000.0)
    rows = ncu.summarize(pd.concat([launches, helper]))
    tag = rows[rows["tag"] == "membound:scale:cuda_core:n_2_28"].set_index("kernel_name")
    assert tag.loc["scale_cuda_core", "part"] == "main" and tag.loc["partition_kernel", "part"] == "helper"
    assert tag.loc["scale_cuda_core", "launches"] == 1              # never summed into the main kernel


def test_own_kernels_of_a_tag_are_summed_into_main_and_a_library_call_keeps_its_longest_kernel():
    one = ncu.parse_launches(FIX / "scale_h100_raw.csv").iloc[[0]]
    tc = "membound:spmv:dasp_tc:m"
    lib = "membound:spmv:cusparse_csr:m"
    launches = pd.concat([one.assign(id=1, tag=tc, kernel_name="spmv_tc_rows", time_ns=10.0, dram_read=100.0),
                          one.assign(id=2, tag=tc, kernel_name="spmv_tc_long", time_ns=30.0, dram_read=50.0),
                          one.assign(id=3, tag=lib, kernel_name="cusparse::csrmv_v3_kernel", time_ns=20.0),
                          one.assign(id=4, tag=lib, kernel_name="cusparse::csr_partition_kernel", time_ns=5.0)])
    rows = ncu.summarize(launches).set_index("kernel_name")
    main = rows.loc["spmv_tc_long + spmv_tc_rows"]
    assert main["part"] == "main" and main["launches"] == 2 and main["time_s"] == pytest.approx(40e-9)
    assert main["dram_read"] == 150.0
    assert rows.loc["cusparse::csrmv_v3_kernel", "part"] == "main"
    assert rows.loc["cusparse::csr_partition_kernel", "part"] == "helper"


def test_launch_outside_a_range_is_an_error():
    text = (FIX / "scale_h100_raw.csv").read_text().replace("membound:scale", "other:scale")
    with pytest.raises(ncu.CounterError, match="outside any membound"):
        ncu.parse_launches(text)


def test_missing_ncu_says_how_to_fix(monkeypatch):
    monkeypatch.setattr(ncu.shutil, "which", lambda name: None)
    with pytest.raises(ncu.CounterError, match="counters: false"):
        ncu.profile(["true"], (8, 8, 4))


def test_permission_error_says_how_to_fix(tmp_path):
    fake = tmp_path / "ncu"
    fake.write_text("#!/bin/sh\necho '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission'\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(ncu.CounterError, match="NVreg_RestrictProfilingToAdminUsers"):
        ncu.profile(["true"], (8, 8, 4), ncu=str(fake))


def test_profile_args_record_clock_and_cache_control():
    args = ncu.profile_args(list(ncu.METRICS), "r", "base", "all", 50)
    assert args[args.index("--clock-control") + 1] == "base" and args[args.index("--cache-control") + 1] == "all"
    assert args[args.index("--nvtx-include") + 1] == ncu.NVTX_FILTER and "--launch-count" in args


def test_cli_leaves_no_partial_output_on_error(tmp_path, monkeypatch):
    monkeypatch.setattr(ncu.shutil, "which", lambda name: None)
    out = tmp_path / "c.csv"
    with pytest.raises(SystemExit, match="ncu"):
        ncu.main(["--out", str(out), "--", "python", "-c", "pass"])
    assert not out.exists()
