"""Paper 002's fusion sweep and classification: the model's columns on hand-computed numbers, the
scenario grid, the verdict table on synthetic rows, and their figures."""

import numpy as np
import pandas as pd
import pytest

from membound.analysis import classification as cl
from membound.analysis import fusion
from membound.plots import classification as cl_plot
from membound.plots import fusion as fusion_plot
from membound.run import config, measure
from membound.run.outputs import save_figure

H100, CPU = config.load_gpu("h100"), config.load_gpu("cpu")
STENCILS = {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3},
            "2d9pt": {"shape": "box", "dims": 2, "radius": 1, "depth": 3},
            "3d27pt": {"shape": "box", "dims": 3, "radius": 1, "depth": 3}}


def rows(problem, impl, depth, t, rep=0, value=None):
    unit = "tensor_core" if impl.startswith("tc") else "cuda_core"
    role = {"cc_naive": "Brick", "cc_tb": "EBISU", "tc": "ConvStencil", "tc_twin": "ConvStencil twin"}[impl]
    return {"kernel": "stencil", "impl": impl, "unit": unit, "role": role, "problem": problem, "depth": depth,
            "precision": "fp64", "rep": rep, "t_median_s": t, "value": value if value is not None else 1 / t,
            "steps": 12, "device": "GPU X", "date": "2026-01-02T03:04:05Z", "source": "synthetic"}


def frame(*r):
    return pd.DataFrame(list(r)).reindex(columns=measure.ROW_COLUMNS)


# ------------------------------------------------------------------------------- the sweep


def test_model_columns_on_hand_computed_numbers():
    raw = frame(rows("2d9pt", "cc_tb", 3, 1.0, value=100.0), rows("2d9pt", "tc", 3, 1.0, value=50.0),
                rows("2d5pt", "tc", 2, 1.0, value=10.0))
    t = fusion.table(raw, None, STENCILS, H100).set_index(["problem", "unit", "depth"])
    cc = t.loc[("2d9pt", "cuda_core", 3)]                  # paper 002 Table 2 row 1: C 54, M 16, I 3.38
    assert (cc["K"], cc["C_model"], cc["M_model"], cc["I_model"]) == (9, 54, 16, 3.375)
    assert cc["GFLOPs_model"] == pytest.approx(100.0 * 18)       # 100 GStencil/s x 2K per point and step
    tc = t.loc[("2d9pt", "tensor_core", 3)]                # alpha = 7^2 / (3 x 9); S = 49 / (7 rows x 4 chunks x 4)
    assert tc["alpha"] == pytest.approx(49 / 27) and tc["S"] == pytest.approx(49 / 112)
    assert tc["C_model"] == pytest.approx(2 * 49 / (49 / 112)) == pytest.approx(224)
    assert tc["I_model"] == pytest.approx(14) and tc["GFLOPs_model"] == pytest.approx(50.0 * 224 / 3)
    star = t.loc[("2d5pt", "tensor_core", 2)]              # K^(2) = 13 (a diamond), rows of 1, 3, 5, 3, 1 points
    assert star["alpha"] == pytest.approx(13 / 10)       # take 2 + 3 + 3 + 3 + 2 = 13 chunks: S = 13 / 52
    assert star["S"] == pytest.approx(0.25) and star["C_model"] == pytest.approx(104) and star["I_model"] == 6.5
    assert (t["status"] == "not measured (no wqi row)").all() and t["C_ach"].isna().all()


def test_counters_side_per_point_and_launch_and_the_cuda_core_point_at_depth_one():
    raw = frame(*(rows("2d9pt", impl, d, 1.0, rep=r, value=v + r) for r in range(3)
                  for impl, d, v in (("cc_naive", 1, 10.0), ("cc_tb", 1, 20.0), ("cc_tb", 3, 30.0), ("cc_naive", 1, 5.0))),
                rows("2d5pt", "cc_naive", 1, 1.0, value=7.0), rows("2d5pt", "tc_twin", 3, 1.0))
    wqi = pd.DataFrame([{"kernel": "stencil", "impl": "cc_tb", "problem": "2d9pt", "depth": 3, "part": "main",
                         "status": "measured", "W_ach_per_item": 20.0, "Q_ach_per_item": 16 / 3 * 1.01},
                        {"kernel": "stencil", "impl": "cc_tb", "problem": "2d9pt", "depth": 3, "part": "helper",
                         "status": "measured", "W_ach_per_item": 1e9, "Q_ach_per_item": 1.0}])
    t = fusion.table(raw, wqi, STENCILS, H100)
    assert list(zip(t["problem"], t["impl"], t["depth"])) == [("2d5pt", "cc_naive", 1), ("2d9pt", "cc_tb", 1),
                                                              ("2d9pt", "cc_tb", 3)]   # config order; no twin
    one, three = t.iloc[1], t.iloc[2]
    assert one["GStencil_s"] == 21.0 and one["reps"] == 3          # the median over repetitions, cc_tb over cc_naive
    assert three["C_ach"] == pytest.approx(60) and three["M_ach"] == pytest.approx(16.16)
    assert three["dC_pct"] == pytest.approx(100 * 6 / 54) and three["I_ach"] == pytest.approx(60 / 16.16)
    assert three["status"] == "measured" and three["GFLOPs_ach"] == pytest.approx(31.0 * 20)


