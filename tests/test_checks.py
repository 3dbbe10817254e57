"""Checks where the data lie: on the device for device arrays (no copy of a large output to the
host), on the host otherwise; the same error either way, and a NaN never passes."""

import numpy as np
import pytest

from membound.kernels import stencil as S
from membound.kernels.stencil import cpu as stencil_cpu
from membound.run import measure


def test_host_check_is_unchanged_and_nan_never_passes():
    ref = np.linspace(1.0, 2.0, 1000)
    assert measure.rel_err(ref * (1 + 1e-13), ref) == pytest.approx(1e-13, rel=1e-6)
    assert measure.array_module(ref, ref) is np and measure.to_host([1.0]).tolist() == [1.0]
    with pytest.raises(measure.CheckError, match="relative error inf"):
        measure.check(np.where(ref > 1.5, np.nan, ref), ref, 1e-12, "x")


def test_neighbourhoods_gather_the_periodic_patch_of_each_point():
    x = np.arange(5 * 7, dtype=float).reshape(5, 7)
    patch = stencil_cpu.neighbourhoods(x, np.array([[0, 6], [2, 3]]), 1)
    assert patch.shape == (2, 3, 3)
    assert patch[0].tolist() == [[33, 34, 28], [5, 6, 0], [12, 13, 7]]   # rows 4, 0, 1; columns 5, 6, 0
    assert patch[1].tolist() == x[1:4, 2:5].tolist()


@pytest.mark.gpu
def test_device_check_equals_the_host_check_and_nan_never_passes():
    cp = pytest.importorskip("cupy")
    ref = np.random.default_rng(0).uniform(-1, 1, 1 << 20)
    out = ref + 1e-14
    assert measure.array_module(cp.asarray(out), cp.asarray(ref)) is cp
    assert measure.rel_err(cp.asarray(out), cp.asarray(ref)) == pytest.approx(measure.rel_err(out, ref), rel=1e-9)
    assert measure.rel_err(cp.asarray(out), ref) == pytest.approx(measure.rel_err(out, ref), rel=1e-9)  # mixed: host
    bad = cp.asarray(out)
    bad[7] = cp.nan
    assert measure.rel_err(bad, cp.asarray(ref)) == float("inf")


@pytest.mark.gpu
def test_sampled_reference_on_the_device_equals_the_host_one():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(1)
    x, w = rng.random((40, 36, 30)), S.random_weights(rng, "box", 3, 1)
    points = rng.integers(0, x.shape, size=(32, 3))
    np.testing.assert_allclose(S.sampled_reference(cp.asarray(x), w, 6, points), S.sampled_reference(x, w, 6, points),
                               rtol=1e-13)
