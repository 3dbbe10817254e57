"""The paper's claims on synthetic raw rows: rows of known noise give each verdict (SUPPORTED,
LEVEL, CONTRADICTED, INCONCLUSIVE), C1 on twin pairs only with its filters, N/A without tensor
cores, NO DATA, the surrogate label, reproducible intervals and strict JSON."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from membound.analysis import claims
from membound.analysis.claims import pairs, report, verdicts
from membound.matrices.table2 import size_mb
from membound.run import config, measure

FIX = Path(__file__).parent / "fixtures" / "claims"
H100 = config.load_gpu("h100")       # alpha = 67/34, eq. 23 bound 1.327; L2 50 MB; B 3.35 TB/s
CPU = config.load_gpu("cpu")         # no FP64 matrix unit
STENCILS = {f"s{i}": {"shape": "star", "dims": 2, "radius": 1, "depth": 3} for i in range(8)}   # I = 15/8
STENCILS["2d49pt"] = {"shape": "box", "dims": 2, "radius": 3, "depth": 3}                       # compute-bound
BIG = {"rows": 1_000_000, "cols": 1_000_000, "nnz": 5_000_000}    # 76 MB > the 50 MB L2
SMALL = {"rows": 1_000, "cols": 1_000, "nnz": 10_000}
MARGIN, FRACTION = 0.02, 0.6
N_BIG = 2**28                                                      # SCALE: 4 GiB working set
T_DRAM = 16 * N_BIG / 3.0e12                                       # 3.0 TB/s: DRAM-bound (90% of B)


def _row(kernel, impl, unit, role, problem, t, rep=0, **kw):
    return {"kernel": kernel, "impl": impl, "unit": unit, "role": role, "problem": problem, "t_median_s": t, "rep": rep,
            "source": "synthetic", "device": "GPU X", "host": "node1", "date": "2026-01-02T03:04:05Z", **kw}


def scale(n, t_cc, t_tc, rep=0, t_twin=None):
    kw = {"n": n, "work_items": n, "rep": rep}
    rows = [_row("scale", "cuda_core", "cuda_core", "STREAM", f"n={n}", t_cc, **kw),
            _row("scale", "tensor_core", "tensor_core", "STREAM", f"n={n}", t_tc, **kw)]
    if t_twin is not None:
        rows.append(_row("scale", "tensor_core_twin", "cuda_core", "STREAM twin", f"n={n}", t_twin, **kw))
    return rows


def spmv(name, t_cc, t_tc, shape=SMALL, source="real", rep=0, t_twin=None):
    kw = {**shape, "source": source, "code": "D1", "work_items": shape["nnz"], "rep": rep}
    return [_row("spmv", "cusparse_csr", "cuda_core", "cuSPARSE", name, t_cc, **kw),
            _row("spmv", "dasp_tc", "tensor_core", "DASP", name, t_tc, **kw)] + (
        [_row("spmv", "dasp_tc_twin", "cuda_core", "DASP twin", name, t_twin, **kw)] if t_twin else [])


def stencil(name, t_cc, t_tc, depth=3, depth_tc=None, rep=0, t_twin=None, n=10**8):
    kw = {"n": n, "domain": "10000x10000", "steps": 6, "work_items": 6 * n, "rep": rep}
    rows = [_row("stencil", "cc_naive", "cuda_core", "Brick", name, 10 * t_cc, depth=1, **kw),
            _row("stencil", "cc_tb", "cuda_core", "EBISU", name, t_cc, depth=depth, **kw),
            _row("stencil", "tc", "tensor_core", "ConvStencil", name, t_tc, depth=depth_tc or depth, **kw)]
    if t_twin is not None:
        rows.append(_row("stencil", "tc_twin", "cuda_core", "ConvStencil twin", name, t_twin, depth=depth_tc or depth, **kw))
    return rows


def frame(*groups):
    return pd.DataFrame([r for g in groups for r in g]).reindex(columns=measure.ROW_COLUMNS)


def check(rows, gpu=H100, margin=MARGIN, precision="fp64"):
    """The result and, by id, the claims of `precision` (synthetic rows without the column are fp64)."""
    result = claims.check(rows, gpu, STENCILS, margin, FRACTION)
    return result, {c["id"]: c for c in result["claims"] if c["precision"] == precision}


def noisy(true_ratio, sigma, problems=8, reps=5, seed=0):
    """SpMV, SCALE and stencil rows whose t_TC/t_CC is `true_ratio` times log-normal noise of
    standard deviation `sigma` per problem and repetition (t_CC itself noisy too)."""
    rng = np.random.default_rng(seed)
    groups = []
    for p in range(problems):
        for r in range(reps):
            t_cc = 1.0 + 0.01 * rng.standard_normal()
            t_tc = t_cc * true_ratio * np.exp(sigma * rng.standard_normal())
            groups += [spmv(f"m{p}", t_cc, t_tc, BIG, rep=r), scale(2**(23 + p), t_cc, t_tc, rep=r),
                       stencil(f"s{p}", t_cc, t_tc, rep=r)]
    return frame(*groups)


@pytest.mark.parametrize("true_ratio, sigma, verdict", [
    (1.10, 0.01, "SUPPORTED"),       # CUDA cores 10% faster, 1% noise
    (1.00, 0.01, "LEVEL"),           # equal, 1% noise: the interval within 1 +- 2%
    (0.90, 0.01, "CONTRADICTED"),    # tensor cores 10% faster
    (1.00, 0.20, "INCONCLUSIVE"),    # equal but 20% noise: the interval straddles 1 beyond the margin
    (1.01, 0.002, "LEVEL"),          # CUDA cores 1% faster beyond noise, yet within the margin: level
])
def test_known_noise_gives_each_verdict(true_ratio, sigma, verdict):
    _, c = check(noisy(true_ratio, sigma))
    for cid in ("C2", "C3", "C4"):
        assert c[cid]["verdict"] == verdict, cid
        assert c[cid]["n"] == 40 and c[cid]["problems"] == 8
        assert c[cid]["ci_low"] <= c[cid]["estimate"] <= c[cid]["ci_high"]
        assert c[cid]["ci_low"] < true_ratio < c[cid]["ci_high"] or sigma < 0.01


def test_interval_covers_the_truth_and_narrows_with_repetitions():
    one, five = (verdicts.interval(pairs.pairs(noisy(1.05, 0.05, reps=r), H100, STENCILS).query("kernel == 'spmv'"),
                                 "ratio") for r in (1, 5))
    assert one["ci_low"] < 1.05 < one["ci_high"] and five["ci_low"] < 1.05 < five["ci_high"]
    assert five["ci_high"] - five["ci_low"] < one["ci_high"] - one["ci_low"]


def test_intervals_are_reproducible_and_rep_defaults_to_zero():
    rows = noisy(1.05, 0.05, reps=1)
    a, b = check(rows)[1]["C3"], check(rows.drop(columns="rep"))[1]["C3"]
    assert (a["estimate"], a["ci_low"], a["ci_high"]) == (b["estimate"], b["ci_low"], b["ci_high"])


def test_decide_against_a_reference():
    assert verdicts.decide(1.01, 1.05, 1.0, 0.02, "above") == "SUPPORTED"
    assert verdicts.decide(0.95, 0.99, 1.0, 0.02, "above") == "CONTRADICTED"
    assert verdicts.decide(0.99, 1.01, 1.0, 0.02, "below") == "LEVEL"
    assert verdicts.decide(1.0, 1.1, 1.33, 0.02, "below") == "SUPPORTED"
    assert verdicts.decide(1.35, 1.5, 1.33, 0.02, "below") == "CONTRADICTED"
    assert verdicts.decide(float("nan"), float("nan"), 1.0, 0.02, "above") == "NO DATA"


def test_c1_decided_by_dram_bound_twin_pairs_only():
    rows = frame(*[scale(N_BIG, T_DRAM, T_DRAM, rep=r, t_twin=T_DRAM * (1.01 + 1e-4 * r)) for r in range(3)],  # decides
                 scale(2**20, 1e-5, 1e-5, t_twin=2e-5),                            # fits in the L2
                 scale(2**27, 1.0, 0.5, t_twin=1.0),                               # twin at 2 GB/s: not DRAM-bound
                 stencil("2d49pt", 1.0, 0.5, t_twin=1.0),                          # compute-bound
                 spmv("fast_tc", 2.0, 1.0, BIG))                                   # algorithm pair: not C1's
    _, c = check(rows)
    c1 = c["C1"]
    assert c1["verdict"] == "SUPPORTED" and c1["pairs"] == [f"scale n={N_BIG}"]
    assert c1["estimate"] == pytest.approx(1.0101) and c1["reference"] == pytest.approx(2 - 2 / (1 + 67 / 34))
    why = c1["numbers"]["excluded"]
    assert why["scale n=1048576"].startswith("fits in L2") and why["stencil 2d49pt"] == "compute-bound (eq. 4)"
    assert why["scale n=134217728"].startswith("not DRAM-bound: 0% of B")
    assert c1["numbers"]["missing_twins"] == ["spmv dasp_tc"]
    cases = c1["cases"].set_index("problem")
    assert cases.loc[f"n={N_BIG}", "eq22_bound"] == pytest.approx(
        1 + (67 / 34 - 1) / (1 + 67 / 34 * (34 / 3.35) * 16))               # eq. 22 at I = 1/16


def test_c1_excludes_a_twin_whose_dram_bytes_differ_from_its_siblings():
    rows = frame(scale(N_BIG, T_DRAM, T_DRAM, t_twin=T_DRAM), scale(2**27, T_DRAM / 2, T_DRAM / 2, t_twin=T_DRAM / 2))
    dram = {("tensor_core", 28): 4.0e9, ("tensor_core_twin", 28): 4.04e9,     # +1%: a twin
            ("tensor_core", 27): 2.0e9, ("tensor_core_twin", 27): 2.1e9}      # +5%: not a twin
    counters = pd.DataFrame([{"tag": measure.launch_tag("scale", i, f"n={2**k}"), "part": "main", "dram_bytes": b,
                              "flops": 2**k} for (i, k), b in dram.items()])
    c1 = claims.check(rows, H100, STENCILS, MARGIN, FRACTION, counters)["claims"][0]
    assert c1["pairs"] == [f"scale n={N_BIG}"] and c1["numbers"]["twin_traffic_measured"] == 2
    assert c1["numbers"]["excluded"] == {"scale n=134217728": "not a twin: +5.0% DRAM bytes of its sibling's"}
    case = c1["cases"].set_index("problem").loc[f"n={N_BIG}"]
    assert case["twin_dram_ratio"] == pytest.approx(1.01) and case["I_achieved"] == pytest.approx(2**28 / 4.04e9)


def test_h100_twin_measurements_support_c1_and_level_c2_beyond_half_the_l2():
    """Rows measured on an H100 (tests/fixtures/claims/README.md): 5 repetitions of SCALE with its
    twin and of three stencils, and the ncu counters of SCALE and its twin."""
    rows = pd.read_csv(FIX / "h100_repeats.csv", keep_default_na=False, na_values=[""])
    counters = pd.read_csv(FIX / "h100_scale_twin_counters.csv")
    stencils = yaml.safe_load((Path(__file__).parents[1] / "config" / "config.yaml").read_text())["stencil"]["kernels"]
    result = claims.check(rows, H100, stencils, MARGIN, FRACTION, counters)
    c = {x["id"]: x for x in result["claims"] if x["precision"] == "fp64"}
    assert result["measured"]["repetitions"] == 5
    c1 = c["C1"]
    assert c1["verdict"] == "SUPPORTED" and c1["pairs"] == [f"scale n=2^{k}" for k in range(22, 29)]
    assert c1["numbers"]["missing_twins"] == ["stencil tc"] and c1["ci_high"] < 1.02
    assert (c1["cases"]["twin_dram_ratio"].dropna() - 1).abs().max() < 0.01     # the twin's traffic: within 1%
    parts = c["C2"]["numbers"]
    assert parts["beyond_half_L2"]["verdict"] == "LEVEL" and parts["beyond_half_L2"]["n"] == 35
    assert c["C4"]["numbers"]["tensor_cores_faster"] == ["2d49pt"]


def test_c1_contradicted_by_one_pair_beyond_the_bound_beyond_noise():
    t_twin = 0.0125         # stencil s0, 10^9 points, 2 launches of 16 B per point: 2.56 TB/s, DRAM-bound
    rows = frame(*[scale(N_BIG, T_DRAM, T_DRAM, rep=r, t_twin=T_DRAM) for r in range(3)],
                 *[stencil("s0", 1.0, t_twin / 1.5, n=10**9, rep=r, t_twin=t_twin * (1 + 0.001 * r)) for r in range(3)])
    _, c = check(rows)
    c1 = c["C1"]
    assert c1["numbers"]["deciding_pairs"] == 2 and c1["ci_low"] < c1["reference"]   # the pooled interval alone: not beyond
    assert c1["verdict"] == "CONTRADICTED" and c1["numbers"]["exceeding"] == ["s0"]
    assert c1["numbers"]["max_speedup"] == pytest.approx(1.5, rel=2e-3)


def test_c1_lists_pairs_faster_than_eq22_allows_beyond_the_margin():
    rows = frame(*[scale(N_BIG, T_DRAM, T_DRAM / 1.1, rep=r, t_twin=T_DRAM * (1 + 0.001 * r)) for r in range(2)])
    c1 = check(rows)[1]["C1"]
    assert c1["verdict"] == "SUPPORTED"                                      # 1.1 is below eq. 23's 1.327...
    assert c1["numbers"]["above_eq22_beyond_margin"] == [f"scale n={N_BIG}"]  # ...but far above eq. 22's 1.003 at I = 1/16


def test_c1_without_twins_is_no_data_and_names_what_is_missing():
    _, c = check(frame(scale(N_BIG, T_DRAM, T_DRAM), spmv("big", 1.0, 1.2, BIG)))
    assert c["C1"]["verdict"] == "NO DATA" and c["C1"]["pairs"] == []
    assert c["C1"]["numbers"]["missing_twins"] == ["scale tensor_core", "spmv dasp_tc"]


def test_c2_takes_the_worse_side_of_half_the_l2():
    rows = frame(*[scale(2**k, 1.0, 1.2 + 0.001 * r, rep=r) for k in range(14, 19) for r in range(3)],
                 *[scale(2**k, 1.0, 0.995 + 0.001 * r, rep=r) for k in range(22, 27) for r in range(3)])
    _, c = check(rows)
    n = c["C2"]["numbers"]
    assert n["within_half_L2"]["verdict"] == "SUPPORTED" and n["beyond_half_L2"]["verdict"] == "LEVEL"
    assert c["C2"]["verdict"] == "LEVEL" and n["within_half_L2"]["sizes"] == 5
    assert report.brief(c["C2"]) == ("within half the L2 1.2 [1.2, 1.2] SUPPORTED; "
                                     "beyond half the L2 0.996 [0.996, 0.996] LEVEL")
    few = check(frame(*[scale(2**k, 1.0, 1.2 + 0.001 * r, rep=r) for k in range(14, 18) for r in range(3)]))[1]["C2"]
    assert few["verdict"] == "INCONCLUSIVE" and few["numbers"]["within_half_L2"]["ci_high"] == float("inf")  # 4 sizes


def test_c3_uses_table2_size_against_the_l2():
    _, c = check(frame(*[spmv("big", 1.0, 0.9 + 0.001 * r, BIG, rep=r) for r in range(3)], spmv("small", 1.0, 0.5)))
    assert c["C3"]["verdict"] == "CONTRADICTED" and c["C3"]["pairs"] == ["spmv big"]
    cases = c["C3"]["cases"].set_index("problem")
    assert cases.loc["big", "size_MB"] == pytest.approx(size_mb(**BIG)) and not cases.loc["small", "larger_than_L2"]
    _, c = check(frame(spmv("small", 1.0, 0.5)))
    assert c["C3"]["verdict"] == "NO DATA"


def test_c3_splits_into_the_tensor_core_effect_and_the_format_effect():
    """t_TC/t_CC = t_TC/t_twin x t_twin/t_CC: here the twin (the DASP format on CUDA cores) is as fast as
    the tensor cores and 25% faster than cuSPARSE, so the gain is the format's, not the MMAs'."""
    rng = np.random.default_rng(3)
    rows = frame(*[spmv(f"m{i}", 1.0, 0.75 * n1, BIG, source="surrogate", rep=r, t_twin=0.75 * n2)
                   for i in range(5) for r in range(3) for n1, n2 in [np.exp(0.005 * rng.standard_normal(2))]])
    _, c = check(rows)
    n = c["C3"]["numbers"]
    assert c["C3"]["verdict"] == "CONTRADICTED" and n["tensor_core_effect"]["verdict"] == "LEVEL"
    assert n["format_effect"]["verdict"] == "CONTRADICTED" and n["format_effect"]["estimate"] == pytest.approx(0.75, 0.01)
    cases = c["C3"]["cases"]                                        # each matrix's ratio is the product of its factors
    assert (cases["t_TC/t_twin"] * cases["t_twin/t_CC"]).to_numpy() == pytest.approx(cases["ratio"].to_numpy(), rel=1e-3)
    assert n["tensor_core_effect"]["ci_low"] < 1 < n["tensor_core_effect"]["ci_high"]
    assert c["C3"]["summary"].startswith("on SURROGATE matrices") and "surrogate" in c["C3"]["title"]
    assert list(c["C3"]["cases"][["t_TC/t_twin", "t_twin/t_CC"]].notna().all()) == [True, True]
    assert "t_TC/t_twin" in report.brief(c["C3"]) and "surrogate" in report.brief(c["C3"])
    _, without = check(frame(*[spmv(f"m{i}", 1.0, 0.75, BIG, rep=r) for i in range(3) for r in range(2)]))
    assert "format_effect" not in without["C3"]["numbers"] and "surrogate" not in without["C3"]["summary"]


FIVE = [stencil("s0", 1.0, 0.75), *[stencil(f"s{i}", 1.0, t) for i, t in ((1, 1.1), (2, 1.3), (3, 1.5), (4, 1.7))]]


def test_c4_is_the_median_over_stencils_at_equal_depth():
    _, c = check(frame(*FIVE, stencil("s5", 1.0, 0.5, depth=3, depth_tc=1)))
    c4 = c["C4"]
    assert c4["estimate"] == pytest.approx(1.3) and c4["problems"] == 5
    assert (c4["ci_low"], c4["ci_high"]) == pytest.approx((0.75, 1.7)) and c4["verdict"] == "INCONCLUSIVE"  # [min, max]
    assert c4["numbers"]["tensor_cores_faster"] == ["s0"] and c4["numbers"]["unequal_depth_excluded"] == ["s5"]


def test_c4_at_every_depth_both_kernels_ran_marks_a_verdict_that_depends_on_it():
    """Tensor cores 30% slower at Table 3's depth (3) and at depth 1, 20% faster at depth 5: C4 keeps
    Table 3's verdict and says it depends on the depth; depth 7, with 4 stencils, has no interval."""
    sweep = [r for i in range(5) for t, ratio in ((1, 1.3), (5, 0.8)) for r in stencil(f"s{i}", 1.0, ratio, depth=t)[1:]]
    few = [r for i in range(4) for r in stencil(f"s{i}", 1.0, 1.3, depth=7)[1:]]
    _, c = check(frame(*[stencil(f"s{i}", 1.0, 1.3 + 0.01 * i) for i in range(5)], sweep, few))
    c4 = c["C4"]
    assert c4["verdict"] == "SUPPORTED" and c4["numbers"]["depth_dependent"]
    assert {d: e["verdict"] for d, e in c4["numbers"]["by_depth"].items()} == {
        1: "SUPPORTED", 3: "SUPPORTED", 5: "CONTRADICTED", 7: "INCONCLUSIVE"}
    assert report.brief(c4).endswith("DEPTH-DEPENDENT: SUPPORTED at 1,3, CONTRADICTED at 5; too few stencils at 7")
    assert "depth 5 CONTRADICTED 0.8 [0.8, 0.8]" in c4["summary"]
    _, same = check(frame(*[stencil(f"s{i}", 1.0, 1.3 + 0.01 * i) for i in range(5)]))
    assert not same["C4"]["numbers"]["depth_dependent"]
    assert report.brief(same["C4"]).endswith("SUPPORTED at every depth (3)")


