"""ncu CSV parsing on real H100 output (tests/fixtures/ncu/, captured with ncu 2025.3.1), the DGEMM
check of the FP64 tensor counter, and the profiler's error paths."""

from pathlib import Path

import pandas as pd
import pytest

from membound.counters import dgemm, mma, ncu

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
    assert (check["dmma_shape"] == "m16n8k8").all() and (check["flops_per_dmma_shape"] == 2048).all()


def test_dgemm_check_fails_when_the_dmma_shape_is_wrong():
    counters = ncu.summarize(ncu.parse_launches(FIX / "dgemm_h100_raw.csv"))
    counters["dmma_inst"] = counters["dmma_inst"] * 4                 # as if each DMMA were an m8n8k4
    assert not dgemm.check_counter(pd.read_csv(FIX / "dgemm_h100_rows.csv"), counters)["ok"].any()


def test_dgemm_check_fails_on_a_wrong_counter():
    counters = ncu.summarize(ncu.parse_launches(FIX / "dgemm_h100_raw.csv"))
    counters["tensor_fp64_ops"] = counters["tensor_fp64_ops"] / 2     # a counter that counted FMAs
    check = dgemm.check_counter(pd.read_csv(FIX / "dgemm_h100_rows.csv"), counters)
    assert not check["ok"].any()


def test_dgemm_rows_name_the_gpu_and_time_that_measured_them(tmp_path, monkeypatch):
    """As every benchmark row: a 2-GPU run's check (issue 25) must say which GPU measured it, and when."""
    monkeypatch.setattr(dgemm, "run_shape", lambda m, n, k, rng: {"kernel": "dgemm", "problem": f"{m}x{n}x{k}"})
    info = {"device_uuid": "GPU-5e1c", "device_index": 1, "date": "2026-11-26T11:38:00Z", "commit": "f49c858"}
    monkeypatch.setattr(dgemm.runinfo, "describe", lambda backend: info)
    dgemm.main(["--out", str(tmp_path / "rows.csv"), "--shapes", "8x8x8", "16x8x4"])
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert list(rows["problem"]) == ["8x8x8", "16x8x4"]
    assert (rows[list(info)].astype(str) == pd.Series(info).astype(str)).all().all()


def test_without_the_ops_counter_each_kernels_own_dmma_shape_counts():
    launches = ncu.parse_launches(FIX / "scale_h100_raw.csv")
    launches["tensor_fp64_ops"] = float("nan")                     # as on a GPU without the counter
    tc = ncu.summarize(launches, {"fp64": (16, 8, 16)}).set_index("impl").loc["tensor_core"]
    assert tc["flops_tensor"] == 512 * N // 32                     # scale.cu's m8n8k4, not the fallback
    assert tc["tensor_flops_from"] == "DMMA instructions x 512 (m8n8k4, its source's mma.sync)"
    gemm = ncu.parse_launches(FIX / "dgemm_h100_raw.csv")
    ops = gemm["tensor_fp64_ops"].copy()
    gemm["tensor_fp64_ops"] = float("nan")
    rows = ncu.summarize(gemm, {"fp64": (8, 8, 4)})
    assert rows["flops_tensor"].tolist() == ops.tolist()           # cuBLAS's tensor16x8x8: 2048 per DMMA
    unknown = ncu.summarize(gemm.assign(kernel_name="some_library_kernel"))
    assert unknown["flops_tensor"].isna().all() and "unknown shape" in unknown["tensor_flops_from"].iloc[0]


