"""Shared test setup: GPU tests (marker `gpu`) are skipped where no CUDA device is usable; `cpu_run` is
the suite's one run of the cpu profile's workflow (cpu_workflow.py), made at its first use. Under
pytest-xdist (`make test`: `-n 2 --dist loadgroup`) the tests that share one of SHARED's fixtures run on
one worker, so that each is made once."""

import pytest

import cpu_workflow
from membound.run import runinfo

# The module or session fixtures that run a workflow (a minute or more each): a test using one joins the
# xdist group of the first it uses (cpu_run first: the SLURM tests compare with it). test_provenance's
# `recorded` (18 s, then 48 dry runs) is made by each worker instead, its tests spread over both.
SHARED = ("cpu_run", "reference_run", "tiny_run", "rendered_claims")


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
def cpu_run(tmp_path_factory):
    """A copy of the checkout after the cpu profile's `all` on one matrix and its report (cpu_workflow.REPORT), shared by
    every test that only reads it; a test that changes it works on its own copy (shutil.copytree)."""
    return cpu_workflow.run_all(tmp_path_factory.mktemp("cpu") / "membound")
