"""GEMV, the family added through the harness, in every precision: each implementation per backend
against the reference within the format's bound, the MMA operand columns, checks that fail, the
analytical W and Q, and the cpu profile's rules end to end."""

import re

import numpy as np
import pandas as pd
import pytest

from membound import families
from membound.kernels import SOURCES, gemv, harness
from membound.model import equations, precision
from membound.run import config, measure

SHAPES = [(1, 1), (7, 5), (8, 32), (33, 70), (17, 130), (1000, 517)]
PRECISIONS = gemv.PRECISIONS
CPU = [i for i in gemv.IMPLS if i.backend == "cpu"]
CUDA = [(i, p) for i in gemv.IMPLS if i.backend == "cuda" for p in i.precisions]


def inputs(shape, p, seed):
    rng = np.random.default_rng(seed)
    return precision.quantize(rng.uniform(-1, 1, shape), p), precision.quantize(rng.uniform(-1, 1, shape[1]), p)


def bound(a, x, p, unit):
    """A x in float64 and its tolerance."""
    a64, x64 = precision.decode(a, p).astype(np.float64), precision.decode(x, p).astype(np.float64)
    ref = a64 @ x64
    return ref, precision.dot_tolerance(p, unit, a.shape[1], ref, np.abs(a64) @ np.abs(x64))


@pytest.mark.parametrize("p", PRECISIONS)
@pytest.mark.parametrize("impl", CPU, ids=lambda i: i.name)
@pytest.mark.parametrize("shape", SHAPES)
def test_cpu_impls_meet_the_bound_of_their_format(impl, shape, p):
    a, x = inputs(shape, p, sum(shape))
    y = np.full(shape[0], precision.nan(p), a.dtype)
    gemv.cpu_runner(impl.name, a, x, y, p)()
    ref, tol = bound(a, x, p, impl.unit)
    assert measure.rel_err(precision.decode(y, p), ref) <= tol


@pytest.mark.parametrize("p", PRECISIONS)
def test_every_column_of_a_chunk_enters_one_mma_once(p):
    cols = gemv.columns(p)
    m, _, k = precision.fmt(p).mma.shape
    assert cols.shape[1] == k and sorted(cols.ravel()) == list(range(cols.size))
    assert cols.size * precision.fmt(p).bytes * m == 32 * 64          # a warp chunk: 64 bytes of A a lane


def test_fp64_columns_are_the_dmma_kernels():
    assert np.array_equal(gemv.columns("fp64"), [[8 * c + u for c in range(4)] for u in range(8)])


def test_the_tf32_emulation_rounds_its_operands():
    a, x = inputs((64, 256), "fp32", 5)
    y = np.full(64, np.nan, np.float32)
    gemv.cpu_runner("numpy_mma", a, x, y, "fp32")()
    tf = precision.tc_operand
    exact = tf(a, "fp32").astype(np.float64) @ tf(x, "fp32").astype(np.float64)
    ref, tol = bound(a, x, "fp32", "tensor_core")
    assert measure.rel_err(y, exact) < 1e-6 < measure.rel_err(y, ref) <= tol


@pytest.mark.parametrize("p", PRECISIONS)
def test_a_tampered_emulation_fails_its_check(monkeypatch, tmp_path, p):
    emulation = gemv.emulation
    monkeypatch.setattr(gemv, "emulation", lambda a, x, y, prec: emulation(a, np.roll(x, 1), y, prec))  # x off by one
    with pytest.raises(measure.CheckError, match=f"gemv numpy_mma {p} n=64"):
        gemv.main(["--backend", "cpu", "--sizes", "64", "--warmup", "0", "--reps", "1", "--precisions", p,
                   "--out", str(tmp_path / "x.csv")])
    assert not (tmp_path / "x.csv").exists()


