"""The paper's figures on small synthetic raw rows: the cache splits of the medians, the
captions' REAL/SURROGATE, the time breakdown against eq. 17/18, the plotted-data CSVs, the files."""

import json
import math
import types

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from matplotlib.figure import Figure

from membound.matrices import table2
from membound.model import equations
from membound.model.precision import PRECISIONS
from membound.plots import common, compare, fig2, fig3_4, fig6, fig7, fig8, gemv
from membound.run import config, profiles
from membound.run import raw as raw_files
from membound.run.measure import ROW_COLUMNS
from membound.run.outputs import save_figure, write_csv


@pytest.fixture(autouse=True)
def _close_figures():
    """Tests that draw without saving leave their figures to pyplot: closed after each."""
    yield
    import matplotlib.pyplot as plt
    plt.close("all")


L2_1MB = {**config.load_gpu("h100"), "name": "test GPU", "l2_MB": 1}
STENCILS = {"stencil": {"kernels": {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3}}}}


def raw(rows: list[dict]) -> pd.DataFrame:
    """Raw benchmark rows in the schema of measure.ROW_COLUMNS (unset columns empty)."""
    base = {"device": "Test GPU", "date": "2026-01-02T03:04:05Z", "source": "synthetic", "precision": "fp64"}
    return pd.DataFrame([{**base, **r} for r in rows]).reindex(columns=ROW_COLUMNS)


def scale_rows(speedups: dict[int, float], t_cc: float = 1e-3) -> pd.DataFrame:
    """SCALE rows: per n, CUDA cores in t_cc and tensor cores `speedup` times slower."""
    return raw([{"kernel": "scale", "impl": impl, "unit": unit, "role": "STREAM", "problem": f"n={n}", "n": n,
                 "t_median_s": t_cc * (s if unit == "tensor_core" else 1), "metric": "GB/s",
                 "value": 16 * n / (t_cc * (s if unit == "tensor_core" else 1)) / 1e9}
                for n, s in speedups.items() for impl, unit in (("cc", "cuda_core"), ("tc", "tensor_core"))])


def spmv_rows(matrices: dict[str, tuple[int, float, str]]) -> pd.DataFrame:
    """SpMV rows: per code, (nnz of a 1000 x 1000 matrix, speedup t_TC/t_CC, source)."""
    return raw([{"kernel": "spmv", "impl": impl, "unit": unit, "role": role, "problem": f"m{code}", "code": code,
                 "source": source, "rows": 1000, "cols": 1000, "nnz": nnz, "metric": "GFLOP/s",
                 "t_median_s": 1e-4 * (s if unit == "tensor_core" else 1), "value": 1.0}
                for code, (nnz, s, source) in matrices.items()
                for impl, unit, role in (("csr", "cuda_core", "cuSPARSE"), ("tc", "tensor_core", "DASP"))])


def stencil_rows() -> pd.DataFrame:
    return raw([{"kernel": "stencil", "impl": impl, "unit": unit, "role": role, "problem": p, "depth": d,
                 "domain": "64x64", "steps": 6, "t_median_s": 1e-3, "metric": "GStencil/s", "value": v}
                for p in ("2d9pt", "2d5pt")
                for impl, unit, role, d, v in (("cc_naive", "cuda_core", "Brick", 1, 3.0),
                                               ("cc_tb", "cuda_core", "EBISU", 3, 4.0),
                                               ("tc", "tensor_core", "ConvStencil", 3, 2.0))])


# Half of a 1 MB L2 is 2^19 bytes: the input array (8n bytes) exceeds it above n = 2^16. The
# speedups are chosen so that a split at 16n, at the full L2, or with n = 2^16 on the wrong side,
# or an arithmetic mean, each gives different numbers.
SCALE_SPEEDUPS = {2**14: 2.0, 2**15: 8.0, 2**16: 1.0, 2**17: 3.0, 2**18: 12.0}


def test_scale_median_splits_at_half_the_l2():
    d = fig6.data(scale_rows(SCALE_SPEEDUPS), L2_1MB)
    per_n = d.drop_duplicates("n").set_index("n")
    assert per_n["larger_than_half_L2"].to_dict() == {2**14: False, 2**15: False, 2**16: False,
                                                      2**17: True, 2**18: True}
    assert per_n["speedup"].to_dict() == pytest.approx(SCALE_SPEEDUPS)
    assert per_n.loc[2**14, "median_speedup"] == pytest.approx(2.0)      # the median of 2, 8 and 1
    assert per_n.loc[2**18, "median_speedup"] == pytest.approx(6.0)       # of 3 and 12: their geometric mean
    assert (d["half_L2_MB"] == 0.5).all() and d.loc[d["n"] == 2**16, "input_MB"].eq(0.5).all()


