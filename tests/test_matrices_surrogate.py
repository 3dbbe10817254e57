"""Surrogates (exact shape and nnz, family structure, determinism, labelling), CSR paths and Table 2."""

import numpy as np
import pandas as pd
import pytest

from membound.matrices import MatrixError, csr, paths, surrogate, table2
from membound.run import config as mbconfig

MATRICES = mbconfig.load_matrices()


def by_family(family):
    return next(m for m in MATRICES if m["family"] == family)


@pytest.mark.parametrize("entry", MATRICES, ids=lambda m: m["name"])
def test_surrogate_has_the_exact_scaled_shape_and_distinct_entries(entry):
    matrix, meta = surrogate.generate(entry, 0.01)
    rows, cols, nnz = surrogate.scaled_shape(entry, 0.01)
    assert matrix.shape == (rows, cols) and matrix.nnz == nnz
    assert rows == round(entry["rows"] * 0.01) and nnz == round(entry["nnz"] * 0.01)
    assert matrix.has_canonical_format  # sorted, no duplicate column within a row
    assert meta["source"] == "surrogate" and "surrogate" in meta["notes"] and meta["code"] == entry["code"]


def test_surrogate_is_deterministic_and_scale_dependent():
    entry = by_family("powerlaw")
    a, _ = surrogate.generate(entry, 0.01)
    b, _ = surrogate.generate(entry, 0.01)
    c, _ = surrogate.generate(entry, 0.02)
    assert (a != b).nnz == 0 and c.nnz == round(entry["nnz"] * 0.02)


def row_stats(matrix):
    per_row = np.diff(matrix.indptr)
    return per_row.max() / per_row.mean(), per_row.std() / per_row.mean()


def test_families_have_their_structure():
    regular, _ = surrogate.generate(by_family("regular"), 0.05)
    assert row_stats(regular)[1] < 0.05  # (almost) equal rows
    powerlaw, _ = surrogate.generate(by_family("powerlaw"), 0.05)
    assert row_stats(powerlaw)[0] > 20  # a few very long rows
    circuit, _ = surrogate.generate(by_family("circuit"), 0.05)
    col_counts = np.bincount(circuit.indices, minlength=circuit.shape[1])
    assert row_stats(circuit)[0] > 20 and col_counts.max() > 20 * col_counts.mean()  # dense rows and columns
    band, _ = surrogate.generate(by_family("banded_fem"), 0.05)
    coo = band.tocoo()
    assert np.abs(coo.row.astype(int) - coo.col).max() < 0.1 * band.shape[0]  # near the diagonal
    block, _ = surrogate.generate(by_family("dense_block"), 0.05)
    first, last = block.indices[block.indptr[:-1]], block.indices[block.indptr[1:] - 1]
    assert np.all((first % surrogate.BLOCK == 0) | (last == block.shape[1] - 1)) and np.all(last - first + 1 == np.diff(block.indptr))  # dense runs


def test_apportion_is_exact_and_respects_the_cap():
    counts = surrogate.apportion(np.array([100.0, 1, 1, 1]), 40, cap=10)
    assert counts.sum() == 40 and counts.max() == 10


def test_unknown_family_is_a_clear_error():
    with pytest.raises(MatrixError, match="unknown surrogate family 'lattice' .*banded_fem"):
        surrogate.generate({**by_family("regular"), "family": "lattice"}, 0.01)


def test_csr_path_follows_the_matrix_source():
    cfg = {"data_dir": "d", "matrix_source": "surrogate", "spmv": {"surrogate_scale": 0.01}}
    assert paths.csr_path(cfg, "cant") == "d/csr/surrogate-0.01/cant.npz"
    assert paths.csr_path({**cfg, "matrix_source": "real"}, "cant") == "d/csr/real/cant.npz"


def test_table2_from_surrogates_says_surrogate_everywhere(tmp_path):
    files = []
    for entry in MATRICES[:3]:
        files.append(tmp_path / f"{entry['name']}.npz")
        csr.save(files[-1], *surrogate.generate(entry, 0.01))
    frame = table2.table(table2.stats(files), l2_mb=50)
    table2.write(frame, tmp_path / "t.csv", tmp_path / "t.md", "NVIDIA H100", 50)
    out = pd.read_csv(tmp_path / "t.csv")
    assert list(out["code"]) == ["D1", "D2", "D3"] and (out["source"] == "surrogate").all()
    assert out["notes"].str.contains("surrogate").all()
    assert "SURROGATE" in (tmp_path / "t.md").read_text().splitlines()[0]
    matrix, _ = csr.load(files[0])
    per_row = np.diff(matrix.indptr)
    first = out.iloc[0]
    assert first["nnz"] == matrix.nnz and first["nnz_row_max"] == per_row.max()
    assert first["nnz_row_cv"] == pytest.approx(per_row.std() / per_row.mean())
    size = (12 * matrix.nnz + 4 * (matrix.shape[0] + 1) + 16 * matrix.shape[0]) / 2**20
    assert first["size_MB"] == pytest.approx(size) and first["size_over_L2"] == pytest.approx(size / 50)


def test_table2_from_real_matrices_has_a_plain_title(tmp_path):
    entry = MATRICES[0]
    matrix, meta = surrogate.generate(entry, 0.01)
    csr.save(tmp_path / "r.npz", matrix, {**meta, "source": "real", "notes": "explicit zeros kept"})
    table2.write(table2.table(table2.stats([tmp_path / "r.npz"]), 40), tmp_path / "t.csv", tmp_path / "t.md", "A100", 40)
    assert "surrogate" not in (tmp_path / "t.md").read_text().lower()