def test_cli_cpu_writes_checked_rows_and_a_wrong_one_fails(tmp_path, monkeypatch):
    out = tmp_path / "gemv.csv"
    gemv.main(["--backend", "cpu", "--sizes", "16", "100", "--warmup", "1", "--reps", "2", "--rep", "2",
               "--precisions", *PRECISIONS, "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(frame.columns) == measure.ROW_COLUMNS and list(frame.impl) == ["numpy", "numpy_mma"] * 2 * len(PRECISIONS)
    assert list(frame.precision) == [p for p in PRECISIONS for _ in range(2)] * 2
    assert (frame.rep == 2).all() and (frame.metric == "GB/s").all()
    for row in frame.itertuples():
        assert row.rel_err <= float(re.search(r"rel_err <= ([0-9.e+-]+)", row.note).group(1))
        assert row.value == pytest.approx(precision.fmt(row.precision).bytes * (row.rows ** 2 + 2 * row.rows)
                                          / row.t_median_s / 1e9)
    mma = frame[frame.impl == "numpy_mma"]
    tf32 = "m16n8k8.row.col.f32.tf32.tf32.f32 (tf32 operands rounded by cvt.rna.tf32.f32, f32 accumulate)"
    assert mma[mma.precision == "fp32"].note.str.contains(tf32, regex=False).all()
    assert mma.note.str.contains("1/8 useful").all()

    for p in PRECISIONS:
        monkeypatch.setattr(gemv, "cpu_runner", lambda impl, a, x, y, prec: lambda: np.copyto(
            y, precision.store(precision.decode(a, prec) @ (precision.decode(x, prec) * 1.01), prec)))
        with pytest.raises(measure.CheckError, match=f"gemv numpy {p} n=16"):
            gemv.main(["--backend", "cpu", "--sizes", "16", "--warmup", "0", "--reps", "1", "--precisions", p,
                       "--out", str(tmp_path / "x.csv")])
        assert not (tmp_path / "x.csv").exists()


def test_every_cuda_impl_and_precision_has_its_kernel():
    text = "".join(f.read_text() for f in (SOURCES / "gemv").glob("*.cu"))
    defined = set(re.findall(r'__global__ void (?:__launch_bounds__\([^)]*\)\s+)?(\w+)\(', text))
    assert defined == {"gemv_tc", "gemv_tc_fp32", "gemv_tc_fp16", "gemv_tc_bf16", "gemv_half2", "gemv_half2_bf16"}
    assert {p for i, p in CUDA if i.unit == "cuda_core"} == set(PRECISIONS) == {p for i, p in CUDA if i.unit == "tensor_core"}


def test_analytical_w_and_q_are_eq_6_7():
    gpu = config.load_gpu("h100")                     # FP64 MMA m8n8k4
    row = {"kernel": "gemv", "unit": "tensor_core", "rows": 1000, "cols": 1000, "n": 10**6}
    a = families.analytical_row(row, gpu)
    assert (a["W"], a["Q"]) == equations.gemv_wq(1000, 1000) and a["W_exec"] == 8 * a["W"]
    assert a["I"] == pytest.approx(2e6 / (8 * (10**6 + 2000)))
    assert [gemv.bytes_moved(10, 10, p) for p in PRECISIONS] == [960, 480, 240, 240]


@pytest.mark.slow
def test_cpu_profile_measures_and_plots_gemv(cpu_run):
    plotted = pd.read_csv(cpu_run / "results/cpu/figures/gemv.csv")
    assert set(plotted.unit) == {"cuda_core", "tensor_core"} and sorted(plotted.n.unique()) == [64, 256, 1024]
    assert (cpu_run / "results/cpu/figures/gemv.png").stat().st_size > 0


@pytest.mark.gpu
@pytest.mark.parametrize("impl,p", CUDA, ids=lambda v: getattr(v, "name", v))
@pytest.mark.parametrize("shape", SHAPES + [(4097, 4099), (4096, 4096)])
def test_gpu_impls_meet_the_bound_of_their_format(impl, p, shape):
    import cupy as cp

    if reason := harness.skip_reason(impl, "cuda"):
        pytest.skip(reason)
    a, x = inputs(shape, p, sum(shape))
    y = cp.full(shape[0], precision.nan(p), a.dtype)
    gemv.gpu_runner(impl.name, cp.asarray(a), cp.asarray(x), y, p)()
    ref, tol = bound(a, x, p, impl.unit)
    assert y.dtype == a.dtype and measure.rel_err(precision.decode(y.get(), p), ref) <= tol


@pytest.mark.gpu
def test_gpu_cli_rows(tmp_path):
    out = tmp_path / "gemv.csv"
    gemv.main(["--backend", "cuda", "--sizes", "256", "2048", "--warmup", "2", "--reps", "5",
               "--precisions", *PRECISIONS, "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(zip(frame.impl, frame.precision)) == [("cublas_dgemv", "fp64"), ("gemv_tc", "fp64"),
                                                      ("cublas_sgemv", "fp32"), ("gemv_tc", "fp32"),
                                                      ("gemv_half2", "fp16"), ("gemv_tc", "fp16"),
                                                      ("gemv_half2", "bf16"), ("gemv_tc", "bf16")] * 2


@pytest.mark.gpu
@pytest.mark.parametrize("p", PRECISIONS)
def test_gpu_cases_draw_on_the_device_and_reference_in_float64(p):
    """A and x are drawn on the GPU in the format, and the case's references are A x and |A||x| of
    exactly those values in float64 (here recomputed on the host)."""
    import cupy as cp

    a, x, y, ref, bound = gemv._device_arrays(1000, np.random.default_rng(1), p)
    assert isinstance(a, cp.ndarray) and a.dtype == x.dtype == y.dtype == precision.fmt(p).dtype
    assert bool(cp.isnan(precision.decode(y, p)).all())
    a64, x64 = (precision.decode(v.get(), p).astype(np.float64) for v in (a, x))
    np.testing.assert_allclose(ref, a64 @ x64, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bound, np.abs(a64) @ np.abs(x64), rtol=1e-12)
