"""A spec from the device (membound.specs, membound.run.probe): faked device reports
(tests/fixtures/devices/*.json, each saying what it was made from) against the vendors' datasheets."""

import json
import re
from pathlib import Path

import pytest
import yaml

from membound import specs
from membound.model import peaks, platforms
from membound.run import config, detect, probe
from membound.specs import __main__ as cli

FIXTURES = Path(__file__).parent / "fixtures" / "devices"
WITHIN = 0.03

# Each GPU's published numbers: (where they are published, {quantity: value}). A peak is
# (precision, unit) in dense TFLOP/s, sparse_tensor_core with 2:4 sparsity; memory and L2 in the
# datasheets' (binary) GB and MB. Only what the vendor publishes for that card is listed.
A100 = {("fp64", "cuda_core"): 9.7, ("fp64", "tensor_core"): 19.5, ("fp32", "cuda_core"): 19.5,
        ("fp32", "tensor_core"): 156, ("fp32", "sparse_tensor_core"): 312, ("fp16", "cuda_core"): 78,
        ("fp16", "tensor_core"): 312, ("fp16", "sparse_tensor_core"): 624, ("bf16", "cuda_core"): 39,
        ("bf16", "tensor_core"): 312, ("bf16", "sparse_tensor_core"): 624, "sm_count": 108, "l2_MB": 40}
HOPPER_SXM = {("fp64", "cuda_core"): 34, ("fp64", "tensor_core"): 67, ("fp32", "cuda_core"): 67,
              ("fp32", "tensor_core"): 989 / 2, ("fp32", "sparse_tensor_core"): 989,
              ("fp16", "tensor_core"): 1979 / 2, ("fp16", "sparse_tensor_core"): 1979,
              ("bf16", "tensor_core"): 1979 / 2, ("bf16", "sparse_tensor_core"): 1979, "sm_count": 132}