def test_each_precision_takes_its_own_model_and_counters():
    """fp16 rows (issue 24): M = 2D = 4 bytes, S of the m16n8k16 layout, and the counters of the fp16
    launch, not the fp64 one of the same impl, stencil and depth."""
    raw = frame(rows("2d9pt", "cc_tb", 3, 1.0, value=100.0), {**rows("2d9pt", "cc_tb", 3, 1.0, value=300.0), "precision": "fp16"},
                {**rows("2d5pt", "tc", 3, 1.0), "precision": "fp16"})
    wqi = pd.DataFrame([{"kernel": "stencil", "impl": "cc_tb", "problem": "2d9pt", "depth": 3, "part": "main",
                         "precision": p, "status": "measured", "W_ach_per_item": 18.0, "Q_ach_per_item": q}
                        for p, q in (("fp64", 16 / 3), ("fp16", 4 / 3))])
    t = fusion.table(raw, wqi, STENCILS, H100).set_index(["problem", "unit", "precision"])
    half, double = t.loc[("2d9pt", "cuda_core", "fp16")], t.loc[("2d9pt", "cuda_core", "fp64")]
    assert (half["M_model"], half["I_model"], half["M_ach"]) == (4, 13.5, pytest.approx(4.0))
    assert double["M_ach"] == pytest.approx(16.0) and double["I_model"] == 3.375
    assert t.loc[("2d5pt", "tensor_core", "fp16"), "S"] == pytest.approx(25 / (16 * 7))   # 7 rows, one chunk of 16 each


def test_fusion_figure(tmp_path):
    raw = frame(*(rows(p, impl, d, 1.0 / d) for p in STENCILS for impl in ("cc_tb", "tc") for d in (1, 2, 3)))
    t = fusion.table(raw, None, STENCILS, H100)
    save_figure(fusion_plot.figure(t, H100, "GPU: test"), tmp_path / "f.pdf", tmp_path / "f.png")
    save_figure(fusion_plot.figure(t[t["unit"] == "cuda_core"], CPU, "GPU: cpu"), tmp_path / "c.pdf", tmp_path / "c.png")
    fp32 = fusion.table(frame(*(dict(r, precision="fp32") for r in raw.to_dict("records"))), None, STENCILS, H100)
    assert fp32["M_model"].eq(8).all()                                  # D = 4 bytes
    save_figure(fusion_plot.figure(fp32, H100, "GPU: test"), tmp_path / "s.pdf", tmp_path / "s.png")   # no fp32 roofs yet
    assert (tmp_path / "f.png").stat().st_size > 10_000 and (tmp_path / "c.png").exists()


def test_the_copy_of_each_stencils_arrays_is_its_measured_roof(tmp_path):
    def copy(n, value, steps=12, role="STREAM"):
        return {"kernel": "scale", "impl": "cuda_core", "unit": "cuda_core", "role": role, "problem": f"n={n} x12",
                "n": n, "precision": "fp64", "value": value, "steps": steps, "rep": 0}
    field = [dict(rows("2d5pt", "cc_tb", d, 1.0 / d), n=10**4) for d in (1, 2)] + [rows("2d9pt", "cc_tb", 1, 1.0)]
    raw = frame(*field, copy(10**4, 4000.0), copy(10**4, 9000.0, role="STREAM twin"), copy(10**5, 3000.0))
    t = fusion.table(raw, None, STENCILS, H100).set_index(["problem", "depth"])
    assert t.loc[("2d5pt", 1), "copy_GBs"] == t.loc[("2d5pt", 2), "copy_GBs"] == 4000.0
    assert pd.isna(t.loc[("2d9pt", 1), "copy_GBs"])       # no n: no field to match
    save_figure(fusion_plot.figure(t.reset_index(), H100, "GPU: test"), tmp_path / "f.pdf", tmp_path / "f.png")


