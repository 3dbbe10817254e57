"""Shared test setup: GPU tests (marker `gpu`) are skipped where no CUDA device is usable; `cpu_run` is
the suite's one run of the cpu profile's workflow (cpu_workflow.py), made at its first use."""

import pytest

import cpu_workflow
from membound.run import runinfo


def pytest_collection_modifyitems(config, items):
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