def test_the_depth_sweep_leaves_c1_and_c4_at_the_role_depth():
    """Rows of the fusion sweep (cc_tb and tc at other depths) neither pair nor count twice."""
    sweep = [r for t in (1, 2, 4) for r in stencil("s0", 0.1 * t, 0.1, depth=t)[1:]]
    base = stencil("s0", 1.0, 0.75, t_twin=2.0)
    _, swept = check(frame(base, sweep, *FIVE[1:]))
    _, alone = check(frame(base, *FIVE[1:]))
    assert swept["C4"]["estimate"] == alone["C4"]["estimate"] == pytest.approx(1.3)
    assert swept["C1"]["numbers"]["twin_pairs"] == alone["C1"]["numbers"]["twin_pairs"] == 1


def test_without_tensor_cores_every_verdict_is_not_applicable_and_says_why():
    result, c = check(noisy(1.1, 0.01, problems=5, reps=2), gpu=CPU)
    assert {x["verdict"] for x in c.values()} == {"N/A"}
    assert c["C3"]["on_these_timings"] == "SUPPORTED"
    md = report.markdown(result)
    assert "NO TENSOR CORES" in md and "on these timings" in md


def test_surrogate_matrices_are_labelled_in_json_and_on_top_of_the_markdown():
    result, c = check(frame(scale(2**20, 1.0, 1.1), spmv("big", 1.0, 1.2, BIG, source="surrogate")))
    assert result["surrogate"] and result["matrix_source"] == "surrogate" and c["C3"]["sources"] == ["surrogate"]
    assert "SURROGATE MATRICES" in report.markdown(result).split("| claim")[0]


