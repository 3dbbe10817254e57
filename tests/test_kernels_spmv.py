"""SpMV: the plan covers every nonzero once, every impl matches scipy (explicit zeros, empty, short and
long rows), a wrong output fails without writing, and the CSV schema."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from membound.kernels import harness, spmv
from membound.matrices import csr
from membound.run import measure

# rows with 0, 1, 5 and 100 nonzeros, long rows split into pieces, and a row count not a multiple of 8
LENGTHS = [0, 1, 5, 100, 0, 3, spmv.LONG, spmv.LONG + 1, spmv.PIECE + 1, 2 * spmv.PIECE + 33, 7]


def ragged(seed: int, extra_rows: int = 1003, cols: int = 6000) -> sp.csr_matrix:
    """A matrix with the rows of LENGTHS, `extra_rows` random rows (0-40 nonzeros) and explicit zeros."""
    rng = np.random.default_rng(seed)
    lengths = np.concatenate([LENGTHS, rng.integers(0, 41, extra_rows)])
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.concatenate([np.sort(rng.choice(cols, n, replace=False)) for n in lengths]).astype(np.int32)
    data = rng.uniform(-1.0, 1.0, indptr[-1])
    data[::9] = 0.0  # explicit zeros stay stored
    return sp.csr_matrix((data, indices, indptr), shape=(len(lengths), cols))


def test_plan_covers_every_nonzero_once():
    matrix = ragged(0)
    p = spmv.plan(matrix.indptr)
    slots, out_rows = spmv.blocks(matrix.indptr, p)
    assert slots.shape == (p.mma, 32) and out_rows.shape == (p.mma, 8)
    used = slots[slots >= 0]
    assert np.array_equal(np.sort(used), np.arange(matrix.nnz))
    row_of = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    lane_row = np.repeat(out_rows, 4, axis=1)  # lane 4r+c feeds the diagonal entry of row r
    assert np.array_equal(lane_row[slots >= 0], row_of[used])
    assert set(p.long_rows) == set(np.flatnonzero(np.diff(matrix.indptr) > spmv.LONG))
    assert (p.piece_end - p.piece_begin <= spmv.PIECE).all() and (p.group_chunks <= spmv.LONG // 4 + 1).all()


def test_plan_row_classes_and_packing():
    """Short rows (read in place) come first, then medium rows, whose packed slots are exactly their
    nonzeros in MMA order, 32 per MMA, with -1 for padding."""
    matrix = ragged(4)
    length = np.diff(matrix.indptr)
    p = spmv.plan(matrix.indptr, short=8)
    short, medium = p.group_rows[: 8 * p.n_short], p.group_rows[8 * p.n_short:]
    assert set(short[short >= 0]) == set(np.flatnonzero(length <= 8))
    assert set(medium[medium >= 0]) == set(np.flatnonzero((length > 8) & (length <= spmv.LONG)))
    slots, _ = spmv.blocks(matrix.indptr, p)
    first = p.group_chunks[: p.n_short].sum()
    assert p.pack_ptr[-1] == p.group_chunks[p.n_short:].sum() and len(p.pack_slots) == 32 * p.pack_ptr[-1]
    assert np.array_equal(p.pack_slots, slots[first: first + p.pack_ptr[-1]].ravel())
    assert (p.pack_slots < 0).any()


@pytest.mark.parametrize("impl", ["scipy_csr", "numpy_mma", "numpy_mma_twin"])
def test_cpu_impls_match_scipy(impl):
    matrix = ragged(1)
    x, y = np.random.default_rng(2).uniform(-1, 1, matrix.shape[1]), np.full(matrix.shape[0], np.nan)
    spmv.cpu_runner(impl, matrix, x, y)()
    assert measure.rel_err(y, matrix @ x) <= spmv.TOL
    assert y[0] == 0.0 and y[4] == 0.0  # empty rows are written


def write_matrix(path, matrix, name="ragged"):
    csr.save(path, matrix, {"code": "T1", "name": name, "source": "synthetic"})
    return path


def test_cli_cpu_writes_checked_rows(tmp_path):
    matrix = ragged(3)
    out = tmp_path / "raw" / "spmv" / "ragged.csv"
    spmv.main(["--backend", "cpu", "--matrix", str(write_matrix(tmp_path / "m.npz", matrix)), "--warmup", "1",
               "--reps", "3", "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(frame.columns) == measure.ROW_COLUMNS
    assert list(frame.impl) == ["scipy_csr", "numpy_mma", "numpy_mma_twin"]
    assert list(frame.role) == ["cuSPARSE", "DASP", "DASP twin"]
    assert list(frame.unit) == ["cuda_core", "tensor_core", "cuda_core"]
    assert (frame.kernel == "spmv").all() and (frame.problem == "ragged").all() and (frame.code == "T1").all()
    assert (frame.source == "synthetic").all() and (frame.nnz == matrix.nnz).all()
    assert (frame.work_items == matrix.nnz).all() and (frame.metric == "GFLOP/s").all()
    assert (frame.rel_err <= spmv.TOL).all() and (frame.reps == 3).all()
    row = frame.iloc[1]
    assert row.value == pytest.approx(2 * matrix.nnz / row.t_median_s / 1e9)
    assert "emulated on CPU" in row.note and "padding ratio" in row.note


@pytest.mark.parametrize("wrong", ["unwritten_row", "off_by_ulps"])
def test_wrong_output_fails_and_writes_nothing(monkeypatch, tmp_path, wrong):
    real = spmv.cpu_runner

    def bad_runner(impl, matrix, x, y):
        run = real(impl, matrix, x, y)

        def bad():
            run()
            if wrong == "unwritten_row":
                y[-1] = np.nan
            else:
                y[:] *= 1 + 1e-10
        return bad

    monkeypatch.setattr(spmv, "cpu_runner", bad_runner)
    folder = tmp_path / "out"
    with pytest.raises(measure.CheckError, match="spmv scipy_csr ragged"):
        spmv.main(["--backend", "cpu", "--matrix", str(write_matrix(tmp_path / "m.npz", ragged(4))),
                   "--warmup", "0", "--reps", "1", "--out", str(folder / "x.csv")])
    assert not folder.exists() or not list(folder.iterdir())


def test_missing_matrix_is_a_one_line_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        spmv.main(["--backend", "cpu", "--matrix", str(tmp_path / "none.npz"), "--warmup", "0", "--reps", "1",
                   "--out", str(tmp_path / "x.csv")])
    assert "none.npz: no such file" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.gpu
@pytest.mark.parametrize("seed, extra_rows", [(5, 0), (6, 1003), (7, 20001)])
def test_gpu_impls_match_scipy(seed, extra_rows):
    matrix = ragged(seed, extra_rows)
    rows = [harness.measure(impl, prepare, "cuda", 2, 3) for impl, prepare in
            spmv.jobs("cuda", matrix, {"name": f"ragged{seed}", "source": "synthetic"}, np.random.default_rng(seed))]
    assert [r["impl"] for r in rows] == ["cusparse_csr", "dasp_tc", "dasp_tc_twin"]
    assert all(r["rel_err"] <= spmv.TOL and r["value"] > 0 for r in rows)


@pytest.mark.gpu
@pytest.mark.parametrize("impl, short", [("cusparse_csr", 0), ("dasp_tc", 0), ("dasp_tc", 8), ("dasp_tc_twin", 8)])
def test_gpu_random_matrix_and_poison_is_overwritten(impl, short):
    import cupy as cp

    rng = np.random.default_rng(8)
    matrix = ragged(10)   # rows of 0-40 nnz, long rows and explicit zeros
    dev = spmv._device_csr(matrix, "ragged")
    for _ in range(2):  # fresh x each time; y poisoned each time
        x_host = rng.uniform(-1, 1, matrix.shape[1])
        x, y = cp.asarray(x_host), cp.full(matrix.shape[0], np.nan)
        run = (spmv.cusparse_runner(dev, x, y) if impl == "cusparse_csr"
               else spmv.tc_runner(dev, x, y, spmv.plan(matrix.indptr, short), twin=impl.endswith("_twin")))[0]
        run()
        assert measure.rel_err(y.get(), matrix @ x_host) <= spmv.TOL