# ------------------------------------------------------------------------------- the classification


@pytest.mark.slow  # every spec's sparse layouts: seconds of CPU
def test_grid_covers_every_spec_and_precision_of_the_stencil_layouts_and_configuration():
    specs = {n: config.load_gpu(n) for n in config.profiles()}
    g = cl.grid(specs)
    assert set(g["spec"]) == {"a100", "gh200", "h100", "h200"}            # no MI250X (16x16x4), no CPU (no MMA)
    assert len(g) == 4 * (4 + 3) * (2 * 3 * 8 + 2 * 2 * 4) and set(g["precision"]) == {"fp64", "fp32", "fp16", "bf16"}
    assert set(g.loc[g["sparsity"] == "2:4", "precision"]) == {"fp32", "fp16", "bf16"}   # mma.sp: no f64
    b16 = g[(g["spec"] == "h200") & (g["precision"] == "bf16")].drop(columns="precision").reset_index(drop=True)
    f16 = g[(g["spec"] == "h200") & (g["precision"] == "fp16")].drop(columns="precision").reset_index(drop=True)
    pd.testing.assert_frame_equal(b16, f16)                          # fp16's peaks, D and MMA shape on the H200
    a100 = g[(g["spec"] == "a100") & (g["sparsity"] == "dense")]
    a100 = a100.set_index(["precision", "shape", "dims", "radius", "depth"]).sort_index()
    assert (a100.loc["bf16", "balance_CU"] == a100.loc["fp16", "balance_CU"] / 2).all()   # its own P_CU: 39, not 78
    g = g[g["sparsity"] == "dense"]
    h16 = g[(g["spec"] == "h100") & (g["precision"] == "fp16")].set_index(["shape", "dims", "radius", "depth"])
    star = h16.loc[("star", 2, 1, 1)]             # m16n8k16: rows of width 1, 3, 1 each take one k-chunk of 16
    assert star["S"] == pytest.approx(5 / 48) and star["I_CU"] == pytest.approx(5 / 2)
    assert star["I_TC"] == pytest.approx(5 / 2 * 48 / 5)
    g = g[g["precision"] == "fp64"]
    h = g[g["spec"] == "h100"].set_index(["shape", "dims", "radius", "depth"])
    box2 = h.loc[("box", 2, 1, 3)]                                       # I_CU 3.375 < 10.1, I_TC 14 < 20
    assert (box2["scenario"], box2["prediction"]) == (1, cl.EQUAL) and box2["speedup_model"] == pytest.approx(1)
    box3 = h.loc[("box", 3, 1, 3)]                                       # I_TC 98 > 20: eq. 15
    assert box3["scenario"] == 2 and box3["prediction"] == cl.CC_FASTER
    assert box3["speedup_model"] == pytest.approx((49 / 112) / (343 / 81) * 67 / (3.35 * 10.125))


def test_paper_002_table_3_case_5_on_the_a100():
    """Box-3D1R, t = 3, double, A100: compute-bound on both (scenario 4), alpha 1.81... > S P_TC/P_CU."""
    p = cl.point(config.load_gpu("a100"), "fp64", "box", 3, 1, 3)
    assert p["scenario"] == 4 and not p["sweet_spot"] and p["prediction"] == cl.CC_FASTER
    assert p["speedup_model"] == pytest.approx(p["S"] / p["alpha"] * 19.5 / 9.7)


@pytest.mark.parametrize("tc_peak, scenario, speedup, predicted", [(10.0, 4, 4.375, cl.TC_FASTER),
                                                                   (2.0, 4, 0.875, cl.CC_FASTER),
                                                                   (100.0, 3, 6.125, cl.TC_FASTER)])
def test_the_branches_of_eq_13_on_a_made_up_spec(tc_peak, scenario, speedup, predicted):
    """Box-2D3R at t = 1 (I_CU 6.125, I_TC 14, S 0.4375, alpha 1) with P_CU = 1 TFLOP/s and B = 1 TB/s."""
    gpu = {"name": "made up", "vendor": "nvidia", "peak_TFLOPs": {"fp64": {"cuda_core": 1.0, "tensor_core": tc_peak}},
           "memory_bandwidth_TBs": 1.0}
    p = cl.point(gpu, "fp64", "box", 2, 3, 1)
    assert (p["scenario"], p["prediction"]) == (scenario, predicted)
    assert p["speedup_model"] == pytest.approx(speedup)
    assert p["sweet_spot"] == (tc_peak * 0.4375 > 1)