DATASHEETS = {
    "a100_sxm4_40gb": ("NVIDIA A100 Tensor Core GPU datasheet, A100 40GB SXM column; A100 whitepaper (SMs, L2, "
                       "FP16/BF16 non-tensor)", {**A100, "memory_bandwidth_TBs": 1.555, "memory_GB": 40}),
    "a100_80gb_pcie": ("NVIDIA A100 datasheet, A100 80GB PCIe column; A100 whitepaper",
                       {**A100, "memory_bandwidth_TBs": 1.935, "memory_GB": 80}),
    "h100_pcie": ("NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe column (tensor figures with sparsity, halved "
                  "for dense); H100 whitepaper Table 3 (114 SMs, 50 MB L2)",
                  {("fp64", "cuda_core"): 26, ("fp64", "tensor_core"): 51, ("fp32", "cuda_core"): 51,
                   ("fp32", "tensor_core"): 756 / 2, ("fp32", "sparse_tensor_core"): 756,
                   ("fp16", "tensor_core"): 1513 / 2, ("fp16", "sparse_tensor_core"): 1513,
                   ("bf16", "tensor_core"): 1513 / 2, ("bf16", "sparse_tensor_core"): 1513,
                   "sm_count": 114, "l2_MB": 50, "memory_GB": 80, "memory_bandwidth_TBs": 2.0}),
    "h100_sxm5": ("NVIDIA H100 datasheet, H100 SXM column; H100 whitepaper Table 3 (132 SMs, 50 MB L2, "
                  "FP16 non-tensor 133.8)",
                  {**HOPPER_SXM, ("fp16", "cuda_core"): 133.8, "l2_MB": 50, "memory_GB": 80,
                   "memory_bandwidth_TBs": 3.35}),
    "h200": ("NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column (141 GB, 4.8 TB/s); 60 MiB L2 as an H200 "
             "reports it (issue 15)", {**HOPPER_SXM, "l2_MB": 60, "memory_GB": 141, "memory_bandwidth_TBs": 4.8}),
    "gh200": ("NVIDIA GH200 Grace Hopper Superchip datasheet (96 GB HBM3, 4 TB/s); paper 000 Table 1 (50 MB L2)",
              {**HOPPER_SXM, "l2_MB": 50, "memory_GB": 96, "memory_bandwidth_TBs": 4.0}),
    "l40s": ("NVIDIA L40S datasheet (tensor figures: dense | with sparsity); Ada whitepaper (142 SMs, 96 MB L2)",
             {("fp32", "cuda_core"): 91.6, ("fp32", "tensor_core"): 183, ("fp32", "sparse_tensor_core"): 366,
              ("fp16", "tensor_core"): 362.05, ("fp16", "sparse_tensor_core"): 733,
              ("bf16", "tensor_core"): 362.05, ("bf16", "sparse_tensor_core"): 733,
              "sm_count": 142, "l2_MB": 96, "memory_GB": 48, "memory_bandwidth_TBs": 0.864}),
    "rtx_4090": ("NVIDIA Ada GPU Architecture whitepaper, Appendix A, GeForce RTX 4090 (tensor: FP32 accumulate)",
                 {("fp32", "cuda_core"): 82.6, ("fp16", "cuda_core"): 82.6, ("bf16", "cuda_core"): 82.6,
                  ("fp32", "tensor_core"): 82.6, ("fp32", "sparse_tensor_core"): 165.2,
                  ("fp16", "tensor_core"): 165.2, ("fp16", "sparse_tensor_core"): 330.4,
                  ("bf16", "tensor_core"): 165.2, ("bf16", "sparse_tensor_core"): 330.4,
                  "sm_count": 128, "l2_MB": 72, "memory_GB": 24, "memory_bandwidth_TBs": 1.008}),
    "mi250x": ("AMD Instinct MI250X datasheet, halved for one GCD; AMD CDNA2 whitepaper (8 MB L2 per GCD)",
               {("fp64", "cuda_core"): 47.9 / 2, ("fp64", "tensor_core"): 95.7 / 2, ("fp32", "cuda_core"): 95.7 / 2,
                ("fp32", "tensor_core"): 95.7 / 2, ("fp16", "tensor_core"): 383 / 2, ("bf16", "tensor_core"): 383 / 2,
                "sm_count": 110, "l2_MB": 8, "memory_GB": 64, "memory_bandwidth_TBs": 3.2 / 2}),
    "mi300x": ("AMD Instinct MI300X datasheet; AMD CDNA3 whitepaper (4 MB L2 per XCD)",
               {("fp64", "cuda_core"): 81.7, ("fp64", "tensor_core"): 163.4, ("fp32", "cuda_core"): 163.4,
                ("fp32", "tensor_core"): 163.4, ("fp16", "tensor_core"): 1307.4,
                ("fp16", "sparse_tensor_core"): 2614.9, ("bf16", "tensor_core"): 1307.4,
                ("bf16", "sparse_tensor_core"): 2614.9,
                "sm_count": 304, "l2_MB": 4, "memory_GB": 192, "memory_bandwidth_TBs": 5.3}),
}


