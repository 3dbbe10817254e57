"""Safe extraction, Matrix Market reading and conversion to CSR, on tarballs the tests build."""

import concurrent.futures
import io
import os
import tarfile

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from membound.matrices import MatrixError, archive, convert, csr, lock, mmio
from membound.run import outputs


def mtx_text(matrix, field="real", symmetry="general") -> bytes:
    """Matrix Market text of `matrix` (COO), stored as given: explicit zeros and one triangle kept."""
    coo = sp.coo_matrix(matrix)
    lines = [f"%%MatrixMarket matrix coordinate {field} {symmetry}", "% made by the tests",
             f"{coo.shape[0]} {coo.shape[1]} {coo.nnz}"]
    value = {"pattern": lambda v: "", "integer": lambda v: f" {int(v.real)}",
             "complex": lambda v: f" {float(v.real)!r} {float(v.imag)!r}"}.get(field, lambda v: f" {float(v)!r}")
    lines += [f"{r + 1} {c + 1}{value(v)}" for r, c, v in zip(coo.row, coo.col, coo.data)]
    return ("\n".join(lines) + "\n").encode()


def make_tarball(path, name, mtx: bytes, extra=(), links=()):
    """A SuiteSparse-like tarball: `<name>/<name>.mtx`, plus (member, bytes) `extra` and symlink `links`."""
    with tarfile.open(path, "w:gz") as tar:
        for member, data in [(f"{name}/{name}.mtx", mtx), *extra]:
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for member in links:
            info = tarfile.TarInfo(member)
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
    return path


def entry_for(name, matrix, **kw):
    return {"code": "T1", "group": "Test", "name": name, "rows": matrix.shape[0], "nnz": matrix.nnz,
            "kind": "real", "symmetric": False, "family": "circuit", **kw}


GENERAL = sp.coo_matrix(([1.5, 0.0, -2.0, 4.0, 0.0], ([0, 1, 2, 3, 3], [0, 2, 1, 3, 0])), shape=(4, 4))
LOWER = sp.coo_matrix(([2.0, 0.0, -1.0, 3.0], ([0, 2, 2, 3], [0, 0, 2, 1])), shape=(4, 4))  # one triangle


def test_general_matrix_keeps_explicit_zeros(tmp_path):
    tar = make_tarball(tmp_path / "g.tar.gz", "g", mtx_text(GENERAL))
    convert.convert(tar, entry_for("g", GENERAL), tmp_path / "g.npz", tmp_path / "lock.tsv")
    matrix, meta = csr.load(tmp_path / "g.npz")
    assert matrix.nnz == 5 and meta["explicit_zeros"] == 2 and meta["source"] == "real"
    assert np.array_equal(matrix.toarray(), GENERAL.toarray())
    assert matrix.indices.dtype == np.int32 and matrix.data.dtype == np.float64


def test_symmetric_storage_is_expanded_with_zeros_mirrored(tmp_path):
    full = sp.coo_matrix(LOWER.toarray() + np.tril(LOWER.toarray(), -1).T)
    tar = make_tarball(tmp_path / "s.tar.gz", "s", mtx_text(LOWER, symmetry="symmetric"))
    convert.convert(tar, entry_for("s", LOWER, nnz=6), tmp_path / "s.npz")  # 4 stored, 2 off the diagonal
    matrix, meta = csr.load(tmp_path / "s.npz")
    assert matrix.nnz == 6 and meta["explicit_zeros"] == 2 and "symmetric storage expanded" in meta["notes"]
    assert np.array_equal(matrix.toarray(), full.toarray())


def test_skew_symmetric_mirror_is_negated():
    lower = sp.coo_matrix(([5.0], ([2], [0])), shape=(3, 3))
    matrix, _ = mmio.read(mtx_text(lower, symmetry="skew-symmetric"), "skew")
    assert matrix[2, 0] == 5.0 and matrix[0, 2] == -5.0


