"""Shared test setup: GPU tests (marker `gpu`) are skipped where no CUDA device is usable."""

import pytest

from membound.run import runinfo


def pytest_collection_modifyitems(config, items):
    if runinfo.has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU with CuPy here")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