def test_json_is_strict_and_has_the_fields_of_every_claim():
    result, _ = check(noisy(1.1, 0.01, problems=3, reps=2))
    data = json.loads(report.to_json(result))
    assert [(c["id"], c["precision"]) for c in data["claims"]] == [
        (cid, p) for cid in ("C1", "C2", "C3", "C4", "C4s", "C5", "C5 summary") for p in ("fp64", "fp32", "fp16", "bf16")]
    for c in data["claims"]:
        assert set(c) >= {"id", "precision", "verdict", "estimate", "ci_low", "ci_high", "n", "margin", "pairs", "cases",
                          "sources"}
    c3 = data["claims"][8]
    assert c3["id"] == "C3" and c3["pairs"] == ["spmv m0", "spmv m1", "spmv m2"] and c3["margin"] == MARGIN
    assert data["measured"]["repetitions"] == 2 and data["statistics"]["interval"] == verdicts.METHOD
    assert data["measured"]["slurm_jobs"] == []


def test_write_gives_both_files(tmp_path):
    result, _ = check(frame(scale(2**20, 1.0, 1.1)))
    claims.write(result, tmp_path / "claims.json", tmp_path / "claims.md")
    assert json.loads((tmp_path / "claims.json").read_text())["device_spec"] == H100["name"]
    assert (tmp_path / "claims.md").read_text().startswith("# Claims of paper 000 checked on NVIDIA H100")