@pytest.mark.parametrize("field, expected, note", [
    ("pattern", np.ones(5), "every value set to 1.0"),
    ("integer", np.trunc(GENERAL.data), "integer values"),
    ("complex", GENERAL.data, "real part kept"),
])
def test_pattern_integer_and_complex_fields(tmp_path, field, expected, note):
    stored = GENERAL.astype(complex) + sp.coo_matrix((np.full(5, 7j), (GENERAL.row, GENERAL.col)), (4, 4)) \
        if field == "complex" else GENERAL
    tar = make_tarball(tmp_path / "f.tar.gz", "f", mtx_text(sp.coo_matrix(stored), field=field))
    convert.convert(tar, entry_for("f", GENERAL), tmp_path / "f.npz")
    matrix, meta = csr.load(tmp_path / "f.npz")
    want = sp.coo_matrix((expected, (GENERAL.row, GENERAL.col)), (4, 4)).toarray()
    assert matrix.nnz == 5 and np.array_equal(matrix.toarray(), want) and note in meta["notes"]


def test_reader_matches_scipy_mmread_on_a_random_matrix():
    rand = sp.random(300, 200, density=0.05, random_state=3, format="coo")
    out = io.BytesIO()
    scipy.io.mmwrite(out, rand)
    matrix, head = mmio.read(out.getvalue(), "rand")
    assert (head.rows, head.cols, head.entries) == (300, 200, rand.nnz)
    assert np.array_equal(matrix.toarray(), rand.toarray())


def test_extra_b_mtx_is_ignored(tmp_path):
    tar = make_tarball(tmp_path / "b.tar.gz", "b", mtx_text(GENERAL), extra=[("b/b_b.mtx", b"junk")])
    assert archive.read_mtx(tar, "b") == mtx_text(GENERAL)


@pytest.mark.parametrize("extra, links, refused", [
    ([("../evil", b"x")], (), "'../evil'"),
    ([("/etc/evil", b"x")], (), "'/etc/evil'"),
    ((), ("e/link",), "'e/link' (a link or device file)"),
])
def test_unsafe_members_are_refused(tmp_path, extra, links, refused):
    tar = make_tarball(tmp_path / "e.tar.gz", "e", mtx_text(GENERAL), extra=extra, links=links)
    with pytest.raises(MatrixError, match="refusing member") as err:
        convert.convert(tar, entry_for("e", GENERAL), tmp_path / "e.npz")
    assert refused in str(err.value) and not (tmp_path / "e.npz").exists()


def test_device_file_is_refused(tmp_path):
    tar = tmp_path / "d.tar.gz"
    with tarfile.open(tar, "w:gz") as out:
        info = tarfile.TarInfo("d/d.mtx")
        info.type = tarfile.CHRTYPE
        out.addfile(info)
    with pytest.raises(MatrixError, match="'d/d.mtx' \\(a link or device file\\)"):
        archive.read_mtx(tar, "d")


