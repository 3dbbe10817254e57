"""The start-up check of a GPU profile: its device, then CuPy, each a one-line error."""

import pytest

from membound.run import config, detect


def test_a_gpu_profile_without_cupy_names_the_package_for_the_drivers_cuda(monkeypatch):
    monkeypatch.setattr(detect, "device_names", lambda: ["NVIDIA H100 80GB HBM3"])
    monkeypatch.setattr(detect.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(detect, "cuda_major", lambda: 13)
    with pytest.raises(config.ConfigError, match=r"profile 'h100' .* not installed: make install GPU=cuda13 "):
        detect.require("h100", config.load_gpu("h100"))


def test_cupy_advice_without_a_driver_version_and_on_amd():
    assert "GPU=cuda12 (or GPU=cuda13" in detect.cupy_package("nvidia", None)
    assert "ROCm" in detect.cupy_package("amd", None)