def test_figures_6_and_7_show_the_claims_intervals_over_repetitions_without_twins():
    from membound.analysis import claims

    reps = [scale_rows({n: s * (1 + 0.01 * r) for n, s in SCALE_SPEEDUPS.items()}).assign(rep=r) for r in range(3)]
    twin = reps[0][reps[0]["unit"] == "cuda_core"].assign(impl="tc_twin", role="STREAM twin", t_median_s=9.0)
    rows = pd.concat([*reps, twin], ignore_index=True)
    d = fig6.data(rows, L2_1MB)
    assert len(d) == 2 * len(SCALE_SPEEDUPS) and set(d["impl"]) == {"cc", "tc"}        # medians; no twin
    c2 = {c["id"]: c for c in claims.check(rows, L2_1MB, {}, 0.02, 0.6)["claims"] if c["precision"] == "fp64"}
    c2 = c2["C2"]["numbers"]
    for larger, part in ((False, "within_half_L2"), (True, "beyond_half_L2")):
        got = d[d["larger_than_half_L2"] == larger].iloc[0]
        want = c2[part]
        assert (got["median_speedup"], got["ci_low"], got["ci_high"]) == (want["estimate"], want["ci_low"],
                                                                          want["ci_high"])
        assert got["ci_low"] < got["median_speedup"] < got["ci_high"]
    sp = spmv_rows({"D1": (200_000, 2.0, "real"), "D2": (210_000, 3.0, "real"), "D3": (65_000, 1.0, "real")})
    d7 = fig7.data(sp, L2_1MB).set_index("code")
    c3 = {c["id"]: c for c in claims.check(sp, L2_1MB, {}, 0.02, 0.6, precisions=["fp64"])["claims"]}["C3"]
    assert d7.loc["D1", ["median_speedup", "ci_low", "ci_high"]].iloc[0].tolist() == [c3["estimate"], c3["ci_low"],
                                                                                      c3["ci_high"]]


def test_geomean_ignores_missing_speedups():
    assert common.geomean([2.0, 8.0, math.nan]) == pytest.approx(4.0)
    assert math.isnan(common.geomean([]))


def test_spmv_split_at_the_l2_with_table2_sizes_in_code_order():
    # 1000 x 1000: 65,000 nnz is 0.76 MB (above L2/2, below the L2 of 1 MB), 200,000 nnz 2.3 MB.
    d = fig7.data(spmv_rows({"D10": (200_000, 2.0, "real"), "D2": (65_000, 3.0, "real"),
                             "D1": (200_000, 8.0, "real")}), L2_1MB)
    per = d.drop_duplicates("code").set_index("code")
    assert list(per.index) == ["D1", "D2", "D10"]
    assert per["size_MB"].to_dict() == pytest.approx({c: table2.size_mb(1000, 1000, z)
                                                      for c, z in (("D1", 200_000), ("D2", 65_000), ("D10", 200_000))})
    assert per["larger_than_L2"].to_dict() == {"D1": True, "D2": False, "D10": True}
    assert per["median_speedup"].to_dict() == pytest.approx({"D1": 4.0, "D2": 3.0, "D10": 4.0})


def test_caption_says_surrogate_when_any_matrix_is_one():
    mixed = spmv_rows({"D1": (40_000, 1.0, "real"), "D2": (40_000, 1.0, "surrogate")})
    text = common.caption("test GPU", mixed, "config/gpus/h100.yaml")
    assert "surrogate" in text.lower() and "1 of 2" in text
    assert "Test GPU" in text and "2026-01-02" in text and "config/gpus/h100.yaml" in text
    assert (fig7.data(mixed, L2_1MB).set_index("code").loc["D2", "source"] == "surrogate").all()


def test_caption_of_real_matrices_never_says_surrogate():
    text = common.caption("test GPU", spmv_rows({"D1": (40_000, 1.0, "real"), "D2": (40_000, 1.0, "real")}))
    assert "surrogate" not in text.lower() and "REAL" in text


def test_caption_of_an_analytical_figure_names_the_spec():
    assert common.caption("NVIDIA H100", spec="config/gpus/h100.yaml") == \
        "GPU: NVIDIA H100; analytical, from config/gpus/h100.yaml"