def test_truncated_archive_is_an_error_and_leaves_no_output(tmp_path):
    tar = make_tarball(tmp_path / "t.tar.gz", "t", mtx_text(sp.random(500, 500, density=0.2, random_state=1)))
    data = tar.read_bytes()
    tar.write_bytes(data[: len(data) // 2])
    with pytest.raises(MatrixError, match="unreadable archive .*delete it and download it again"):
        convert.convert(tar, entry_for("t", GENERAL), tmp_path / "t.npz")
    assert not list(tmp_path.glob("t.npz*"))


def test_truncated_matrix_market_body_is_an_error():
    text = mtx_text(GENERAL)
    with pytest.raises(MatrixError, match="4 complete entries where the size line declares 5"):
        mmio.read(text[: text.rindex(b"\n", 0, -1) + 1], "short")
    with pytest.raises(MatrixError, match="complete entries"):
        mmio.read(text[:-4], "cut mid-line")


def test_missing_member_and_non_matrix_market_are_errors(tmp_path):
    tar = make_tarball(tmp_path / "m.tar.gz", "other", mtx_text(GENERAL))
    with pytest.raises(MatrixError, match="no member m/m.mtx"):
        archive.read_mtx(tar, "m")
    with pytest.raises(MatrixError, match="not a Matrix Market file"):
        mmio.read(b"hello\n1 2 3\n", "junk")
    with pytest.raises(MatrixError, match="unsupported Matrix Market type 'array real general'"):
        mmio.read(b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "dense")


def test_rows_or_nnz_differing_from_table2_stop_with_both_numbers(tmp_path):
    tar = make_tarball(tmp_path / "n.tar.gz", "n", mtx_text(GENERAL))
    with pytest.raises(MatrixError, match="5 nnz but the paper's Table 2 has 6 for Test/n"):
        convert.convert(tar, entry_for("n", GENERAL, nnz=6), tmp_path / "n.npz")
    with pytest.raises(MatrixError, match="4 rows but the paper's Table 2 has 9"):
        convert.convert(tar, entry_for("n", GENERAL, rows=9), tmp_path / "n.npz")
    assert not list(tmp_path.glob("n.npz*"))


def test_duplicate_entries_are_an_error():
    text = mtx_text(GENERAL).replace(b" 5\n", b" 6\n", 1) + b"1 1 2.0\n"
    with pytest.raises(MatrixError, match="1 duplicate entries"):
        mmio.read(text, "dup")


def test_a_conversion_writes_its_own_record_and_one_collector_merges_them(tmp_path):
    lockfile, records = tmp_path / "lock.tsv", []
    for name, matrix in (("g", GENERAL), ("l", LOWER)):
        tar = make_tarball(tmp_path / f"{name}.tar.gz", name, mtx_text(matrix))
        assert not lock.check(tar, name, lockfile)
        records.append(tmp_path / f"{name}.sha256.tsv")
        convert.convert(tar, entry_for(name, matrix), tmp_path / f"{name}.npz", lockfile, records[-1])
        assert lock.read(records[-1]) == {name: {"name": name, "sha256": outputs.sha256(tar),
                                                 "bytes": str(tar.stat().st_size)}}
    assert not lockfile.exists()  # a conversion never writes the lock file
    assert lock.collect(records, lockfile) == {**lock.read(records[0]), **lock.read(records[1])} == lock.read(lockfile)
    before = lockfile.read_bytes()
    assert set(lock.collect(records[:1], lockfile)) == {"g"} and lockfile.read_bytes() == before  # idempotent
    assert lock.check(tmp_path / "g.tar.gz", "g", lockfile)
    digest = lock.read(lockfile)["l"]["sha256"]
    make_tarball(tmp_path / "l.tar.gz", "l", mtx_text(GENERAL))  # the file changes under the same name
    with pytest.raises(MatrixError, match=f"differs from {digest}"):
        convert.convert(tmp_path / "l.tar.gz", entry_for("l", GENERAL), tmp_path / "l2.npz", lockfile,
                        tmp_path / "l2.sha256.tsv")
    assert not (tmp_path / "l2.npz").exists() and not (tmp_path / "l2.sha256.tsv").exists()
    lock.record(tmp_path / "l.tar.gz", "l", records[1])  # a record that disagrees with the lock file
    with pytest.raises(MatrixError, match=f"l.sha256.tsv: SHA-256 .* of l differs from {digest}"):
        lock.collect(records, lockfile)
    assert lockfile.read_bytes() == before


def _convert_elsewhere(args):
    """One conversion as a job on another node would run it: its own process and its own /tmp."""
    tmp_path, name = args
    os.environ["TMPDIR"] = str(tmp_path / f"node-{name}")
    os.mkdir(os.environ["TMPDIR"])
    tar = make_tarball(tmp_path / f"{name}.tar.gz", name, mtx_text(GENERAL))
    convert.convert(tar, entry_for(name, GENERAL), tmp_path / f"{name}.npz", tmp_path / "lock.tsv",
                    tmp_path / f"{name}.sha256.tsv")


def test_conversions_at_once_on_separate_nodes_lose_no_hash(tmp_path):
    names = [f"m{i}" for i in range(6)]
    with concurrent.futures.ProcessPoolExecutor(3) as pool:
        list(pool.map(_convert_elsewhere, [(tmp_path, n) for n in names]))
    lock.collect([tmp_path / f"{n}.sha256.tsv" for n in names], tmp_path / "lock.tsv")
    assert set(lock.read(tmp_path / "lock.tsv")) == set(names)


def test_repository_lock_file_has_the_expected_header():
    from membound.run.config import REPO
    assert (REPO / "config" / "matrices.lock.tsv").read_text().splitlines()[0].split("\t") == lock.HEADER


def test_an_index_outside_the_declared_size_is_a_malformed_entry():
    with pytest.raises(MatrixError, match=r"oob: a malformed entry \(.*out of bounds"):
        mmio.read(b"%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1.0\n", "oob")
