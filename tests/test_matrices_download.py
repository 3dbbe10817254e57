"""Downloads from a loopback HTTP server (Range, interruptions, errors), staging, the lock file, and
the workflow's download -> convert chain through snakemake."""

import http.server
import os
import subprocess
import sys
import threading
import types
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import yaml

from membound.matrices import MatrixError, convert, csr, download, lock, surrogate
from membound.run import config as mbconfig
from membound.run import outputs
from test_matrices_convert import GENERAL, entry_for, make_tarball, mtx_text

REPO = Path(__file__).resolve().parents[1]


class Handler(http.server.BaseHTTPRequestHandler):
    """Serves `files` ({url path: bytes}) with Range support; `cut` ({path: n}) ends the first reply
    after n bytes; `status` ({path: code}) answers with that code."""

    def do_GET(self):
        srv = self.server
        srv.requests.append((self.path, self.headers.get("Range")))
        if self.path in srv.status:
            self.send_error(srv.status[self.path])
            return
        data = srv.files.get(self.path)
        if data is None:
            self.send_error(404)
            return
        start = int(self.headers["Range"].split("=")[1].rstrip("-")) if self.headers.get("Range") else 0
        if start >= len(data) and start:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{len(data)}")
            self.end_headers()
            return
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        body = data[start:]
        if self.path in srv.cut:  # an interrupted transfer: promise everything, send part, hang up
            body = body[: srv.cut.pop(self.path)]
            self.close_connection = True
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.files, srv.cut, srv.status, srv.requests = {}, {}, {}, []
    srv.timeout = 5
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}/MM"
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def served(server, tmp_path, name="g", mtx=None):
    """Put a tarball of GENERAL under the server's /MM/Test/<name>.tar.gz; returns its bytes."""
    data = make_tarball(tmp_path / f"src-{name}.tar.gz", name, mtx or mtx_text(GENERAL)).read_bytes()
    server.files[f"/MM/Test/{name}.tar.gz"] = data
    return data


def fetch(server, tmp_path, name="g", **kw):
    args = dict(base_url=server.url, staged_dir="", lockfile=tmp_path / "lock.tsv", retries=2, timeout_s=5,
                backoff_s=0.01, progress=False)
    return download.fetch(entry_for(name, GENERAL), tmp_path / "tarballs" / f"{name}.tar.gz", **{**args, **kw})


def test_download_checks_a_recorded_hash_and_records_none(server, tmp_path):
    data = served(server, tmp_path)
    assert fetch(server, tmp_path) == (f"{server.url}/Test/g.tar.gz", False)
    assert (tmp_path / "tarballs" / "g.tar.gz").read_bytes() == data
    assert lock.read(tmp_path / "lock.tsv") == {}  # recorded by the conversion, not here
    lock.record(tmp_path / "tarballs" / "g.tar.gz", "g", tmp_path / "lock.tsv")
    (tmp_path / "tarballs" / "g.tar.gz").unlink()
    assert fetch(server, tmp_path)[1]  # a second download of the same file passes the check
    assert not list((tmp_path / "tarballs").glob("*.part"))


def test_a_corrupt_staged_tarball_is_never_recorded(tmp_path):
    staged, lockfile, entry = tmp_path / "staged", tmp_path / "lock.tsv", entry_for("g", GENERAL)
    staged.mkdir()
    (staged / "g.tar.gz").write_bytes(make_tarball(tmp_path / "good.tar.gz", "g", mtx_text(GENERAL)).read_bytes()[:-40])
    args = dict(base_url="http://127.0.0.1:9/MM", staged_dir=str(staged), lockfile=lockfile, retries=0, timeout_s=1)
    tarball = tmp_path / "tarballs" / "g.tar.gz"
    download.fetch(entry, tarball, **args)
    record = tmp_path / "g.sha256.tsv"
    with pytest.raises(MatrixError):
        convert.convert(tarball, entry, tmp_path / "g.npz", lockfile, record)
    assert not record.exists() and not (tmp_path / "g.npz").exists()
    (staged / "g.tar.gz").write_bytes((tmp_path / "good.tar.gz").read_bytes())  # "delete it and download again"
    tarball.unlink()
    download.fetch(entry, tarball, **args)
    convert.convert(tarball, entry, tmp_path / "g.npz", lockfile, record)
    lock.collect([record], lockfile)
    assert lock.read(lockfile)["g"]["sha256"] == outputs.sha256(tmp_path / "good.tar.gz")