def test_dmma_shapes():
    assert mma.shape("scale_tensor_core") == ((8, 8, 4), "its source's mma.sync")
    f64 = {s["f64"] for s in mma.own_shapes().values() if "f64" in s}
    assert f64 <= {(8, 8, 4), (16, 8, 4), (16, 8, 8), (16, 8, 16)}    # PTX f64
    assert mma.own_shapes()["stencil_tc"]["f64"] == (8, 8, 4)        # its mma.sync is in a header (stencil_mma.cuh)
    for kernel in ("stencil_tc", "stencil_tc3"):                     # HMMA of the fp32 and fp16 builds (issue 24)
        assert mma.own_shapes()[kernel] == {"f64": (8, 8, 4), "tf32": (16, 8, 8), "f16": (16, 8, 16), "bf16": (16, 8, 16)}
        assert mma.shape(kernel, "tf32") == ((16, 8, 8), "its source's mma.sync")
    assert mma.shape("sm90_xmma_gemm_f64f64_tensor16x8x16_kernel")[0] == (16, 8, 16)
    assert mma.shape("anything", "f64", (8, 8, 4)) == ((8, 8, 4), "the spec's mma shape, assumed")


def test_default_long_csv_with_preamble_reads_as_the_raw_page():
    """ncu's default `--csv` (one row per metric), as captured on the H100 with the program's own
    output and ==PROF== lines before it: the same rows, and the twin's DRAM bytes within 2% of its
    tensor-core sibling's."""
    text = (FIX / "scale_h100_long.csv").read_text()
    assert text.startswith("==PROF==") and '"Metric Name"' in text
    s = ncu.summarize(ncu.parse_launches(FIX / "scale_h100_long.csv")).set_index("impl")
    assert list(s.index) == ["cuda_core", "tensor_core", "tensor_core_twin"] and (s["part"] == "main").all()
    assert s.loc["cuda_core", "flops"] == N == s.loc["tensor_core_twin", "flops"]
    assert s.loc["tensor_core", "flops_tensor"] == 16 * N
    assert abs(s.loc["tensor_core_twin", "dram_bytes"] / s.loc["tensor_core", "dram_bytes"] - 1) < 0.02
    assert abs(s.loc["cuda_core", "dram_bytes"] / N - 16) / 16 < 0.05
    assert s.loc["cuda_core", "time_s"] == pytest.approx(1.41664e-3)


def test_scaled_units_are_converted_and_unknown_ones_name_the_fix():
    text = (FIX / "scale_h100_long.csv").read_text()
    base = ncu.parse_launches(text).set_index("impl")
    scaled = text.replace('"dram__bytes_read.sum","byte","2,147,533,568"', '"dram__bytes_read.sum","Mbyte","2,147.533568"')
    scaled = scaled.replace('"gpu__time_duration.sum","ns","1,416,640"', '"gpu__time_duration.sum","usecond","1,416.64"')
    assert scaled != text
    got = ncu.parse_launches(scaled).set_index("impl")
    assert got.loc["cuda_core", "dram_read"] == pytest.approx(base.loc["cuda_core", "dram_read"])
    assert got.loc["cuda_core", "time_ns"] == pytest.approx(1416640)
    with pytest.raises(ncu.CounterError, match="--page raw --print-units base"):
        ncu.parse_launches(text.replace('"dram__bytes_read.sum","byte"', '"dram__bytes_read.sum","furlong"'))


def test_helper_kernels_are_their_own_rows():
    launches = ncu.parse_launches(FIX / "scale_h100_raw.csv")
    helper = launches.iloc[[0]].assign(id=9, kernel_name="partition_kernel", time_ns=1000.0)
    rows = ncu.summarize(pd.concat([launches, helper]))
    tag = rows[rows["tag"] == "membound:scale:cuda_core:n_2_28"].set_index("kernel_name")
    assert tag.loc["scale_cuda_core", "part"] == "main" and tag.loc["partition_kernel", "part"] == "helper"
    assert tag.loc["scale_cuda_core", "launches"] == 1              # never summed into the main kernel


