"""STREAM SCALE in every precision: each implementation per backend against the reference within the
format's bound, the MMA operand layouts and the TF32 rounding of the emulation, checks that fail, the
CSV schema."""

import re

import numpy as np
import pandas as pd
import pytest

from membound.kernels import harness, scale, source_path
from membound.model import precision
from membound.run import measure

PRECISIONS = precision.PRECISIONS
RAGGED = [1, 31, 1000, 4097, 3 * scale.chunk("fp16") + 77]
CPU = [i for i in scale.IMPLS if i.backend == "cpu"]
CUDA = [i for i in scale.IMPLS if i.backend == "cuda"]


def checked(impl, backend, n, p, seed=0):
    """The relative error of one prepared case, after the harness's check."""
    case = scale.prepare(impl, backend, n, np.random.default_rng(seed), precision=p)
    out = case.output(case.run())
    assert out.dtype == precision.fmt(p).dtype
    return measure.check(precision.decode(out, p), case.reference, case.tol, case.what), case


@pytest.mark.parametrize("p", PRECISIONS)
@pytest.mark.parametrize("impl", CPU, ids=lambda i: i.name)
@pytest.mark.parametrize("n", RAGGED)
def test_cpu_impls_meet_the_bound_of_their_format(impl, n, p):
    err, case = checked(impl, "cpu", n, p, seed=n)
    assert case.precision == p and case.tol == pytest.approx(
        precision.dot_tolerance(p, impl.unit, 1, case.reference, case.reference))


@pytest.mark.parametrize("p", PRECISIONS)
def test_each_lane_gets_its_values_back_from_the_mma(p):
    mma, a_at, d_at, b_over_q = scale.layout(p)
    m, n, k = precision.fmt(p).mma.shape
    values = np.arange(1.0, mma.size + 1)
    tiles = np.zeros((mma.max() + 1, m, k))
    tiles[mma, *a_at] = values
    assert np.count_nonzero(tiles) == mma.size                           # every element has its own A entry
    assert np.array_equal((tiles @ (2.5 * b_over_q))[mma, *d_at], 2.5 * values)
    assert b_over_q.shape == (k, n)


def test_the_b_operands_are_the_permutation_and_the_padded_identity():
    p = scale.layout("fp32")[3]
    assert [int(np.flatnonzero(row)[0]) for row in p] == [0, 2, 4, 6, 1, 3, 5, 7]   # k < 4: 2k; k >= 4: 2(k-4)+1
    assert np.array_equal(scale.layout("fp16")[3], np.vstack([np.eye(8), np.zeros((8, 8))]))
    assert np.array_equal(scale.layout("fp64")[3], np.repeat(np.eye(4), 2, axis=1))


def test_tf32_rounding_is_to_nearest_ties_away_with_10_bits():
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11), 1 + 2**-12, 1 + 2**-10 + 2**-11 - 2**-23,
                  np.inf, -np.inf, 3.0], np.float32)
    r = precision.tc_operand(x, "fp32")
    assert r.dtype == np.float32
    assert r.tolist() == [1 + 2**-10, 1 + 2**-9, -(1 + 2**-10), 1.0, 1 + 2**-10, np.inf, -np.inf, 3.0]
    assert np.isnan(precision.tc_operand(np.float32([np.nan]), "fp32")[0])
    b = precision.quantize(np.random.default_rng(1).uniform(-1, 1, 1000), "fp32")
    assert (precision.tc_operand(b, "fp32").view(np.uint32) & 0x1FFF == 0).all()       # 13 bits dropped
    assert np.abs(precision.tc_operand(b, "fp32") / b - 1).max() <= 2.0**-11             # tc_operand_u
    for p in ("fp64", "fp16"):
        assert np.array_equal(precision.tc_operand(b.astype(precision.fmt(p).dtype), p), b.astype(precision.fmt(p).dtype))


