"""The wqi join (benchmark rows, counter rows, analytical values) and the achieved roofline figure."""

from pathlib import Path

import pandas as pd
import pytest

from membound.analysis import wqi

from membound.run import config, measure
from membound.counters import ncu
from membound.plots import roofline_achieved
from membound.run import config
from membound.run.outputs import save_figure

FIX = Path(__file__).parent / "fixtures" / "ncu"


@pytest.fixture
def parts():
    bench = wqi.read_rows([FIX / "scale_h100_rows.csv"])
    counters = ncu.summarize(ncu.parse_launches(FIX / "scale_h100_raw.csv"))
    return bench, counters, config.load_gpu("h100")


def test_scale_achieved_against_model(parts):
    t = wqi.table(*parts, stencils=None).set_index("impl")
    cc, tc = t.loc["cuda_core"], t.loc["tensor_core"]
    assert cc["status"] == tc["status"] == "measured"
    assert cc["W_ach_per_item"] == 1 and cc["W_exec_per_item"] == 1 and cc["dW_pct"] == 0
    assert abs(cc["dQ_pct"]) < 5 and cc["Q_per_item"] == 16
    assert tc["W_ach_per_item"] == 16 == tc["W_exec_per_item"]      # the MMA's padding, as the model says
    assert cc["I_ach"] == pytest.approx(cc["W_ach"] / cc["Q_ach"])


def test_not_measured_keeps_every_row(parts):
    bench, _, gpu = parts
    t = wqi.table(bench, None, gpu, None, "counters: false")
    assert len(t) == len(bench) and t["W"].notna().all() and t["W_ach"].isna().all()
    assert (t["status"] == "not measured (counters: false)").all()
    assert "not measured" in wqi.markdown(t, "x")


def test_helper_rows_reported_separately(parts):
    bench, counters, gpu = parts
    helper = counters.iloc[[0]].assign(kernel_name="helper_kernel", part="helper", flops=0.0)
    t = wqi.table(bench, pd.concat([counters, helper]), gpu, None)
    assert len(t) == 3
    h = t[t["part"] == "helper"].iloc[0]
    assert h["kernel_name"] == "helper_kernel" and pd.isna(h["W"]) and pd.isna(h["dW_pct"])


def test_row_without_counter_run_says_so(parts):
    bench, counters, gpu = parts
    t = wqi.table(bench, counters[counters["impl"] == "cuda_core"], gpu, None).set_index("impl")
    assert t.loc["tensor_core", "status"] == ("not measured (no counter run of this case: config ncu.scale_log2_*, "
                                             "ncu.stencil_sweep)")


def test_write_and_roofline(parts, tmp_path):
    t = wqi.table(*parts, stencils=None)
    wqi.write(t, tmp_path / "wqi.csv", tmp_path / "wqi.md", "title")
    back = pd.read_csv(tmp_path / "wqi.csv")
    assert list(back.columns) == wqi.COLUMNS and len(back) == 2
    fig = roofline_achieved.figure(back, parts[2])
    save_figure(fig, tmp_path / "r.pdf", tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 1000 and (tmp_path / "r.pdf").exists()


def test_rows_join_the_counters_of_their_precision(parts):
    """An fp32 tensor-core row joins the counter row of its fp32 tag, and its model side takes D = 4
    and the TF32 m16n8k8 shape (16 executed FLOPs per element, 8 bytes)."""
    bench, counters, gpu = parts
    bench = bench.assign(precision=["fp64", "fp32", "fp64"][: len(bench)])
    bench["tag"] = [measure.launch_tag(k, i, q, precision=p) for k, i, q, p in
                    zip(bench["kernel"], bench["impl"], bench["problem"], bench["precision"])]
    counters = counters.assign(tag=counters["tag"].where(counters["impl"] != "tensor_core",
                                                         counters["tag"] + ":fp32"))
    t = wqi.table(bench, counters, gpu, stencils=None).set_index(["impl", "precision"])
    tc = t.loc[("tensor_core", "fp32")]
    assert tc["status"] == "measured" and tc["W_exec_per_item"] == 16 and tc["Q_per_item"] == 8
    assert t.loc[("cuda_core", "fp64"), "Q_per_item"] == 16


def test_stencil_counter_rows_from_the_h100():
    """Output of membound.counters.ncu on the H100 (2d5pt, 10240^2, 12 steps): launches summed per call."""
    bench = wqi.read_rows([FIX / "stencil_2d5pt_h100_rows.csv"])
    counters = pd.read_csv(FIX / "stencil_2d5pt_h100_counters.csv")
    stencils = {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3}}
    t = wqi.table(bench, counters, config.load_gpu("h100"), stencils).set_index("impl")
    assert t.loc["cc_naive", "launches"] == 12 and t.loc["tc", "launches"] == 4
    assert (t["dQ_pct"].abs() < 5).all()
    assert t.loc["cc_naive", "dW_pct"] == 0 and t.loc["tc", "dW_pct"] == pytest.approx(0, abs=1e-9)
    assert t.loc["cc_tb", "dW_pct"] > 0                              # halo recomputed by temporal blocking


