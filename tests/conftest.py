"""Shared test setup: GPU tests (marker `gpu`) are skipped where no CUDA device is usable; `cpu_run` is
the suite's one run of the cpu profile's workflow (cpu_workflow.py), made at its first use by whichever
pytest-xdist worker asks first. Under xdist (`make test`: `-n 2 --dist loadgroup`) the tests that share
one of SHARED's module fixtures run on one worker, so that each is made once."""

import fcntl
import shutil

import pytest

import cpu_workflow
from membound.run import runinfo

# The module fixtures that run a workflow (a minute or more each; `runs`: the SLURM cluster's): a test
# using one joins the xdist group named after it. test_provenance's `recorded` (18 s, then 48 dry runs)
# is made by each worker instead, its tests spread over both.
SHARED = ("runs", "reference_run", "tiny_run", "rendered_claims")


@pytest.hookimpl(tryfirst=True)   # before xdist reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        if shared := [name for name in SHARED if name in item.fixturenames]:
            item.add_marker(pytest.mark.xdist_group(shared[0]))
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