def test_emulated_tf32_product_is_the_rounded_operands_product():
    rng = np.random.default_rng(3)
    b, q = precision.quantize(rng.uniform(-1, 1, 4096), "fp32"), np.float32(1.2345678)
    a = np.full(b.size, np.nan, np.float32)
    scale.cpu_runner("numpy_mma", a, b, q, "fp32")()
    tf = precision.tc_operand
    assert np.array_equal(a, tf(q, "fp32") * tf(b, "fp32"))            # exact in fp32: 11-bit significands
    assert not np.array_equal(a, q * b)                                  # so it differs from the fp32 product


def tampered(layout):
    """`layout` with the D positions of lanes 0 and 1 swapped: a wrong lane mapping."""
    def swapped(p):
        mma, a_at, (rows, cols), b = layout(p)
        v = mma.size // 32
        perm = np.r_[v:2 * v, 0:v, 2 * v:mma.size]
        return mma, a_at, (rows[perm], cols[perm]), b
    return swapped


@pytest.mark.parametrize("p", PRECISIONS)
def test_a_tampered_emulation_fails_its_check(monkeypatch, p):
    impl = next(i for i in CPU if i.name == "numpy_mma")
    checked(impl, "cpu", 4096, p)
    monkeypatch.setattr(scale, "layout", tampered(scale.layout))
    with pytest.raises(measure.CheckError, match=f"scale numpy_mma {p} n=4096"):
        checked(impl, "cpu", 4096, p)


def test_sizes_every_step_keep_both_ends():
    assert scale.sizes_log2(20, 28, 4) == [20, 24, 28]
    assert scale.sizes_log2(20, 27, 4) == [20, 24, 27]
    assert scale.sizes_log2(10, 12) == [10, 11, 12] and scale.sizes_log2(5, 5, 3) == [5]


def test_counter_runs_take_every_step_of_the_sizes(tmp_path):
    from membound import families

    config = {"scale": {"log2_min": 14, "log2_max": 28}, "ncu": {"scale_log2_min": 20, "scale_log2_max": 28,
                                                                 "scale_log2_step": 4},
              "stencil": {"domain_2d": [10240, 10240], "domain_3d": [512, 512, 512], "kernels": {}}}
    assert families._scale_args(config, None, True, 0) == "--log2-min 20 --log2-max 28 --log2-step 4"
    assert families._scale_args(config, None, False, 0) == "--log2-min 14 --log2-max 28"
    config["stencil"]["kernels"] = {"a": {"dims": 3}, "b": {"dims": 2}, "c": {"dims": 2}}
    config["stencil"]["steps"] = 12
    assert families._scale_args(config, None, False, 0) == ("--log2-min 14 --log2-max 28 --sizes 104857600 134217728"
                                                            " --launches 12")
    out = tmp_path / "s.csv"
    scale.main(["--backend", "cpu", "--log2-min", "8", "--log2-max", "12", "--log2-step", "3", "--warmup", "0",
                "--reps", "1", "--out", str(out)])
    assert list(pd.read_csv(out).problem.unique()) == ["n=2^8", "n=2^11", "n=2^12"]
    scale.main(["--backend", "cpu", "--log2-min", "8", "--log2-max", "9", "--sizes", "300", "256", "300", "--launches",
                "3", "--warmup", "0", "--reps", "1", "--out", str(out)])     # the fields' copies: calls of 3 launches
    rows = pd.read_csv(out).drop_duplicates("problem").set_index("problem")
    assert list(rows.index) == ["n=2^8", "n=2^8 x3", "n=300 x3", "n=2^9"]
    assert rows.loc["n=300 x3", "steps"] == 3 and rows.loc["n=300 x3", "work_items"] == 900
    assert pd.isna(rows.loc["n=2^8", "steps"]) and "one timed call = 3 launches" in rows.loc["n=2^8 x3", "note"]
    for bad in (["--sizes", "0"], ["--sizes", "300", "--launches", "0"]):
        with pytest.raises(SystemExit):
            scale.main(["--backend", "cpu", "--log2-min", "8", "--log2-max", "9", *bad, "--out", str(out)])


