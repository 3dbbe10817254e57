"""Each depth-1 stencil against its own roof (analysis/roofs.py): the copy of its arrays or the instruction
roof of its busiest pipe, whichever is lower; on made-up counter rows and on the committed reference runs."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from membound.analysis import roofs
from membound.run import config, measure

REPO = Path(__file__).resolve().parents[1]
H100 = config.load_gpu("h100")
FMA, FP64 = H100["peak_TFLOPs"]["fp32"]["cuda_core"] / 2 * 1e3, H100["peak_TFLOPs"]["fp64"]["cuda_core"] / 2 * 1e3
ITEMS = 1e8
OPS = ["dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "hfma2_mma_inst", "flops_tensor",
       "inst_executed"]


def case(stencil, impl, precision, gstencil, copy_gstencil):
    d = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2}[precision]
    return {"stencil": stencil, "impl": impl, "precision": precision, "GStencil_s": gstencil,
            "GBs": gstencil * 2 * d, "copy_GBs": copy_gstencil * 2 * d}


def counted(stencil, impl, precision, part="main", **per_point):
    """A counter row of the case at depth 1 and its counter run's row: `per_point` counts a point and step."""
    tag = measure.launch_tag("stencil", impl, stencil, 1, precision)
    ops = {op: per_point.get(op, np.nan if op == "inst_executed" else 0.0) * ITEMS for op in OPS}
    return {"tag": tag, "part": part, **ops}, {"tag": tag, "work_items": ITEMS}


def test_the_roof_is_the_copy_or_the_busiest_pipe_whichever_is_lower():
    frame = pd.DataFrame([case("2d49pt", "cc_naive", "fp16", 400.0, 725.0),     # 49 FFMA + 4 conversions
                          case("2d5pt", "cc_naive", "fp64", 185.0, 185.0),      # 5 DFMA: the copy
                          case("2d49pt", "tc_sparse", "fp16", 280.0, 725.0),    # mma.sp at the sparse peak
                          case("2d5pt", "tc", "fp64", 150.0, 185.0)])           # no counter run at depth 1
    rows = [counted("2d49pt", "cc_naive", "fp16", ffma=49, hadd=4, hfma=32 * 1e-3, hfma2_mma_inst=1e-3),
            counted("2d5pt", "cc_naive", "fp64", dfma=5),
            counted("2d49pt", "tc_sparse", "fp16", flops_tensor=448)]
    counters, runs = (pd.DataFrame([r[i] for r in rows]) for i in (0, 1))
    t = roofs.table(frame, H100, counters, runs)
    fp16, fp64, sparse, tc = (t.iloc[i] for i in range(4))
    assert fp16["roof"] == fp16["pipe"] == "FMA pipes"                # the HFMA2.MMA moves left out
    assert fp16["roof_GStencil_s"] == pytest.approx(FMA / 53) and fp16["share_of_roof"] == pytest.approx(400 * 53 / FMA)
    assert "DRAM at 0.55 of the copy" in fp16["evidence"] and "FMA pipes at 0.63 of peak" in fp16["evidence"]
    assert fp64["roof"] == "copy" and fp64["pipe"] == "FP64 pipe" and fp64["pipe_GStencil_s"] == pytest.approx(FP64 / 5)
    assert fp64["share_of_roof"] == pytest.approx(1.0) and fp64["evidence"] == ""
    assert sparse["pipe"] == "tensor cores"
    assert sparse["pipe_GStencil_s"] == pytest.approx(H100["peak_TFLOPs"]["fp16"]["sparse_tensor_core"] * 1e3 / 448)
    assert tc["roof"] == "copy" and tc["pipe"] == "" and "no counter run" in tc["evidence"]


def test_counted_warp_instructions_give_the_issue_slot_roof_and_latency_below_it():
    frame = pd.DataFrame([case("2d49pt", "cc_naive", "fp32", 300.0, 500.0),
                          case("2d5pt", "cc_naive", "fp32", 500.0, 500.0)])
    rows = [counted("2d49pt", "cc_naive", "fp32", ffma=49, inst_executed=2.5),      # 2.5 warp instructions a point
            counted("2d5pt", "cc_naive", "fp32", ffma=5, inst_executed=0.5)]
    counters, runs = (pd.DataFrame([r[i] for r in rows]) for i in (0, 1))
    t = roofs.table(frame, H100, counters, runs)
    issue = H100["issue_Ginst_s"] / 2.5
    assert t.loc[0, "roof"] == "issue slots" and t.loc[0, "roof_GStencil_s"] == pytest.approx(issue)
    assert t.loc[0, "pipe"] == "FMA pipes" and t.loc[0, "share_of_roof"] == pytest.approx(300 / issue)
    assert f"issue slots at {300 / issue:.2f}: none saturated, so latency" in t.loc[0, "evidence"]
    assert t.loc[1, "roof"] == "copy" and t.loc[1, "evidence"] == ""
    no_rate = {k: v for k, v in H100.items() if k != "issue_Ginst_s"}           # a spec without the rate: no roof
    assert np.isnan(roofs.table(frame, no_rate, counters, runs).loc[0, "issue_GStencil_s"])


def test_without_counters_every_roof_is_the_copy():
    t = roofs.table(pd.DataFrame([case("2d49pt", "cc_naive", "fp16", 400.0, 725.0)]), H100, None, None)
    assert t.loc[0, "roof"] == "copy" and np.isnan(t.loc[0, "pipe_GStencil_s"])
    assert t.loc[0, "share_of_roof"] == pytest.approx(400 / 725)


spec = importlib.util.spec_from_file_location("readme_tables", REPO / "tools" / "readme_tables.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)


@pytest.mark.parametrize("gpu", tool.gpus())
def test_each_unblocked_stencil_of_the_reference_runs_has_its_roof_and_below_090_the_counters_say_why(gpu):
    t = tool.roof_table(gpu)
    naive = t[t["impl"] == "cc_naive"]
    assert naive["pipe"].isin(["FP64 pipe", "FMA pipes"]).all()    # every unblocked kernel was counted at depth 1
    lower = np.minimum(naive["copy_GStencil_s"], naive["pipe_GStencil_s"])
    assert np.allclose(naive["roof_GStencil_s"], lower)
    assert ((naive["share_of_roof"] < roofs.UNDER) == (naive["evidence"] != "")).all()
    fp16 = naive[(naive["precision"] == "fp16") & (naive["stencil"] == "2d49pt")].iloc[0]
    assert fp16["roof"] == "FMA pipes"     # 49 FFMAs and the conversions a point: below the copy (issue 74)