def test_two_rows_for_one_side_of_a_pair_is_an_error():
    with pytest.raises(ValueError, match=r"more than one tensor_core row \(tensor_core\) for scale n=1024 rep 0"):
        check(frame(scale(1024, 1.0, 1.0), scale(1024, 1.0, 1.0)[1:]))


# ------------------------------------------------------------------------------------ precisions


def in_precision(precision, *groups):
    """Synthetic rows of `groups` stored in `precision`."""
    return frame(*groups).assign(precision=precision)


def test_each_precision_is_checked_on_its_own_rows():
    """CUDA cores 10% faster in fp64, tensor cores 10% faster in fp32: each precision gets its verdict
    (the fp64 matrices beyond the L2 fit in it in fp32, so C3 has no matrix there)."""
    rows = pd.concat([noisy(1.1, 0.01, problems=5, reps=3),
                      noisy(0.9, 0.01, problems=5, reps=3, seed=1).assign(precision="fp32")], ignore_index=True)
    result, fp64 = check(rows)
    _, fp32 = check(rows, precision="fp32")
    _, fp16 = check(rows, precision="fp16")
    assert [fp64[c]["verdict"] for c in ("C2", "C3", "C4")] == ["SUPPORTED"] * 3
    assert [fp32[c]["verdict"] for c in ("C2", "C4")] == ["CONTRADICTED"] * 2
    assert fp32["C3"]["verdict"] == "NO DATA" and fp32["C3"]["numbers"]["fitting_in_L2"] == 5   # BIG in fp32: 49.6 MB
    _, only_scale = check(in_precision("fp32", scale(2**20, 1.0, 1.1)), precision="fp32")
    assert only_scale["C4"]["verdict"] == "NO DATA" and only_scale["C4"]["summary"] == "no fp32 stencil rows in this run's raw results"
    assert {c["verdict"] for c in fp16.values()} == {"NO DATA"}
    assert fp16["C3"]["summary"] == "no fp16 rows in this run's raw results"
    assert result["measured"]["precisions"] == ["fp32", "fp64"]
    md = report.markdown(result)
    assert re.search(r"\| C3 +\| fp32 +\| NO DATA +\|", md) and "## C3 fp16 (Sec. 5.4, Figure 7)" in md