def test_the_model_is_that_of_what_the_counters_measured():
    bench = wqi.read_rows([FIX / "stencil_2d5pt_h100_rows.csv"])
    counters = pd.read_csv(FIX / "stencil_2d5pt_h100_counters.csv")
    stencils, gpu = {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3}}, config.load_gpu("h100")
    full = wqi.table(bench, counters, gpu, stencils)
    assert full.equals(wqi.table(bench, counters, gpu, stencils, counted=bench))
    half = wqi.table(bench, counters, gpu, stencils, counted=bench.assign(steps=6, work_items=bench.work_items // 2))
    assert (half["Q"] == full["Q"] / 2).all() and (half["Q_per_item"] == full["Q_per_item"]).all()
    assert (half["dQ_pct"] > 90).all()          # 12 steps measured against a model of 6: the model follows `counted`


def test_repetitions_of_a_case_give_one_row(tmp_path):
    rows = pd.read_csv(FIX / "scale_h100_rows.csv")
    for rep in (0, 1):
        rows.assign(rep=rep, t_median_s=rows["t_median_s"] * (1 + rep)).to_csv(tmp_path / f"r{rep}.csv", index=False)
    bench = wqi.read_rows([tmp_path / "r1.csv", tmp_path / "r0.csv"])
    assert len(bench) == 2 * len(rows)                               # the claims read every repetition
    table = wqi.table(bench, None, config.load_gpu("h100"), {})
    assert len(table) == len(rows) and list(table["problem"]) == list(rows["problem"])


def test_each_depth_of_the_sweep_joins_its_own_counter_row():
    """Tags name the depth (measure.launch_tag); a tag without one (counter runs before the sweep)
    joins only a case measured at one depth."""
    from membound.run import measure

    bench = wqi.read_rows([FIX / "stencil_2d5pt_h100_rows.csv"])
    counters = pd.read_csv(FIX / "stencil_2d5pt_h100_counters.csv")
    cc_tb = bench[bench["impl"] == "cc_tb"].iloc[[0]]
    deeper = cc_tb.assign(depth=4, steps=12, tag=measure.launch_tag("stencil", "cc_tb", "2d5pt", 4))
    sweep = pd.concat([bench, deeper], ignore_index=True)
    assert sweep["tag"].iloc[-1] == "membound:stencil:cc_tb:2d5pt.t4" and "membound:stencil:tc:2d5pt.t3" in set(sweep["tag"])
    stencils = {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3}}
    t = wqi.table(sweep, counters, config.load_gpu("h100"), stencils).set_index(["impl", "depth"])
    assert t.loc[("cc_tb", 3), "status"].startswith("not measured") and t.loc[("cc_tb", 4), "status"].startswith("not")
    assert t.loc[("cc_naive", 1), "status"] == "measured"              # one depth: the older tag still joins
    tagged = counters.assign(tag=counters["tag"].str.replace("cc_tb:2d5pt", "cc_tb:2d5pt.t4", regex=False))
    t = wqi.table(sweep, tagged, config.load_gpu("h100"), stencils).set_index(["impl", "depth"])
    assert t.loc[("cc_tb", 4), "status"] == "measured" and t.loc[("cc_tb", 3), "status"].startswith("not measured")
    assert t.loc[("cc_tb", 4), "launches"] == 4


def test_fp16_cuda_core_counts_are_not_flops_and_leave_the_achieved_roofline(parts):
    """ncu counts a packed HMUL2 once (the H100's fp16 SCALE: dW = -50%, docs/counters.md): such a row
    says so in its status, which keeps it off the achieved roofline; an fp16 tensor row stays measured."""
    bench, counters, gpu = parts
    bench = bench.assign(precision="fp16")
    bench["tag"] = [measure.launch_tag(k, i, q, precision="fp16") for k, i, q in
                    zip(bench["kernel"], bench["impl"], bench["problem"])]
    counters = counters.assign(tag=counters["tag"] + ":fp16", precision="fp16")
    counters.loc[counters["impl"] == "cuda_core", ["dmul", "hmul"]] = [0.0, 2.0**27]
    t = wqi.table(bench, counters, gpu, stencils=None).set_index("impl")
    assert t.loc["cuda_core", "status"] == wqi.PACKED_INSTRUCTIONS
    assert t.loc["tensor_core", "status"] == "measured"