def test_cli_cpu_writes_checked_rows_per_precision(tmp_path):
    out = tmp_path / "raw" / "scale.csv"
    scale.main(["--backend", "cpu", "--log2-min", "10", "--log2-max", "12", "--warmup", "1", "--reps", "3",
                "--precisions", *PRECISIONS, "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(frame.columns) == measure.ROW_COLUMNS
    assert sorted(set(zip(frame.impl, frame.precision))) == sorted((i.name, p) for i in CPU for p in PRECISIONS)
    assert list(frame.problem.unique()) == ["n=2^10", "n=2^11", "n=2^12"]
    assert (frame.value > 0).all() and (frame.reps == 3).all() and (frame.metric == "GB/s").all()
    assert frame.note.str.contains("checked: rel_err <= ").all()
    assert dict(zip(frame.impl, frame.role)) == {"numpy": "STREAM", "numpy_mma": "STREAM", "numpy_mma_twin": "STREAM twin"}
    assert dict(zip(frame.impl, frame.unit)) == {"numpy": "cuda_core", "numpy_mma": "tensor_core",
                                                 "numpy_mma_twin": "cuda_core"}
    for p, useful, acc in (("fp64", 8, "f64"), ("fp32", 8, "f32"), ("fp16", 16, "f32"), ("bf16", 16, "f32")):
        mma = frame[(frame.impl == "numpy_mma") & (frame.precision == p)]
        assert mma.note.str.contains(f"emulated on CPU: .*{re.escape(precision.fmt(p).mma.instruction)} .*{acc} accumulate.*1/{useful} useful").all()
    for row in frame.itertuples():
        assert row.value == pytest.approx(2 * precision.fmt(row.precision).bytes * row.n / row.t_median_s / 1e9)
        assert row.rel_err <= float(re.search(r"rel_err <= ([0-9.e+-]+)", row.note).group(1))


@pytest.mark.parametrize("p", PRECISIONS)
@pytest.mark.parametrize("wrong", ["unwritten_last", "scaled"])
def test_wrong_output_fails_and_writes_nothing(monkeypatch, tmp_path, wrong, p):
    def bad_runner(impl, a, b, q, prec):
        def run():
            a[:] = precision.store(precision.decode(b, prec) * q * (1 if wrong == "unwritten_last" else 1 + 2**-6), prec)
            if wrong == "unwritten_last":
                a[-1] = precision.nan(prec)
        return run

    monkeypatch.setattr(scale, "cpu_runner", bad_runner)
    out = tmp_path / "scale.csv"
    with pytest.raises(measure.CheckError, match=f"scale numpy {p} n=1024"):
        scale.main(["--backend", "cpu", "--log2-min", "10", "--log2-max", "10", "--warmup", "0", "--reps", "1",
                    "--precisions", p, "--out", str(out)])
    assert not out.exists() and not list(tmp_path.iterdir())


def test_every_cuda_impl_and_precision_has_its_kernel_in_scale_cu():
    defined = set(re.findall(r'extern "C" __global__ void (\w+)\(', source_path("scale.cu").read_text()))
    assert defined == {scale.kernel_name(i.name, p) for i in CUDA for p in i.precisions}
    assert scale.kernel_name("tensor_core", "fp64") == "scale_tensor_core"    # the counter rows' name


def test_sizes_keep_the_element_counts_and_bytes_follow_the_format():
    assert [scale.bytes_per_element(p) for p in PRECISIONS] == [16, 8, 4, 4]
    assert [scale.chunk(p) for p in PRECISIONS] == [128, 256, 512, 512]
    l2 = 8 * 2**20
    notes = {p: scale.prepare(CPU[0], "cpu", 2**20, np.random.default_rng(0), l2, p).notes for p in PRECISIONS}
    assert [any("fit in the L2" in s for s in notes[p]) for p in PRECISIONS] == [False, True, True, True]


def test_bad_size_range_is_one_line_error(tmp_path):
    with pytest.raises(SystemExit):
        scale.main(["--backend", "cpu", "--log2-min", "12", "--log2-max", "10", "--warmup", "0", "--reps", "1",
                    "--out", str(tmp_path / "s.csv")])


def test_problem_label():
    assert scale.problem(2**14) == "n=2^14" and scale.problem(1000) == "n=1000"


@pytest.mark.gpu
@pytest.mark.parametrize("p", PRECISIONS)
@pytest.mark.parametrize("impl", CUDA, ids=lambda i: i.name)
@pytest.mark.parametrize("n", RAGGED + [2**14, 2**20 + 3])
def test_gpu_impls_meet_the_bound_and_equal_their_cpu_counterpart(impl, n, p):
    """Each kernel's output is the CPU algorithm's, bit for bit: the products are exact in every
    accumulator and rounded once, so the MMA layouts and the TF32 rounding are checked exactly."""
    if reason := harness.skip_reason(impl, "cuda"):
        pytest.skip(reason)
    import cupy as cp

    _, case = checked(impl, "cuda", n, p, seed=n)
    rng = np.random.default_rng(n)                                   # prepare's draws, replayed
    q = float(precision.decode(precision.quantize([rng.uniform(0.5, 2.0)], p), p)[0])
    b = precision.quantize(cp.random.RandomState(int(rng.integers(2**63))).uniform(-1.0, 1.0, n), p)
    b = cp.asnumpy(b)                                                # drawn on the device (scale._arrays)
    a = np.full(n, precision.nan(p), b.dtype)
    scale.cpu_runner("numpy_mma" if impl.name == "tensor_core" else "numpy", a, b, q, p)()
    assert np.array_equal(cp.asnumpy(case.output(case.run())), a)


@pytest.mark.gpu
@pytest.mark.parametrize("p", PRECISIONS)
def test_gpu_offset_view_is_rejected(p):
    """The kernels load 16 bytes a lane: a view off the 16-byte boundary must not silently misread."""
    import cupy as cp

    base = cp.zeros(1001, precision.fmt(p).dtype)
    with pytest.raises(ValueError, match="16-byte"):
        scale.gpu_runner("cuda_core", cp.zeros(1000, base.dtype), base[1:], 2.0, p)


@pytest.mark.gpu
def test_gpu_cli_counters_mode(tmp_path):
    out = tmp_path / "scale.csv"
    scale.main(["--backend", "cuda", "--log2-min", "14", "--log2-max", "15", "--warmup", "2", "--reps", "3",
                "--counters", "--precisions", *PRECISIONS, "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(frame.columns) == measure.ROW_COLUMNS and set(frame.precision) == set(PRECISIONS)
    assert (frame.reps == 1).all() and frame.note.str.contains("counter run").all()


def test_the_claims_and_figures_pair_and_plot_a_run_in_every_precision(tmp_path):
    from membound.analysis.claims.pairs import pairs
    from membound.plots import common, fig6
    from membound.run import config

    out = tmp_path / "scale.csv"
    scale.main(["--backend", "cpu", "--log2-min", "10", "--log2-max", "11", "--warmup", "0", "--reps", "1",
                "--precisions", *PRECISIONS, "--out", str(out)])
    rows, gpu = pd.read_csv(out), config.load_gpu("cpu")
    p = pairs(rows, gpu, None)
    assert len(p) == 2 * len(PRECISIONS) and set(p["precision"]) == set(PRECISIONS)
    assert len(pairs(rows, gpu, None, twins=True)) == 2 * len(PRECISIONS)
    paths = type("Out", (), {s: str(tmp_path / f"f.{s}") for s in ("csv", "pdf", "png")})
    common.render(fig6, [str(out)], str(config.GPUS_DIR / "cpu.yaml"), paths, list(PRECISIONS))
    plotted = pd.read_csv(paths.csv)
    assert len(plotted) == len(fig6.data(rows, gpu)) and set(plotted["precision"]) == set(PRECISIONS)