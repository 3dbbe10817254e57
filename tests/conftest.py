"""Shared test setup: GPU tests (marker `gpu`) are skipped where no CUDA device is usable; `cpu_run` is
the suite's one run of the cpu profile's workflow (cpu_workflow.py), made at its first use by whichever
pytest-xdist worker asks first (`make test`: `-n 2 --dist loadscope`, each test module on one worker,
so its module fixtures are made once, the modules that run the workflow first)."""

import fcntl
import shutil

import pytest

import cpu_workflow
from membound import kept
from membound.run import runinfo


# The modules that run the workflow, longest first: they come first, so that under xdist (`make test`,
# `--no-loadscope-reorder`) each starts on a free worker while the short modules fill the other's time.
FIRST = ("test_slurm.py", "test_workflow.py", "test_recovery.py", "test_provenance.py", "test_report.py",
         "test_originals_workflow.py")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: FIRST.index(item.path.name) if item.path.name in FIRST else len(FIRST))
    if runinfo.has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU with CuPy here")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cpu_run(tmp_path_factory, worker_id):
    """A copy of the checkout after the cpu profile's `all` on one matrix and its report (cpu_workflow.REPORT), shared by
    every test that only reads it; a test that changes it works on its own copy (shutil.copytree). Made once for
    all xdist workers, in their common temporary folder: the first to ask makes it, another waits (a file lock)."""
    shared = tmp_path_factory.getbasetemp()
    shared = shared if worker_id == "master" else shared.parent
    run, made = shared / "cpu" / "membound", shared / "cpu.made"
    with open(shared / "cpu.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not made.exists():
            shutil.rmtree(run.parent, ignore_errors=True)   # a failed attempt's
            cpu_workflow.run_all(run)
            made.touch()
    return run


@pytest.fixture
def kept_source(tmp_path, monkeypatch):
    """membound.kept's cache under tmp_path/cache, for a package whose source is tmp_path/src/membound
    (returned); the source digest is read anew before and after."""
    source = tmp_path / "src" / "membound"
    source.mkdir(parents=True)
    (source / "__init__.py").write_text("")
    monkeypatch.setattr(kept, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(kept, "SOURCE", source)
    kept.digest.cache_clear()
    yield source
    kept.digest.cache_clear()