def test_peaks_come_from_the_spec_and_the_grid_stays_on_the_stencil_layouts():
    assert cl.peaks(H100, "fp32") == (67.0, 494.5) and cl.peaks(CPU, "fp64") == (0.08, None)
    assert cl.precisions(H100) == ["fp64", "fp32", "fp16", "bf16"] and cl.precisions(CPU) == []
    other = {**H100, "vendor": "amd"}                                # its MFMA shapes, not the kernels' mma.sync
    assert cl.precisions(other) == []


def measured_rows():
    out = []
    for r, noise in enumerate((1.0, 1.004, 0.997)):
        out += [rows("3d27pt", "cc_tb", 3, 1.0 * noise, rep=r), rows("3d27pt", "tc", 3, 2.0, rep=r),    # 0.5x
                rows("2d9pt", "cc_tb", 3, 1.0 * noise, rep=r), rows("2d9pt", "tc", 3, 1.0, rep=r),      # level
                rows("2d5pt", "cc_naive", 1, 1.0, rep=r), rows("2d5pt", "tc", 1, 0.8 * noise, rep=r),   # 1.25x
                rows("2d5pt", "tc_twin", 1, 9.0, rep=r)]
    return out + [rows("2d5pt", "cc_tb", 2, 1.0), rows("2d5pt", "tc", 2, 1.0)]                  # one repetition


def test_verdicts_on_synthetic_rows():
    v = cl.verdicts(frame(*measured_rows()), H100, STENCILS, 0.02).set_index(["problem", "depth"])
    box3 = v.loc[("3d27pt", 3)]                  # predicted CUDA cores faster (scenario 2), measured 0.5x
    assert box3["speedup"] == pytest.approx(0.5, rel=0.01) and box3["reps"] == 3
    assert (box3["verdict"], box3["held"]) == ("SUPPORTED", "yes") and box3["ci_high"] < 1
    level = v.loc[("2d9pt", 3)]                  # scenario 1: equal predicted, measured within 2% of 1
    assert (level["prediction"], level["verdict"], level["held"]) == (cl.EQUAL, "LEVEL", "yes")
    faster = v.loc[("2d5pt", 1)]                 # scenario 1 at t = 1 against the unblocked kernel: 1.25x
    assert faster["cc_impl"] == "cc_naive" and faster["held"] == "no" and faster["ci_low"] > 1
    once = v.loc[("2d5pt", 2)]
    assert once["reps"] == 1 and once["verdict"] == "" and once["held"] == "n/a" and np.isnan(once["ci_low"])
    cpu = cl.verdicts(frame(*measured_rows()), CPU, STENCILS, 0.02)
    assert (cpu["verdict"] == "N/A").all() and (cpu["held"] == "n/a").all() and cpu["speedup"].notna().all()


@pytest.mark.parametrize("predicted, verdict, held", [(cl.TC_FASTER, "LEVEL", "level"), (cl.CC_FASTER, "CONTRADICTED", "no"),
                                                      (cl.EQUAL, "SUPPORTED", "no"), (cl.EQUAL, "INCONCLUSIVE", "inconclusive"),
                                                      (cl.TC_FASTER, "NO DATA", "n/a")])
def test_held(predicted, verdict, held):
    assert cl.held(predicted, verdict) == held


def test_the_table_takes_held_from_the_claims_c5_readings(tmp_path):
    v = cl.verdicts(frame(*measured_rows()), H100, STENCILS, 0.02)
    claims = [{"id": cid, "precision": "fp64", "cases": [{"problem": "3d27pt", "depth": 3, "sparsity": "dense", "held": h},
                                                         {"problem": "2d9pt", "depth": 3, "sparsity": "dense", "held": "no"}]}
              for cid, h in (("C5", "level"), ("C5 summary", "yes"))]
    out = cl.with_readings(v, claims).set_index(["problem", "depth"])
    assert (out.loc[("3d27pt", 3), "held"], out.loc[("3d27pt", 3), "held_summary"]) == ("level", "yes")
    assert out.loc[("2d9pt", 3), "held"] == "no"                         # the claims' decision, not the margin's "yes"
    assert (out.loc[("2d5pt", 1), ["held", "held_summary"]] == "n/a").all()   # no case in the claims
    assert len(out) == len(v)
    cl.write_table(out.reset_index(), tmp_path / "c.csv", tmp_path / "c.md", H100["name"], 0.02)
    assert "held_summary yes 1" in (tmp_path / "c.md").read_text()
    titles = [ax.get_title() for ax in cl_plot.figure(cl.grid({"h100": H100}), cl_plot.overlay(out.reset_index()),
                                                      H100["name"], "GPU: test").axes if ax.get_visible()]
    assert any("fp64: held 0/2 (eq. 14), 1/2 (summary)" in t for t in titles)