def test_c1_takes_each_precisions_eq23_bound_from_the_spec():
    """A DRAM-bound SCALE twin pair 1.5x faster on tensor cores: beyond fp64's bound (1.327, alpha =
    67/34), within TF32's (1.761, alpha = 494.5/67); the bounds come from config/gpus/h100.yaml."""
    n = N_BIG // 2                                                    # fp32: the same 4 GiB working set
    t = 8 * n / 3.0e12
    groups = [scale(n, t, t / 1.5, rep=r, t_twin=t * (1 + 0.001 * r)) for r in range(3)]
    _, fp64 = check(frame(*groups))
    _, fp32 = check(in_precision("fp32", *groups), precision="fp32")
    assert fp64["C1"]["reference"] == pytest.approx(2 - 2 / (1 + 67 / 34))
    assert fp32["C1"]["reference"] == pytest.approx(2 - 2 / (1 + 494.5 / 67))
    assert fp32["C1"]["numbers"]["alpha"] == pytest.approx(494.5 / 67)
    assert fp32["C1"]["verdict"] == "SUPPORTED" and fp64["C1"]["verdict"] == "CONTRADICTED"


def test_sizes_and_the_l2_split_follow_the_element_size():
    """The same n: 8n bytes in fp64 beyond half the 50 MB L2, 2n bytes in fp16 within it."""
    n = 2**22                                                         # 32 MiB in fp64, 8 MiB in fp16
    fp64 = pairs.pairs(frame(scale(n, 1.0, 1.1)), H100, STENCILS)
    fp16 = pairs.pairs(in_precision("fp16", scale(n, 1.0, 1.1)), H100, STENCILS)
    assert fp64["size_MB"].iloc[0] == 32 and fp16["size_MB"].iloc[0] == 8 and fp16["precision"].iloc[0] == "fp16"
    assert fp16["working_set_MB"].iloc[0] == 16 and fp16["I"].iloc[0] == 1 / 4
    _, c = check(in_precision("fp16", scale(n, 1.0, 1.1)), precision="fp16")
    assert c["C2"]["cases"]["within_half_L2"].all()