def test_breakdown_follows_eq_17_and_18_with_the_sec_5_1_tensor_rate_and_a_defined_t_others():
    gpu = config.load_gpu("h100")
    n = 2**24
    t_mem, t_cmp = 16 * n / 3.35e12, n / 34e12
    rows = scale_rows({2**14: 1.5, 2**20: 1.0, n: 1.1}, t_cc=1.2 * t_mem)
    rows.loc[rows["n"] == 2**14, "t_median_s"] = [1e-5, 1.5e-5]                    # launch cost, cc and tc
    d = fig3_4.data(rows, gpu).set_index(["case", "unit"])
    assert (d["n"] == n).all() and list(d["T_mem_s"]) == pytest.approx([t_mem] * 4)
    assert d.loc[("overlapped", "cuda_core"), "T_cmp_s"] == pytest.approx(t_cmp)
    assert d.loc[("overlapped", "tensor_core"), "T_cmp_s"] == pytest.approx(n / (67e12 / 8))   # 1/8 of the MMA
    assert d.loc[("overlapped", "cuda_core"), "T_others_s"] == 1e-5 and (d["n_others"] == 2**14).all()
    assert d.loc[("unoverlapped", "tensor_core"), "T_others_s"] == 1.5e-5
    for (case, _), r in d.iterrows():
        equation = equations.overlapped_time if case == "overlapped" else equations.unoverlapped_time
        assert r["T_model_s"] == pytest.approx(equation(r["T_mem_s"], r["T_cmp_s"], r["T_others_s"]))
    assert d.loc[("unoverlapped", "tensor_core"), "T_measured_s"] == pytest.approx(1.1 * 1.2 * t_mem)


def test_breakdown_without_a_matrix_unit_uses_p_cc():
    assert fig3_4.compute_rate(config.load_gpu("cpu"), "tensor_core") == pytest.approx(0.08e12)
    assert fig3_4.compute_rate(config.load_gpu("h100"), "tensor_core") == pytest.approx(67e12 / 8)


def test_roofline_has_a_ceiling_per_unit_and_every_kernel():
    h100 = fig2.data(STENCILS, config.load_gpu("h100"))
    ceilings = h100[h100["item"] == "ceiling"].set_index("unit")
    assert ceilings["GFLOPs"].to_dict() == {"cuda_core": 34e3, "tensor_core": 67e3}
    assert ceilings.loc["cuda_core", "intensity_FLOP_per_B"] == pytest.approx(34 / 3.35)
    kernels = h100[h100["item"] == "kernel"].set_index("label")
    assert kernels.loc["SCALE", "GFLOPs"] == pytest.approx(3350 / 16) and kernels.loc["SCALE", "memory_bound"]
    assert "2d5pt t=3 TC" in kernels.index
    cpu = fig2.data(STENCILS, config.load_gpu("cpu"))
    assert set(cpu["unit"]) == {"cuda_core"}


CASES = {
    "fig2": (fig2, lambda gpu: fig2.data(STENCILS, gpu)),
    "fig3_4": (fig3_4, lambda gpu: fig3_4.data(scale_rows(SCALE_SPEEDUPS), gpu)),
    "fig6": (fig6, lambda gpu: fig6.data(scale_rows(SCALE_SPEEDUPS), gpu)),
    "fig7": (fig7, lambda gpu: fig7.data(spmv_rows({"D1": (40_000, 2.0, "surrogate"), "D2": (200_000, 3.0, "surrogate")}), gpu)),
    "fig8": (fig8, lambda gpu: fig8.data(stencil_rows(), gpu)),
}


@pytest.mark.parametrize("name", CASES)
def test_plotted_csv_has_the_columns_and_provenance(name, tmp_path):
    module, make = CASES[name]
    d = make(L2_1MB)
    assert list(d.columns) == module.COLUMNS and len(d)
    assert {"gpu", "source"} <= set(d.columns) and (d["gpu"] == "test GPU").all()
    write_csv(d, tmp_path / "d.csv")
    assert list(pd.read_csv(tmp_path / "d.csv").columns) == module.COLUMNS


@pytest.mark.parametrize("name", CASES)
def test_figure_is_saved_as_pdf_and_png(name, tmp_path):
    module, make = CASES[name]
    fig = module.figure(make(L2_1MB), L2_1MB, "GPU: test GPU; date: 2026-01-02")
    assert isinstance(fig, Figure)
    save_figure(fig, tmp_path / "f.pdf", tmp_path / "f.png")
    assert (tmp_path / "f.pdf").read_bytes()[:4] == b"%PDF"
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_a_profile_without_tensor_core_rows_still_plots(tmp_path):
    gpu = {**L2_1MB, "peak_TFLOPs": {**L2_1MB["peak_TFLOPs"], "fp64": {"cuda_core": 34.0, "tensor_core": None}}}
    both = pd.concat([scale_rows(SCALE_SPEEDUPS), spmv_rows({"D1": (40_000, 2.0, "real")})])
    cuda_only = both[both["unit"] == "cuda_core"]
    for module in (fig3_4, fig6, fig7):
        d = module.data(cuda_only, gpu)
        assert len(d) and set(d["unit"]) == {"cuda_core"}
        assert "speedup" not in d or d["speedup"].isna().all()
        save_figure(module.figure(d, gpu, "GPU: test GPU"), tmp_path / "f.pdf", tmp_path / "f.png")