def test_classification_table_and_figure(tmp_path):
    specs = {n: config.load_gpu(n) for n in ("a100", "h100")}
    v = cl.verdicts(frame(*measured_rows()), H100, STENCILS, 0.02)
    cl.write_table(v, tmp_path / "c.csv", tmp_path / "c.md", H100["name"], 0.02)
    assert "held: yes 2, no 1, n/a 1" in (tmp_path / "c.md").read_text()
    assert len(cl_plot.overlay(v)) == 4
    fig = cl_plot.figure(cl.grid(specs), cl_plot.overlay(v), H100["name"], "GPU: test")
    renderer = fig.canvas.get_renderer()
    heads = [fig._suptitle.get_window_extent(renderer), fig.legends[0].get_window_extent(renderer)]
    panels = [ax.get_tightbbox(renderer) for ax in fig.axes if ax.get_visible()]   # with their titles
    assert not heads[0].overlaps(heads[1]) and not any(h.overlaps(p) for h in heads for p in panels)
    save_figure(fig, tmp_path / "f.pdf", tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000


def test_the_original_codes_rows_stay_out_of_the_sweep_and_the_verdicts():
    original = dict(rows("3d27pt", "cc_tb", 3, 0.1, value=999.0), impl="cc_tb_original")
    raw = frame(*measured_rows(), original)
    t = fusion.table(raw, None, STENCILS, H100)
    assert "cc_tb_original" not in set(t["impl"]) and t["GStencil_s"].max() < 999
    v = cl.verdicts(raw, H100, STENCILS, 0.02).set_index(["problem", "depth"])
    assert v.loc[("3d27pt", 3), "cc_impl"] == "cc_tb" and v.loc[("3d27pt", 3), "speedup"] == pytest.approx(0.5, rel=0.01)


def _texts_smaller_than_the_ticks(fig, caption):
    """The visible texts of `fig` (titles, labels, legend, scenario labels) smaller than its tick labels,
    the caption footer aside."""
    from matplotlib.text import Text
    tick = min(label.get_fontsize() for ax in fig.axes if ax.get_visible() for label in ax.get_xticklabels())
    found = fig.findobj(Text)
    ticks = {label for ax in fig.axes for label in (*ax.get_xticklabels(), *ax.get_yticklabels(),
                                                    *ax.get_xminorticklabels(), *ax.get_yminorticklabels())}  # once
    texts = [t for t in found if t.get_visible() and t.get_text().strip() and t.get_text() != caption and t not in ticks]
    assert texts
    return [(t.get_text(), t.get_fontsize()) for t in texts if t.get_fontsize() < tick]


def test_classification_splits_the_measured_gpu_from_the_model_only_specs_and_fits_a_screen(tmp_path):
    from PIL import Image
    specs = {p.stem: config.load_gpu(p.stem) for p in (config.REPO / "config" / "gpus").glob("*.yaml")}
    grid = cl.grid(specs)
    v = cl_plot.overlay(cl.verdicts(frame(*measured_rows()), H100, STENCILS, 0.02))
    measured = cl_plot.figure(grid, v, H100["name"], "GPU: test")
    others = cl_plot.specs_figure(grid, H100["name"], "GPU: test")
    titles = [ax.get_title() for ax in measured.axes if ax.get_visible()]
    assert len(titles) == len(grid[grid["gpu"] == H100["name"]].groupby(["precision", "sparsity"]))
    assert any("fp64: held 2/3 (eq. 14)" in t for t in titles)           # each marker's verdict, counted (n/a aside)
    spec_titles = [ax.get_title() for ax in others.axes if ax.get_visible()]
    assert spec_titles and not any(H100["name"] in t for t in spec_titles)
    assert {n for n in set(grid["gpu"]) - {H100["name"]}} == {t.split("\n")[0] for t in spec_titles}
    for name, fig in (("m", measured), ("s", others)):
        assert _texts_smaller_than_the_ticks(fig, "GPU: test") == []
        save_figure(fig, tmp_path / f"{name}.pdf", tmp_path / f"{name}.png")
        width, height = Image.open(tmp_path / f"{name}.png").size
        assert height <= 3000 and width <= 3000, (name, width, height)