def test_a_precision_without_tensor_cores_is_not_applicable():
    cpu = {**CPU, "peak_TFLOPs": {**CPU["peak_TFLOPs"], "fp64": {"cuda_core": 0.08, "tensor_core": 0.16}}}
    rows = pd.concat([noisy(1.1, 0.01, problems=5, reps=2),
                      noisy(1.1, 0.01, problems=5, reps=2).assign(precision="fp32")])
    result, fp64 = check(rows, gpu=cpu)
    _, fp32 = check(rows, gpu=cpu, precision="fp32")
    assert fp64["C3"]["verdict"] == "SUPPORTED" and fp32["C3"]["verdict"] == "N/A"
    assert result["no_tensor_cores"] == ["fp32", "fp16", "bf16"] and "NO TENSOR CORES in fp32, fp16, bf16" in report.markdown(result)


def test_c4_per_precision_sets_each_precisions_stencils_against_cuda_core_temporal_blocking():
    """Stencil rows in fp32 and fp16 (issue 24): C4 per precision on that precision's rows only, each
    case's I = tK/D from the precision's element size (fp16 twice fp32's)."""
    reps = [(r, 1 + 0.01 * r) for r in range(3)]
    rows = pd.concat([in_precision(p, *[stencil(f"s{i}", 1.0 * j, t * j, rep=r) for i in range(5) for r, j in reps])
                      for p, t in (("fp32", 1.4), ("fp16", 0.6))],
                     ignore_index=True)
    _, fp32 = check(rows, precision="fp32")
    _, fp16 = check(rows, precision="fp16")
    _, fp64 = check(rows)
    assert fp32["C4"]["estimate"] == pytest.approx(1.4) and fp32["C4"]["verdict"] == "SUPPORTED"
    assert fp16["C4"]["estimate"] == pytest.approx(0.6) and fp16["C4"]["verdict"] == "CONTRADICTED"
    assert fp16["C4"]["numbers"]["tensor_cores_faster"] == [f"s{i}" for i in range(5)]
    i32, i16 = (c["C4"]["cases"].set_index("problem")["I"] for c in (fp32, fp16))
    assert i32["s0"] == pytest.approx(3 * 5 / 4) and i16["s0"] == pytest.approx(3 * 5 / 2)
    assert fp64["C4"]["verdict"] == "NO DATA"



def test_the_stencils_field_copies_stay_out_of_c2_and_figure_6():
    from membound.plots import fig6

    sweep = [scale(2**k, 1.0, 0.995 + 0.001 * r, rep=r) for k in range(22, 27) for r in range(3)]
    copies = [[{**row, "problem": row["problem"] + " x12", "steps": 12} for row in scale(2**25, 1.0, 2.0, rep=r)]
              for r in range(3)]                            # tensor cores twice as slow: C2 would turn SUPPORTED
    rows = frame(*sweep, *copies)
    assert len(measure.sweep_rows(rows)) == len(frame(*sweep))
    _, c = check(rows)
    assert c["C2"]["verdict"] == "LEVEL" and c["C2"]["numbers"]["beyond_half_L2"]["sizes"] == 5
    plotted = fig6.data(rows.assign(value=1.0 / rows["t_median_s"], precision="fp64"), H100)
    assert set(plotted["n"]) == {2**k for k in range(22, 27)} and len(plotted) == 10