def test_stencil_rows_keep_their_order_and_depths():
    d = fig8.data(stencil_rows(), L2_1MB)
    assert list(d["problem"].unique()) == ["2d9pt", "2d5pt"]
    assert list(d.loc[d["problem"] == "2d5pt", "label"]) == ["Brick t=1", "EBISU t=3", "ConvStencil t=3"]


def swept_stencil_rows() -> pd.DataFrame:
    """stencil_rows() and 2d5pt's fusion sweep: EBISU at depths 1 (3.5) and 2 (4.5, its best), ConvStencil at 1 (2.5)."""
    extra = raw([{"kernel": "stencil", "impl": impl, "unit": unit, "role": role, "problem": "2d5pt", "depth": d,
                  "domain": "64x64", "steps": 6, "t_median_s": 1e-3, "metric": "GStencil/s", "value": v}
                 for impl, unit, role, d, v in (("cc_tb", "cuda_core", "EBISU", 1, 3.5), ("cc_tb", "cuda_core", "EBISU", 2, 4.5),
                                                ("tc", "tensor_core", "ConvStencil", 1, 2.5))])
    return pd.concat([stencil_rows(), extra], ignore_index=True)


def test_each_stencil_bar_is_its_implementation_at_its_best_depth():
    d = fig8.data(swept_stencil_rows(), L2_1MB).set_index(["problem", "impl"])
    assert (d.loc[("2d5pt", "cc_tb"), ["depth", "depths", "value", "label"]].tolist() == [2, "1-3", 4.5, "EBISU t=2"])
    assert (d.loc[("2d5pt", "tc"), ["depth", "depths", "value"]].tolist() == [1, "1,3", 2.5])
    assert (d.loc[("2d9pt", "cc_tb"), ["depth", "depths"]].tolist() == [3, "3"]) and len(d) == 6


def test_given_the_role_depths_each_stencil_bar_is_at_c4s_equal_depth_with_its_best_marked():
    """C4 compares at the role depth (config stencil.kernels); the best depth is marked, not plotted."""
    rows = swept_stencil_rows()
    d = fig8.data(rows, L2_1MB, {"2d5pt": {"depth": 3}, "2d9pt": {"depth": 3}}).set_index(["problem", "impl"])
    assert d.loc[("2d5pt", "cc_tb"), ["depth", "value", "best_depth", "best_value", "at"]].tolist() == \
        [3, 4.0, 2, 4.5, "role depth"]
    assert d.loc[("2d5pt", "tc"), ["depth", "value", "best_depth", "best_value"]].tolist() == [3, 2.0, 1, 2.5]
    assert d.loc[("2d5pt", "cc_naive"), ["depth", "at"]].tolist() == [1, "best depth"]   # runs at depth 1 only
    fig = fig8.figure(d.reset_index(), L2_1MB, "caption", ["fp64"])
    assert "equal depth" in fig.texts[0].get_text() or any("equal depth" in t.get_text() for t in fig.texts)
    marks = [line for ax in fig.axes for line in ax.get_lines() if line.get_marker() == "_"]
    assert sorted(float(m.get_ydata()[0]) for m in marks) == [2.5, 4.5]
    best = fig8.data(rows, L2_1MB).set_index(["problem", "impl"])          # without role depths: the best depth
    assert best.loc[("2d5pt", "cc_tb"), ["depth", "at"]].tolist() == [2, "best depth"]
    stacked = compare.figure(fig8, [("h100", d.reset_index()), ("h200", best.reset_index())], precision="fp64")
    assert stacked.get_suptitle() == fig8.TITLE[True] + ", fp64"     # the title's text, whichever GPU is first