def test_forget_drops_one_hash(tmp_path):
    lockfile = tmp_path / "lock.tsv"
    for name in ("g", "h"):
        lock.record(make_tarball(tmp_path / f"{name}.tar.gz", name, mtx_text(GENERAL)), name, tmp_path / name)
    lock.collect([tmp_path / "g", tmp_path / "h"], lockfile)
    run = subprocess.run([sys.executable, "-m", "membound.matrices.lock", "forget", "g", str(lockfile)],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert run.returncode == 0 and "g forgotten" in run.stdout
    assert set(lock.read(lockfile)) == {"h"}


def test_a_staged_dir_that_does_not_exist_is_an_error(tmp_path):
    with pytest.raises(MatrixError, match="download.staged_dir .*nowhere: no such folder"):
        download.fetch(entry_for("g", GENERAL), tmp_path / "g.tar.gz", base_url="http://127.0.0.1:9/MM",
                       staged_dir=str(tmp_path / "nowhere"), lockfile=tmp_path / "lock.tsv", retries=0, timeout_s=1)


def test_interrupted_download_resumes_with_range(server, tmp_path):
    big = sp.random(600, 600, density=0.2, random_state=2, format="coo")
    data = served(server, tmp_path, mtx=mtx_text(big))
    server.cut["/MM/Test/g.tar.gz"] = len(data) // 2
    fetch(server, tmp_path)
    assert (tmp_path / "tarballs" / "g.tar.gz").read_bytes() == data
    (first, no_range), (second, resume) = server.requests
    assert first == second == "/MM/Test/g.tar.gz" and no_range is None
    assert 0 < int(resume.removeprefix("bytes=").rstrip("-")) <= len(data) // 2


def test_partial_file_from_an_earlier_run_is_continued(server, tmp_path):
    data = served(server, tmp_path)
    (tmp_path / "tarballs").mkdir()
    (tmp_path / "tarballs" / "g.tar.gz.part").write_bytes(data[:100])
    fetch(server, tmp_path)
    assert (tmp_path / "tarballs" / "g.tar.gz").read_bytes() == data
    assert server.requests == [("/MM/Test/g.tar.gz", "bytes=100-")]


def test_server_errors_are_retried_then_reported(server, tmp_path):
    served(server, tmp_path)
    server.status["/MM/Test/g.tar.gz"] = 503
    with pytest.raises(MatrixError, match="download failed after 3 tries .*download.staged_dir"):
        fetch(server, tmp_path)
    assert len(server.requests) == 3 and not (tmp_path / "tarballs" / "g.tar.gz").exists()


def test_missing_file_is_not_retried(server, tmp_path):
    with pytest.raises(MatrixError, match="download failed after 1 tries .*404"):
        fetch(server, tmp_path)
    assert len(server.requests) == 1


def test_checksum_mismatch_stops_and_removes_the_download(server, tmp_path):
    served(server, tmp_path)
    lock.record(make_tarball(tmp_path / "other.tar.gz", "g", mtx_text(GENERAL * 2)), "g", tmp_path / "lock.tsv")
    with pytest.raises(MatrixError, match="SHA-256 .* differs from"):
        fetch(server, tmp_path)
    assert not list((tmp_path / "tarballs").iterdir())


def test_staged_tarball_is_used_before_any_download(server, tmp_path):
    staged = tmp_path / "staged"
    staged.mkdir()
    make_tarball(staged / "g.tar.gz", "g", mtx_text(GENERAL))
    assert fetch(server, tmp_path, staged_dir=str(staged)) == (str(staged / "g.tar.gz"), False)
    assert server.requests == []


def test_index_lookup_takes_the_exact_group_and_name(monkeypatch):
    like = [types.SimpleNamespace(group="Sandia", name=n, rows=r) for n, r in
            (("ASIC_680ks", 682712), ("ASIC_680k", 682862))]
    monkeypatch.setitem(sys.modules, "ssgetpy", types.SimpleNamespace(search=lambda **kw: like))
    entry = {"group": "Sandia", "name": "ASIC_680k", "rows": 682862}
    assert download.index_lookup(entry).name == "ASIC_680k"
    with pytest.raises(MatrixError, match="Sandia/ASIC_680 is not in the SuiteSparse index .*ASIC_680ks"):
        download.index_lookup({**entry, "name": "ASIC_680"})
    with pytest.raises(MatrixError, match="index has 682862 rows, config/matrices.yaml 5"):
        download.index_lookup({**entry, "rows": 5})


def test_unreachable_index_says_how_to_proceed(monkeypatch):
    def offline(**kw):
        raise ConnectionError("no route")
    monkeypatch.setitem(sys.modules, "ssgetpy", types.SimpleNamespace(search=offline))
    with pytest.raises(MatrixError, match="index unreachable .*download.staged_dir"):
        download.index_lookup({"group": "Bova", "name": "rma10", "rows": 46835})


def snakemake(*args):
    env = {**os.environ, "XDG_CONFIG_HOME": str(REPO / ".no-user-profiles")}
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.mark.slow
def test_workflow_downloads_and_converts_a_real_matrix(server, tmp_path):
    entry = next(m for m in mbconfig.load_matrices() if m["name"] == "dc2")
    matrix, _ = surrogate.generate(entry)  # a stand-in with dc2's exact shape, served as dc2's tarball
    server.files["/MM/IBM_EDA/dc2.tar.gz"] = make_tarball(tmp_path / "dc2.tar.gz", "dc2", mtx_text(matrix)).read_bytes()
    data, lockfile = tmp_path / "data", tmp_path / "lock.tsv"
    settings = {"matrix_source": "real", "matrices": ["dc2"], "data_dir": str(data), "lockfile": str(lockfile),
                "download": {"base_url": server.url, "staged_dir": "", "retries": 1, "timeout_s": 5}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(settings))
    run = snakemake("--profile", "profiles/cpu", "--cores", "1",
                    "--configfile", "profiles/cpu/membound.yaml", str(tmp_path / "config.yaml"),
                    "--", f"{data}/csr/real/dc2.npz", f"{data}/csr/real/dc2.sha256.tsv")
    assert run.returncode == 0, run.stderr[-3000:]
    assert not lockfile.exists()  # the conversion job wrote its own record; rule matrix_lock merges them
    converted, meta = csr.load(data / "csr" / "real" / "dc2.npz")
    assert meta["source"] == "real" and meta["code"] == "D1" and converted.nnz == entry["nnz"]
    assert np.array_equal(converted.indptr, matrix.indptr) and np.array_equal(converted.data, matrix.data)
    run = snakemake("--profile", "profiles/cpu", "--cores", "1",
                    "--configfile", "profiles/cpu/membound.yaml", str(tmp_path / "config.yaml"), "--", "matrix_lock")
    assert run.returncode == 0, run.stderr[-3000:]
    assert lock.read(lockfile)["dc2"] == lock.read(data / "csr" / "real" / "dc2.sha256.tsv")["dc2"]
    assert lock.read(data / "csr" / "real" / "lock.tsv") == lock.read(lockfile)


@pytest.mark.slow
def test_unknown_matrix_fails_at_start_listing_the_valid_names():
    run = snakemake("--profile", "profiles/cpu", "--config", "matrix_source=real", "matrices=[rma10,rma11]", "-n")
    out = run.stdout + run.stderr
    assert run.returncode != 0 and "unknown matrix rma11" in out and "valid names are dc2, scircuit" in out