def _tc_and_library_tags() -> pd.DataFrame:
    one = ncu.parse_launches(FIX / "scale_h100_raw.csv").iloc[[0]]
    tc = "membound:stencil:tc:m"
    lib = "membound:spmv:cusparse_csr:m"
    launches = pd.concat([one.assign(id=1, tag=tc, kernel_name="stencil_tc3", time_ns=10.0, dram_read=100.0),
                          one.assign(id=2, tag=tc, kernel_name="stencil_tc", time_ns=30.0, dram_read=50.0),
                          # dc2 in fp32 on the H100: the partition kernel took longer than the SpMV itself
                          one.assign(id=3, tag=lib, kernel_name="cusparse::csrmv_v3_kernel", time_ns=9.0,
                                     dram_read=7.2e6, dram_write=0.0),
                          one.assign(id=4, tag=lib, kernel_name="cusparse::csr_partition_kernel", time_ns=10.0,
                                     dram_read=7.1e4, dram_write=0.0)])
    return ncu.summarize(launches)


def test_own_kernels_of_a_tag_are_summed_into_main_and_a_library_call_keeps_the_kernel_moving_most_bytes():
    rows = _tc_and_library_tags().set_index("kernel_name")
    main = rows.loc["stencil_tc + stencil_tc3"]
    assert main["part"] == "main" and main["launches"] == 2 and main["time_s"] == pytest.approx(40e-9)
    assert main["dram_read"] == 150.0
    assert rows.loc["cusparse::csrmv_v3_kernel", "part"] == "main"
    assert rows.loc["cusparse::csr_partition_kernel", "part"] == "helper"


def test_read_rows_takes_each_tags_main_kernel_by_todays_rule(tmp_path):
    """Rows written by an older rule (the longest kernel main) read with the kernel moving most bytes."""
    old = _tc_and_library_tags().assign(part=["main", "helper", "main"])   # partition main, as written 2026-11-24
    old.to_csv(tmp_path / "spmv.csv", index=False)
    got = ncu.read_rows([tmp_path / "spmv.csv"]).set_index("kernel_name")["part"]
    assert got.to_dict() == {"stencil_tc + stencil_tc3": "main", "cusparse::csrmv_v3_kernel": "main",
                             "cusparse::csr_partition_kernel": "helper"}


def test_hfma2_mma_moves_are_not_cuda_core_flops(tmp_path):
    """ncu counts an HFMA2.MMA warp instruction (a register move on the tensor pipe) as 32 thread HFMAs:
    they leave the CUDA-core FLOPs, a real HFMA stays two; read_rows recomputes rows written before."""
    def launch(hfma, moves):
        return _one(ffma=100.0, hfma=float(hfma), hfma2_mma_inst=float(moves))

    def flops(hfma, moves):
        return ncu.summarize(launch(hfma, moves))["flops_cuda_core"].iloc[0]

    assert flops(320, 10) == flops(0, 10) == flops(0, 0) == 200 and flops(330, 10) == 220
    old = ncu.summarize(launch(320, 10)).assign(flops_cuda_core=840.0, flops=840.0)   # as written before
    old.to_csv(tmp_path / "scale.csv", index=False)
    got = ncu.read_rows([tmp_path / "scale.csv"]).iloc[0]
    assert got["flops_cuda_core"] == 200 and got["flops"] == pytest.approx(200 + got["flops_tensor"], nan_ok=True)


def test_launch_outside_a_range_is_an_error():
    text = (FIX / "scale_h100_raw.csv").read_text().replace("membound:scale", "other:scale")
    with pytest.raises(ncu.CounterError, match="outside any membound"):
        ncu.parse_launches(text)


def test_missing_ncu_says_how_to_fix(monkeypatch):
    monkeypatch.setattr(ncu.shutil, "which", lambda name: None)
    with pytest.raises(ncu.CounterError, match="counters: false"):
        ncu.profile(["true"], {})