def test_figure_7_shows_c3s_decomposition_with_the_claims_numbers():
    from membound.analysis import claims

    sp = spmv_rows({"D1": (200_000, 2.0, "surrogate"), "D2": (210_000, 3.0, "surrogate"), "D3": (65_000, 1.0, "surrogate")})
    twin = sp[sp["unit"] == "tensor_core"].assign(impl="tc_twin", unit="cuda_core", role="DASP twin",
                                                  t_median_s=lambda d: d["t_median_s"] * 1.5)
    reps = pd.concat([pd.concat([sp, twin]).assign(rep=r, t_median_s=lambda d, r=r: d["t_median_s"] * (1 + 0.01 * r))
                      for r in range(3)], ignore_index=True)
    d7 = fig7.data(reps, L2_1MB).set_index("code")
    c3 = {c["id"]: c for c in claims.check(reps, L2_1MB, {}, 0.02, 0.6, precisions=["fp64"])["claims"]}["C3"]["numbers"]
    for name in ("tensor_core_effect", "format_effect"):
        assert d7.loc["D1", [name, f"{name}_low", f"{name}_high"]].iloc[0].tolist() == pytest.approx(
            [c3[name]["estimate"], c3[name]["ci_low"], c3[name]["ci_high"]])
    assert d7.loc["D1", "tensor_core_effect"].iloc[0] == pytest.approx(1 / 1.5)
    fig = fig7.figure(d7.reset_index(), L2_1MB, "caption", ["fp64"])
    ticks = [t.get_text() for ax in fig.axes for t in ax.get_xticklabels()]
    assert "> L2\nTC/twin" in ticks and "> L2\ntwin/CC" in ticks


def test_stencil_and_gemv_bars_are_the_median_over_repetitions():
    reps = [stencil_rows().assign(rep=r, value=lambda d, r=r: d["value"] * (2, 5, 1)[r]) for r in range(3)]
    d = fig8.data(pd.concat(reps, ignore_index=True), L2_1MB)
    assert len(d) == len(stencil_rows()) and list(d["value"][:3]) == [6.0, 8.0, 4.0]   # medians, not the last
    gemv_rep = [{"kernel": "gemv", "impl": "cublas_dgemv", "unit": "cuda_core", "role": "cuBLAS", "rows": 512,
                 "cols": 512, "t_median_s": t, "metric": "GB/s", "value": 2.0 / t, "rep": r}
                for r, t in enumerate((1.0, 4.0, 2.0))]
    g = gemv.data(raw(gemv_rep), L2_1MB)
    assert len(g) == 1 and (g["t_median_s"].iloc[0], g["value"].iloc[0]) == (2.0, 1.0)


def test_spmv_figure_without_rows_says_so(tmp_path):
    empty = fig7.data(raw_files.read_all([]), L2_1MB)
    assert empty.empty
    save_figure(fig7.figure(empty, L2_1MB, "GPU: test GPU"), tmp_path / "f.pdf", tmp_path / "f.png")


def test_compare_stacks_every_profile_that_has_the_csv(tmp_path):
    for profile in ("h100", "reference/h100", "a100"):
        write_csv(fig6.data(scale_rows(SCALE_SPEEDUPS), L2_1MB), tmp_path / profile / "figures" / "fig6_scale.csv")
    (tmp_path / "cpu" / "figures").mkdir(parents=True)
    found = profiles.found(str(tmp_path), "figures/fig6_scale.csv")
    assert [compare.label(str(p).replace(str(tmp_path), "results")) for p in found] == ["a100", "h100", "reference/h100"]
    fig = compare.figure(fig6, [(str(p), pd.read_csv(p)) for p in found])
    assert len(fig.axes) == 3
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax, path in zip(fig.axes, found):                 # each row names its GPU, clear of every legend
        assert ax.get_xlabel().endswith(f"{path} fp64: {pd.read_csv(path)['gpu'].iloc[0]}")
        for other in fig.axes:
            if other.get_legend():
                assert not overlaps(ax.xaxis.label.get_window_extent(renderer),
                                    other.get_legend().get_window_extent(renderer))
    save_figure(fig, tmp_path / "c.pdf", tmp_path / "c.png")
    with pytest.raises(ValueError, match="no plotted-data CSVs"):
        compare.figure(fig7, [])


def test_compare_draws_every_gpus_roofline_on_one_plot_and_one_claims_table(tmp_path):
    panels = [(name, fig2.data(STENCILS, config.load_gpu(name))) for name in ("a100", "h200")]
    fig = compare.rooflines(panels)
    assert len(fig.axes) == 1
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert sum("H200" in label for label in labels) == 2 and sum("A100" in label for label in labels) == 2
    for name, verdict in (("h100", "SUPPORTED"), ("reference/h200", "CONTRADICTED")):
        (tmp_path / name).mkdir(parents=True)
        claims = {"device_spec": f"spec of {name}", "matrix_source": "surrogate",
                  "claims": [{"id": "C1", "title": "bound", "verdict": verdict, "estimate": 1.1}]}
        (tmp_path / name / "claims.json").write_text(json.dumps(claims))
    table = compare.claims_table(profiles.found(str(tmp_path), "claims.json"))
    assert table[["claim", "verdict", "estimate"]].values.tolist() == [["C1", "SUPPORTED", 1.1], ["C1", "CONTRADICTED", 1.1]]