def report(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def generated(name: str) -> dict:
    return specs.generate(probe.device(report(name)), probe.archs())


def value(spec: dict, key):
    """A number of the spec: a top-level key, or (precision, unit) through peaks.at (bf16: fp16's if unlisted)."""
    if isinstance(key, str):
        return spec[key]
    precision, unit = key
    p = peaks.at(spec, precision)
    return p.peak("tensor_core", "2:4") if unit == "sparse_tensor_core" else p.peak(unit)


@pytest.mark.parametrize("gpu", sorted(DATASHEETS))
def test_the_generated_spec_gives_each_published_number_within_3_percent(gpu):
    spec, (where, published) = generated(gpu), DATASHEETS[gpu]
    config.check(spec, "gpu", gpu)
    off = {key: (value(spec, key), number) for key, number in published.items()
           if value(spec, key) is None or abs(value(spec, key) - number) > WITHIN * number}
    assert not off, f"{gpu} against {where}: (generated, published) {off}"


@pytest.mark.parametrize("gpu", sorted(DATASHEETS))
def test_every_number_of_the_generated_spec_names_its_source(gpu):
    spec = generated(gpu)
    src = spec["sources"]
    assert all(src[key] for key in ("memory_bandwidth_TBs", "l2_MB", "memory_GB", "sm_count"))
    for precision, units in spec["peak_TFLOPs"].items():
        for unit, number in units.items():
            why = src["peak_TFLOPs"][precision][unit]
            assert ("config/archs.yaml" in why and "device:" in why) if number else why.startswith(("none", "absent"))
    assert "device: " in src["memory_bandwidth_TBs"] and "config/archs.yaml" in src["memory_bandwidth_TBs"]
    platforms.table1({gpu: spec}, gpu)   # Table 1 reads it as it reads a curated spec


def test_ada_has_no_fp64_tensor_cores_and_geforce_halves_the_fp32_accumulate_rate():
    l40s, rtx = generated("l40s"), generated("rtx_4090")
    for spec in (l40s, rtx):
        assert spec["peak_TFLOPs"]["fp64"]["tensor_core"] is None
        assert peaks.at(spec, "fp64").note == "no tensor cores in fp64"
    assert peaks.at(rtx, "fp16").alpha == pytest.approx(2.0, rel=1e-3)      # 165.2 / 82.6
    assert peaks.at(l40s, "fp16").alpha == pytest.approx(4.0, rel=1e-3)     # 366 / 91.6
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in rtx["sources"]["peak_TFLOPs"]["fp16"]["tensor_core"]


def test_the_rated_clock_wins_over_nvidia_smis_maximum():
    dev = probe.device(report("rtx_4090"))     # nvidia-smi says 3105 MHz, the CUDA attribute 2520
    assert dev.clock_MHz == 2520 and dev.sources["clock_MHz"] == "device: cudaDevAttrClockRate"


def test_a_hopper_whose_tensor_clock_is_not_known_gets_those_peaks_absent_and_says_why():
    raw = report("h100_pcie")
    raw["attributes"]["ClockRate"] = 1785000        # e.g. an H100 NVL: not in the record
    spec = specs.generate(probe.device(raw), probe.archs())
    assert spec["peak_TFLOPs"]["fp16"]["tensor_core"] is None
    assert spec["sources"]["peak_TFLOPs"]["fp16"]["tensor_core"].startswith("absent: ")
    assert spec["peak_TFLOPs"]["fp64"]["tensor_core"] == pytest.approx(114 * 1785e6 * 256 / 1e12, rel=1e-3)
    assert "unknown" in peaks.at(spec, "fp16").note and "no tensor cores" not in peaks.at(spec, "fp16").note


@pytest.mark.parametrize("gpu, says", [("tesla_t4", "Tesla T4 is sm_75: membound needs sm_80 or later"),
                                       ("rx_7900_xtx", "AMD Radeon RX 7900 XTX: unknown AMD target gfx1100")])
def test_an_old_gpu_or_an_unknown_target_stops_with_one_line_and_writes_nothing(gpu, says, tmp_path, capsys,
                                                                                  monkeypatch):
    monkeypatch.setattr(config, "REPO", tmp_path)
    with pytest.raises(SystemExit) as stop:
        cli.main(["new", "--report", str(FIXTURES / f"{gpu}.json")])
    assert str(stop.value).startswith(f"membound: {says}") and "\n" not in str(stop.value)
    assert not any(tmp_path.iterdir())


def test_a_device_query_that_lacks_a_number_names_the_device_and_the_number():
    raw = report("l40s")
    del raw["props"]["memoryBusWidth"]
    with pytest.raises(probe.QueryError, match=r"^NVIDIA L40S: the device query gave no bus_bits;"):
        probe.device(raw)


def test_new_writes_the_spec_and_its_profile_whole_and_prints_what_to_check(tmp_path, capsys, monkeypatch):
    (tmp_path / "config" / "gpus").mkdir(parents=True)
    (tmp_path / "profiles").mkdir()
    monkeypatch.setattr(config, "REPO", tmp_path)
    assert cli.main(["new", "--report", str(FIXTURES / "l40s.json")]) == 0
    out = capsys.readouterr().out
    assert "wrote config/gpus/l40s.yaml and profiles/l40s/" in out and "fp64 tensor_core none: " in out
    spec = yaml.safe_load((tmp_path / "config" / "gpus" / "l40s.yaml").read_text())
    assert spec == generated("l40s") | {"generated": spec["generated"]}
    assert yaml.safe_load((tmp_path / "profiles" / "l40s" / "membound.yaml").read_text()) == {"gpu": "l40s"}
    assert "profiles/l40s/membound.yaml" in (tmp_path / "profiles" / "l40s" / "config.v8+.yaml").read_text()
    with pytest.raises(SystemExit, match="l40s.yaml exists: keep it, or rewrite both with --force"):
        cli.main(["new", "--report", str(FIXTURES / "l40s.json")])
    assert sorted(p.name for p in (tmp_path / "profiles").iterdir()) == ["l40s"]   # no staging left


def test_a_device_named_as_a_curated_profile_gets_a_name_of_its_own():
    assert probe.new_name("NVIDIA H200") == "h200_device" and probe.new_name("NVIDIA L40S") == "l40s"
    assert probe.slug("AMD Instinct MI300X") == "mi300x" and probe.slug("NVIDIA A100-SXM4-40GB") == "a100_sxm4_40gb"


@pytest.mark.parametrize("gpu, curated", [("h100_sxm5", "h100"), ("h200", "h200")])
def test_the_generated_hopper_specs_match_the_curated_ones_within_2_percent_but_the_h200s_bandwidth(gpu, curated):
    rows = specs.compared(generated(gpu), config.load_gpu(curated))
    off = [(k, a, b) for k, a, b, diff in rows if (a is not None or b is not None) and (diff is None or diff > 0.02)]
    # the H200 reports a 3201 MHz memory clock: 4.92 TB/s over 6144 bit, 2.4% above the datasheet's 4.8
    assert off == ([] if gpu == "h100_sxm5" else [("memory_bandwidth_TBs", 4.917, 4.8)])


def test_a_real_h100s_report_gives_the_curated_h100_within_2_percent_and_its_profile():
    """tests/fixtures/devices/h100_probe/: a real H100 SXM5's report (getDeviceProperties, CuPy's attributes,
    nvidia-smi's CSV: device_probe.json) and its nvidia-smi -q, taken on the project's GPU machine
    (CUDA runtime 13.2, driver 580) on 2026-12-05."""
    real = FIXTURES / "h100_probe"
    dev = probe.device(json.loads((real / "device_probe.json").read_text()))
    rows = specs.compared(specs.generate(dev, probe.archs()), config.load_gpu("h100"))
    given = [r for r in rows if r[1] is not None or r[2] is not None]   # 4 + 11 peaks (fp64: no sparse)
    assert len(given) == 15 and all(r[3] is not None and r[3] <= 0.02 for r in given), given
    max_clocks = (real / "nvidia_smi_q.txt").read_text().split("Max Clocks")[1].split("Max Customer")[0]
    assert re.search(r"SM\s+: (\d+) MHz", max_clocks).group(1) == f"{dev.clock_MHz:g}" == "1980"
    assert re.search(r"Memory\s+: (\d+) MHz", max_clocks).group(1) == f"{dev.memory_clock_MHz:g}" == "2619"
    assert detect.profile_of(dev) == "h100"