def test_permission_error_says_how_to_fix(tmp_path):
    fake = tmp_path / "ncu"
    fake.write_text("#!/bin/sh\necho '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission'\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(ncu.CounterError, match="NVreg_RestrictProfilingToAdminUsers"):
        ncu.profile(["true"], {}, ncu=str(fake))


def test_the_profiled_run_echoes_ncus_lines_as_they_come_and_still_fails_clearly(tmp_path, capsys):
    fake = tmp_path / "ncu"
    fake.write_text("#!/bin/sh\necho '==PROF== Connected'\necho 'progress' >&2\necho '==PROF== Disconnected'\n"
                    "exit ${FAIL:-0}\n")
    fake.chmod(0o755)
    run = ncu._ncu(str(fake), [], "profiling", echo=True)
    assert capsys.readouterr().err == run.stdout == "==PROF== Connected\nprogress\n==PROF== Disconnected\n"
    fake.write_text(fake.read_text().replace("${FAIL:-0}", "3"))
    with pytest.raises(ncu.CounterError, match=r"ncu profiling failed \(exit 3\): .*Disconnected"):
        ncu._ncu(str(fake), [], "profiling", echo=True)


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


def test_tags_carry_the_precision_and_fp64_keeps_its_old_form():
    text = (FIX / "scale_h100_raw.csv").read_text()
    text = text.replace("membound:scale:tensor_core:n_2_28:none", "membound:scale:tensor_core:n_2_28:fp32:none")
    launches = ncu.parse_launches(text).set_index("impl")
    assert launches.loc["tensor_core", "precision"] == "fp32"
    assert launches.loc["tensor_core", "tag"] == "membound:scale:tensor_core:n_2_28:fp32"
    assert launches.loc["cuda_core", "precision"] == "fp64"
    assert launches.loc["cuda_core", "tag"] == "membound:scale:cuda_core:n_2_28"


def _one(**columns):
    """One parsed launch of the SCALE fixture with `columns` replaced (a synthetic precision launch)."""
    base = ncu.parse_launches(FIX / "scale_h100_raw.csv").iloc[[0]]
    zeros = {c: 0.0 for c in ("dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "dmma_inst",
                              "hmma_inst")}
    ops = {c: float("nan") for c in ("tensor_fp64_ops", "tensor_tf32_ops", "tensor_fp16_ops", "hfma2_mma_inst")}
    return base.assign(**{**zeros, **ops, **columns})


def test_cuda_core_flops_of_every_precision_count_fma_twice():
    fp32 = _one(precision="fp32", tag="membound:scale:cuda_core:n_2_28:fp32", fmul=100.0, fadd=7.0, ffma=10.0)
    fp16 = _one(precision="fp16", tag="membound:scale:cuda_core:n_2_28:fp16", hmul=50.0, hfma=5.0, fmul=3.0)
    rows = ncu.summarize(pd.concat([fp32, fp16])).set_index("precision")
    assert rows.loc["fp32", "flops_cuda_core"] == 127 and rows.loc["fp16", "flops_cuda_core"] == 63
    assert rows.loc["fp32", "flops"] == 127 and rows.loc["fp16", "tensor_flops_from"] == "no tensor instructions"


def test_hmma_flops_take_the_shape_of_the_launchs_precision():
    tf32 = _one(precision="fp32", kernel_name="sm90_xmma_gemm_tf32_tensor16x8x8_kernel", hmma_inst=10.0,
                tag="membound:gemv:tc:n:fp32")
    fp16 = _one(precision="fp16", kernel_name="some_kernel", hmma_inst=10.0, tag="membound:gemv:tc:n:fp16")
    fp64 = _one(kernel_name="some_kernel", hmma_inst=3.0, tag="membound:gemv:tc:n")
    rows = ncu.summarize(pd.concat([tf32, fp16, fp64]), {"fp16": (16, 8, 16)}).set_index("precision")
    assert rows.loc["fp32", "flops_tensor"] == 10 * 2048
    assert rows.loc["fp32", "tensor_flops_from"] == "HMMA instructions x 2048 (m16n8k8 tf32, its name)"
    assert rows.loc["fp16", "flops_tensor"] == 10 * 4096
    assert rows.loc["fp16", "tensor_flops_from"] == "HMMA instructions x 4096 (m16n8k16 f16, the spec's mma shape, assumed)"
    assert pd.isna(rows.loc["fp64", "flops_tensor"]) and "fp64 launch" in rows.loc["fp64", "tensor_flops_from"]
    unknown = ncu.summarize(fp16).iloc[0]                          # no shape anywhere: not counted, said so
    assert pd.isna(unknown["flops_tensor"]) and "unknown shape" in unknown["tensor_flops_from"]
    absent = ncu.summarize(fp16.assign(hmma_inst=float("nan")), {"fp16": (16, 8, 16)}).iloc[0]   # metric not collected
    assert pd.isna(absent["flops_tensor"]) and "not collected" in absent["tensor_flops_from"]


def test_own_sources_give_a_shape_per_operand_type(tmp_path, monkeypatch):
    (tmp_path / "x_tc.cu").write_text(
        '#include "x_mma.cuh"\n'
        'template <class T> __global__ void x_tc(T* a) {\n'
        '  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, ...");\n}\n'
        'extern "C" __global__ void __launch_bounds__(128) x_tc_twin(float* a) {}\n')
    (tmp_path / "x_mma.cuh").write_text('asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {...}");\n')
    monkeypatch.setattr(mma, "KERNELS", tmp_path)
    mma.own_shapes.cache_clear()
    try:
        assert mma.own_shapes()["x_tc"] == {"tf32": (16, 8, 8), "f16": (16, 8, 16)}
        assert mma.shape("void x_tc<float>(float *)", "tf32") == ((16, 8, 8), "its source's mma.sync")
        assert mma.shape("x_tc_twin", "f16")[0] == (16, 8, 16) and mma.shape("x_tc", "f64") == (None, "unknown")
        assert mma.base_name("void ns::x_tc<__half>(__half *, int)") == "x_tc"
    finally:
        mma.own_shapes.cache_clear()


def test_counter_rows_from_before_the_precision_axis_read_as_fp64(tmp_path):
    rows = ncu.read_rows([FIX / "stencil_2d5pt_h100_counters.csv"])
    assert (rows["precision"] == "fp64").all() and rows["hmma_inst"].isna().all()
    assert list(rows.columns[: len(ncu.COLUMNS)]) == ncu.COLUMNS


def test_mma_shapes_argument():
    assert ncu.mma_shape_arg("fp32=16x8x8") == ("fp32", (16, 8, 8))
    with pytest.raises(Exception, match="<precision>=MxNxK"):
        ncu.mma_shape_arg("fp32=16x8")


def test_tensor_op_counters_count_tf32_and_fp16_flops_where_measured():
    """The H100 probe of 2026-11-24: SCALE's tensor-core kernels at n = 2^24 counted 131072 HMMA
    and 268435456 (TF32) / 536870912 (FP16) tensor ops: 16 and 32 FLOPs per element, as 2 m n k."""
    tf32 = _one(precision="fp32", kernel_name="scale_tensor_core_fp32", hmma_inst=131072.0,
                tensor_tf32_ops=268435456.0, tag="membound:scale:tensor_core:n:fp32")
    fp16 = _one(precision="fp16", kernel_name="scale_tensor_core_fp16", hmma_inst=131072.0,
                tensor_fp16_ops=536870912.0, tag="membound:scale:tensor_core:n:fp16")
    rows = ncu.summarize(pd.concat([tf32, fp16])).set_index("precision")
    assert rows.loc["fp32", "flops_tensor"] == 16 * 2**24 and rows.loc["fp16", "flops_tensor"] == 32 * 2**24
    assert rows.loc["fp16", "tensor_flops_from"] == "sm__ops_path_tensor_src_fp16 (1 FLOP per unit)"
    assert rows.loc["fp32", "tensor_flops_from"] == "sm__ops_path_tensor_src_tf32_dst_fp32 (1 FLOP per unit)"


def test_hfma2_mma_moves_on_the_tensor_pipe_are_no_tensor_flops():
    """cuBLAS sgemv on the H100 counted 18432 HMMA-pipe instructions, all HFMA2.MMA: no TF32 FLOPs."""
    sgemv = _one(precision="fp32", kernel_name="gemv2T_kernel_val", hmma_inst=18432.0, hfma2_mma_inst=18432.0,
                 tag="membound:gemv:cublas_sgemv:n:fp32")
    row = ncu.summarize(sgemv, {"fp32": (16, 8, 8)}).iloc[0]
    assert row["flops_tensor"] == 0 and row["tensor_flops_from"] == "no tensor instructions"
    fewer = ncu.summarize(sgemv.assign(hfma2_mma_inst=18430.0), {"fp32": (16, 8, 8)}).iloc[0]
    assert fewer["flops_tensor"] == 2 * 2048


def test_a_sparse_kernel_counts_its_hmma_sp_at_the_logical_shape_not_the_op_counter():
    """mma.sp's op-counter semantics are unchecked: stencil_sp (its source issues mma.sp m16n8k32 f16)
    takes HMMA.SP instructions x 2 m n k of that shape even where the op counter was collected."""
    sp = _one(precision="fp16", kernel_name="stencil_sp", hmma_inst=10.0, tensor_fp16_ops=123.0,
              tag="membound:stencil:tc_sparse:2d5pt:fp16")
    row = ncu.summarize(sp).iloc[0]
    assert row["flops_tensor"] == 10 * 2 * 16 * 8 * 32
    assert "HMMA instructions" in row["tensor_flops_from"] and "its source" in row["tensor_flops_from"]


BF16_RAW = '''"ID","Process ID","Process Name","Host Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Kernel Name","Device","CC","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum","sm__inst_executed_pipe_tensor_op_hmma.sum","sm__ops_path_tensor_src_bf16_dst_fp32.sum","sm__ops_path_tensor_src_fp16.sum"
"","","","","","","","","byte","byte","ns","inst","",""
"0","7","python3.12","h","7  ""<default domain>:membound:scale:tensor_core:n_2_24:bf16:none:none:none:none:none"" ","scale_tensor_core_bf16","0","9.0","33,554,432","33,554,432","25,000","262,144","1,073,741,824","0"
"1","7","python3.12","h","7  ""<default domain>:membound:scale:cuda_core:n_2_24:bf16:none:none:none:none:none"" ","scale_cuda_core_bf16","0","9.0","33,554,432","33,554,432","24,000","0","0","0"
'''


def test_a_bf16_launch_reads_its_tag_and_its_tensor_op_counter(tmp_path):
    """A raw page (`--csv --page raw`) of bf16 SCALE launches, written here in ncu's layout: the tag's
    precision, the bf16 tensor-path counter as the tensor FLOPs, its HMMA instructions of m16n8k16 bf16
    where the counter is missing."""
    launches = ncu.parse_launches(BF16_RAW)
    assert list(launches["precision"]) == ["bf16", "bf16"] and launches["tag"][0].endswith(":bf16")
    rows = ncu.summarize(launches).set_index("impl")
    tc = rows.loc["tensor_core"]
    assert tc["flops_tensor"] == 2**30 and tc["tensor_bf16_ops"] == 2**30
    assert tc["tensor_flops_from"] == "sm__ops_path_tensor_src_bf16_dst_fp32 (1 FLOP per unit)"
    assert rows.loc["cuda_core", "flops_tensor"] == 0
    counted = ncu.summarize(launches.assign(tensor_bf16_ops=float("nan"))).set_index("impl").loc["tensor_core"]
    assert counted["flops_tensor"] == 262144 * 4096                 # scale.cu's m16n8k16 bf16 HMMA
    assert counted["tensor_flops_from"] == "HMMA instructions x 4096 (m16n8k16 bf16, its source's mma.sync)"