def test_a_truncated_raw_csv_is_one_line_naming_the_file_and_its_missing_columns(tmp_path):
    (tmp_path / "scale.csv").write_text("kernel,impl,un\n")
    (tmp_path / "empty.csv").write_text("")
    out = types.SimpleNamespace(csv=tmp_path / "f.csv", pdf=tmp_path / "f.pdf", png=tmp_path / "f.png")
    with pytest.raises(SystemExit, match=r"scale.csv: not benchmark rows: no column unit, .*t_median_s.*; delete it"):
        common.render(fig3_4, [tmp_path / "scale.csv"], "config/gpus/cpu.yaml", out)
    with pytest.raises(SystemExit, match=r"empty.csv: empty"):
        common.render(fig3_4, [tmp_path / "empty.csv"], "config/gpus/cpu.yaml", out)
    assert not out.csv.exists()


def overlaps(a, b, gap: float = 0.0) -> bool:
    """Whether two display-space boxes come closer than `gap` (display units) to each other."""
    return a.x0 < b.x1 + gap and b.x0 < a.x1 + gap and a.y0 < b.y1 + gap and b.y0 < a.y1 + gap


def test_breakdown_equations_stay_clear_of_the_bars():
    fig = fig3_4.figure(fig3_4.data(scale_rows({2**20: 1.1}), L2_1MB), L2_1MB, "caption", ["fp64"])
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        equations = [t.get_window_extent(renderer) for t in ax.texts if t.get_text().startswith("T = ")]
        bars = [p.get_window_extent(renderer) for p in ax.patches if p.get_width() > 0]
        gap = 3 * fig.dpi / 72  # 3 points of air between an equation and any bar
        assert equations and bars and not any(overlaps(e, b, gap) for e in equations for b in bars)


def test_roofline_note_without_counters_stays_off_the_roof():
    from membound.plots import roofline_achieved
    wqi = pd.DataFrame([{"status": "measured", "part": "main", "kernel": "scale", "unit": "cuda_core", "I_ach": 0.06,
                         "I_l2_ach": 0.05, "GFLOPs_ach": 200.0, "precision": "fp16"}])   # fp64: no counter rows
    fig = roofline_achieved.figure(wqi, config.load_gpu("h100"))
    ax, renderer = fig.axes[0], fig.canvas.get_renderer()
    (note,) = [t for t in ax.texts if "not measured" in t.get_text()]
    box = note.get_window_extent(renderer)
    for line in ax.lines:
        points = ax.transData.transform(line.get_xydata())
        assert not any(box.x0 <= x <= box.x1 and box.y0 <= y <= box.y1 for x, y in points)



def test_achieved_roofline_without_counters_is_a_small_figure_that_says_so():
    """The cpu profile measures no counters: one line of text, not four empty panels 3930 px wide."""
    from membound.plots import roofline_achieved
    why = "not measured (profiler none: no counter runs in the workflow for it)"
    wqi = pd.DataFrame([{"status": why, "part": "main", "kernel": "scale", "precision": p} for p in PRECISIONS])
    fig = roofline_achieved.figure(wqi, config.load_gpu("cpu"))
    assert fig.axes == [] and fig.get_figwidth() * 150 < 1100        # px at save_figure's dpi
    assert [t.get_text() for t in fig.texts] == ["Achieved roofline, host CPU (numpy/scipy): no counters", why]
    empty = roofline_achieved.figure(wqi.iloc[:0], config.load_gpu("h100"))
    assert empty.texts[1].get_text() == "no counter rows in this run"


