"""STREAM SCALE: both implementations per backend against numpy, the check, and the CSV schema."""

import numpy as np
import pandas as pd
import pytest

from membound.kernels import harness, scale
from membound.run import measure

RAGGED = [1, 31, 1000, 4097, 3 * scale.CHUNK + 77]


@pytest.mark.parametrize("impl", ["numpy", "numpy_mma", "numpy_mma_twin"])
@pytest.mark.parametrize("n", RAGGED)
def test_cpu_impls_match_numpy(impl, n):
    rng = np.random.default_rng(n)
    b, a, q = rng.uniform(-1, 1, n), np.full(n, np.nan), 1.37
    scale.cpu_runner(impl, a, b, q)()
    assert measure.rel_err(a, q * b) <= scale.TOL


def test_mma_operand_is_scaled_identity_per_column_pair():
    tile = np.arange(32.0).reshape(8, 4)
    d = tile @ (2.5 * scale.E)
    assert np.array_equal(d[:, 0::2], 2.5 * tile) and np.array_equal(d[:, 1::2], 2.5 * tile)


def test_cli_cpu_writes_checked_rows(tmp_path):
    out = tmp_path / "raw" / "scale.csv"
    scale.main(["--backend", "cpu", "--log2-min", "10", "--log2-max", "12", "--warmup", "1", "--reps", "3",
                "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(frame.columns) == measure.ROW_COLUMNS
    assert sorted(set(frame.impl)) == ["numpy", "numpy_mma", "numpy_mma_twin"]
    assert list(frame.problem.unique()) == ["n=2^10", "n=2^11", "n=2^12"]
    assert (frame.rel_err <= scale.TOL).all() and (frame.value > 0).all() and (frame.reps == 3).all()
    assert (frame.metric == "GB/s").all()
    assert dict(zip(frame.impl, frame.role)) == {"numpy": "STREAM", "numpy_mma": "STREAM", "numpy_mma_twin": "STREAM twin"}
    assert dict(zip(frame.impl, frame.unit)) == {"numpy": "cuda_core", "numpy_mma": "tensor_core",
                                                 "numpy_mma_twin": "cuda_core"}
    mma = frame[frame.impl == "numpy_mma"]
    assert (mma.unit == "tensor_core").all() and mma.note.str.contains("emulated on CPU").all()
    row = frame.iloc[0]
    assert row.value == pytest.approx(16 * row.n / row.t_median_s / 1e9)


@pytest.mark.parametrize("wrong", ["unwritten_last", "off_by_ulps"])
def test_wrong_output_fails_and_writes_nothing(monkeypatch, tmp_path, wrong):
    def bad_runner(impl, a, b, q):
        def run():
            a[:] = q * b
            if wrong == "unwritten_last":
                a[-1] = np.nan
            else:
                a[:] *= 1 + 1e-12
        return run

    monkeypatch.setattr(scale, "cpu_runner", bad_runner)
    out = tmp_path / "scale.csv"
    with pytest.raises(measure.CheckError, match="scale numpy n=1024"):
        scale.main(["--backend", "cpu", "--log2-min", "10", "--log2-max", "10", "--warmup", "0", "--reps", "1",
                    "--out", str(out)])
    assert not out.exists() and not list(tmp_path.iterdir())


def test_bad_size_range_is_one_line_error(tmp_path):
    with pytest.raises(SystemExit):
        scale.main(["--backend", "cpu", "--log2-min", "12", "--log2-max", "10", "--warmup", "0", "--reps", "1",
                    "--out", str(tmp_path / "s.csv")])


def test_problem_label():
    assert scale.problem(2**14) == "n=2^14" and scale.problem(1000) == "n=1000"


@pytest.mark.gpu
@pytest.mark.parametrize("impl", ["cuda_core", "tensor_core", "tensor_core_twin"])
@pytest.mark.parametrize("n", RAGGED + [2**14, 2**20 + 3])
def test_gpu_impls_match_numpy(impl, n):
    import cupy as cp

    if reason := harness.skip_reason(next(i for i in scale.IMPLS if i.name == impl), "cuda"):
        pytest.skip(reason)
    b = cp.random.uniform(-1, 1, n)
    a = cp.full(n, np.nan)
    q = 0.731
    scale.gpu_runner(impl, a, b, q)()
    cp.cuda.Device().synchronize()
    assert measure.rel_err(a.get(), q * b.get()) <= scale.TOL


@pytest.mark.gpu
def test_gpu_offset_view_is_rejected_or_right():
    """The kernels read double2: an 8-byte-offset view must not silently misread."""
    import cupy as cp

    base = cp.random.uniform(-1, 1, 1001)
    b, a = base[1:], cp.full(1000, np.nan)
    with pytest.raises(ValueError, match="16-byte"):
        scale.gpu_runner("cuda_core", a, b, 2.0)


@pytest.mark.gpu
def test_gpu_cli_counters_mode(tmp_path):
    out = tmp_path / "scale.csv"
    scale.main(["--backend", "cuda", "--log2-min", "14", "--log2-max", "15", "--warmup", "2", "--reps", "3",
                "--counters", "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(frame.columns) == measure.ROW_COLUMNS
    assert (frame.reps == 1).all() and frame.note.str.contains("counter run").all()
    assert (frame.rel_err <= scale.TOL).all()