def test_roofline_notes_and_balance_labels_do_not_overprint():
    """fig2's "B = ..." labels and its "no tensor cores in ..." note, each panel (the cpu and an h100)."""
    for gpu, precisions in (("cpu", list(PRECISIONS)), ("h100", ["fp64", "fp16"])):
        d = fig2.data(STENCILS, config.load_gpu(gpu), precisions)
        fig = fig2.figure(d, config.load_gpu(gpu), "caption", precisions)
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            boxes = [t.get_window_extent(renderer) for t in ax.texts]
            assert len(boxes) >= 1 and not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def test_achieved_roofline_names_the_fp16_rows_it_leaves_out_and_its_legend_covers_no_panel():
    from membound.analysis.wqi import PACKED_INSTRUCTIONS
    from membound.plots import roofline_achieved
    row = {"part": "main", "kernel": "scale", "unit": "cuda_core", "I_ach": 0.06, "I_l2_ach": 0.05, "GFLOPs_ach": 200.0}
    wqi = pd.DataFrame([{**row, "status": "measured", "precision": "fp64"},
                        *[{**row, "status": PACKED_INSTRUCTIONS, "precision": "fp16"}] * 2])
    fig = roofline_achieved.figure(wqi, config.load_gpu("h100"))
    renderer = fig.canvas.get_renderer()
    notes = [" ".join(t.get_text() for t in ax.texts) for ax in fig.axes]
    assert "not plotted" not in notes[0] and "not plotted: 2 fp16 row(s)" in notes[2]
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    assert len(legend.get_texts()) == 4 and not any(box.overlaps(ax.get_tightbbox(renderer)) for ax in fig.axes)


def test_spmv_figure_names_the_matrices_a_precision_did_not_run():
    rows = spmv_rows({"D1": (2000, 1.5, "real"), "D8": (400000, 0.9, "real"), "D20": (9000, 1.1, "surrogate")})
    rows = pd.concat([rows, rows[rows["code"] != "D20"].assign(precision="fp16")])
    fig = fig7.figure(fig7.data(rows, L2_1MB), L2_1MB, "caption", ["fp64", "fp16"])
    labels = [ax.get_xlabel() for ax in fig.axes if ax.get_title(loc="left").startswith("(a)")]
    assert "not run" not in labels[0] and "not run in fp16: D20 (see the SpMV log)" in labels[1]


def test_spmv_panels_are_lettered_and_the_ratio_is_not_called_a_speedup():
    rows = spmv_rows({"D1": (2000, 1.5, "real"), "D8": (400000, 0.9, "real")})
    fig = fig7.figure(fig7.data(rows, L2_1MB), L2_1MB, "caption")
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert titles[0].startswith("(a)") and titles[1].startswith("(b)")
    words = " ".join([*titles, *(ax.get_ylabel() for ax in fig.axes)]).lower()
    assert "speedup" not in words and "t_tc / t_cc" in words


# ------------------------------------------------------------------------------------ precisions


def test_scale_l2_split_follows_bytes_in_each_precision():
    """n = 2^17: 1 MiB in fp64 (beyond half the 1 MB L2), 512 KiB in fp32 (within it, = L2/2)."""
    rows = pd.concat([scale_rows({2**17: 2.0, 2**18: 3.0}), scale_rows({2**17: 0.5, 2**18: 0.8}).assign(precision="fp32")])
    d = fig6.data(rows, L2_1MB).set_index(["precision", "unit", "n"])
    assert d.loc[("fp64", "cuda_core", 2**17), "input_MB"] == 1.0 and d.loc[("fp64", "cuda_core", 2**17), "larger_than_half_L2"]
    assert d.loc[("fp32", "cuda_core", 2**17), "input_MB"] == 0.5
    assert not d.loc[("fp32", "cuda_core", 2**17), "larger_than_half_L2"]
    assert d.loc[("fp32", "tensor_core", 2**18), "median_speedup"] == pytest.approx(0.8)   # its own precision's pairs
    assert list(dict.fromkeys(d.index.get_level_values("precision"))) == ["fp64", "fp32"]


def test_figures_get_a_row_per_precision_and_say_which_have_no_rows():
    rows = pd.concat([spmv_rows({"D1": (40_000, 2.0, "real")}), spmv_rows({"D1": (40_000, 0.5, "real")}).assign(precision="fp16")])
    fig = fig7.figure(fig7.data(rows, L2_1MB), L2_1MB, "caption", ["fp64", "fp32", "fp16"])
    assert len(fig.axes) == 6                                              # (a) and (b) per precision
    assert [ax.get_ylabel().split(":")[0] for ax in fig.axes[::2]] == ["fp64", "fp32", "fp16"]
    texts = [t.get_text() for ax in fig.axes[2:4] for t in ax.texts]
    assert texts == ["no fp32 SpMV rows in this run's raw results"] * 2
    cpu = {**config.load_gpu("cpu"), "l2_MB": 1}
    empty = fig6.figure(fig6.data(scale_rows(SCALE_SPEEDUPS), cpu), cpu, "caption", ["fp64", "fp16"])
    assert "(no tensor cores in fp16)" in empty.axes[1].texts[0].get_text()


def test_gemv_matrix_size_takes_the_element_size():
    base = [{"kernel": "gemv", "impl": i, "unit": u, "role": r, "problem": "n=512", "rows": 512, "cols": 512,
             "t_median_s": 1e-4, "metric": "GB/s", "value": 1.0}
            for i, u, r in (("cublas", "cuda_core", "cuBLAS"), ("mma", "tensor_core", "DMMA"))]
    d = gemv.data(pd.concat([raw(base), raw(base).assign(precision="fp16")]), L2_1MB).set_index(["precision", "unit"])
    assert d.loc[("fp64", "cuda_core"), "matrix_MB"] == 2.0 and d.loc[("fp16", "cuda_core"), "matrix_MB"] == 0.5
    assert d.loc[("fp64", "cuda_core"), "larger_than_L2"] and not d.loc[("fp16", "cuda_core"), "larger_than_L2"]


def test_roofline_per_precision_takes_each_precisions_peaks():
    d = fig2.data(STENCILS, config.load_gpu("h100"), ["fp64", "fp32", "fp16"])
    ceilings = d[d["item"] == "ceiling"].set_index(["precision", "unit"])["GFLOPs"]
    assert ceilings[("fp32", "tensor_core")] == 494.5e3 and ceilings[("fp16", "cuda_core")] == 133.8e3
    kernels = d[d["item"] == "kernel"].set_index(["precision", "label"])
    assert kernels.loc[("fp16", "SCALE"), "intensity_FLOP_per_B"] == 1 / 4
    assert ("fp32", "2d5pt t=3 TC") in kernels.index and ("fp64", "2d5pt t=3 TC") in kernels.index
    cpu = fig2.data(STENCILS, config.load_gpu("cpu"), ["fp32"])
    assert set(cpu["unit"]) == {"cuda_core"} and (cpu["note"] == "no tensor cores in fp32").all()
    fig = fig2.figure(d, config.load_gpu("h100"), "caption", ["fp64", "fp32", "fp16"])
    assert len(fig.axes) == 3


def test_compare_stacks_a_row_per_gpu_and_precision_and_a_roofline_per_precision():
    two = pd.concat([scale_rows(SCALE_SPEEDUPS), scale_rows(SCALE_SPEEDUPS).assign(precision="fp16")])
    panels = [("h100", fig6.data(two, L2_1MB)), ("a100", fig6.data(scale_rows(SCALE_SPEEDUPS), L2_1MB))]
    fig = compare.figure(fig6, panels)
    labels = [ax.get_xlabel().split("\n")[-1] for ax in fig.axes]
    assert labels[:2] == ["h100 fp64: test GPU", "h100 fp16: test GPU"] and labels[2] == "a100 fp64: test GPU"
    assert fig.axes[3].texts[0].get_text() == "a100 fp16: no rows in this precision"
    fp16 = compare.figure(fig6, panels, precision="fp16")                # the report's: a figure per precision
    assert [ax.get_xlabel().split("\n")[-1] for ax in fp16.axes] == ["h100: test GPU"]   # a100 has no fp16 row
    assert fp16.texts[-1].get_text().endswith("a100: no fp16 rows") and fp16.get_suptitle() == fig6.TITLE + ", fp16"
    roofs = compare.rooflines([(g, fig2.data(STENCILS, config.load_gpu(g), ["fp64", "fp32"])) for g in ("a100", "h200")])
    assert [ax.get_ylabel() for ax in roofs.axes] == ["fp64: attainable GFLOP/s", "fp32: attainable GFLOP/s"]


def test_stencil_legend_of_five_series_stays_inside_the_figure(tmp_path):
    series = (("cc_naive", "cuda_core", "Brick", 1), ("tc_twin", "cuda_core", "ConvStencil twin", 3),
              ("cc_tb", "cuda_core", "EBISU", 3), ("tc", "tensor_core", "ConvStencil", 3),
              ("tc_sparse", "tensor_core", "SPIDER/SparStencil", 3))
    rows = raw([{"kernel": "stencil", "impl": impl, "unit": unit, "role": role, "problem": p, "depth": d,
                 "domain": "10240x10240", "steps": 12, "t_median_s": 1e-3, "metric": "GStencil/s", "value": 100.0,
                 "precision": "fp32"} for p in ("2d5pt", "2d9pt") for impl, unit, role, d in series])
    gpu = config.load_gpu("h100")
    fig = fig8.figure(fig8.data(rows, gpu), gpu, "caption", ["fp32"])
    (legend,) = [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert len(legend.get_texts()) == 5
    save_figure(fig, tmp_path / "f.pdf", tmp_path / "f.png")
    ink = np.asarray(Image.open(tmp_path / "f.png").convert("L")) < 200
    assert not ink[:, :5].any() and not ink[:, -5:].any()   # nothing drawn at the saved image's edges
