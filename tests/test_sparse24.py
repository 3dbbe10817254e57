"""The 2:4 / 1:2 transform of the fused stencils (membound.model.sparse24) and paper 002's equations
it reports, on the paper's own numbers: exactness on every stencil of the config at several depths,
the structure mma.sp requires, the metadata, S, alpha and padding, and the specs' sparse peaks."""

import math

import numpy as np
import pytest
import scipy.ndimage

from membound.model import equations as E
from membound.model import peaks, sparse24
from membound.model.geometry import fuse, support
from membound.run import config

STENCILS = {"2d5pt": ("star", 2, 1), "2d9pt": ("box", 2, 1), "2d13pt": ("star", 2, 3),
            "2d49pt": ("box", 2, 3), "3d7pt": ("star", 3, 1), "3d27pt": ("box", 3, 1)}


def test_the_stencils_are_the_configs():
    import yaml
    from pathlib import Path

    kernels = yaml.safe_load((Path(__file__).parents[1] / "config" / "config.yaml").read_text())["stencil"]["kernels"]
    assert {n: (k["shape"], k["dims"], k["radius"]) for n, k in kernels.items()} == STENCILS


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name", list(STENCILS))
def test_the_sparse_form_reproduces_the_dense_product_exactly(name, precision):
    """In float64 the transformed product equals the fused stencil (scipy) up to summation order, at
    depths 1-3 (3D) and 1, 2, 4 (2D), in both layouts, through the compressed operand and its metadata."""
    shape, dims, radius = STENCILS[name]
    rng = np.random.default_rng(7)
    for t, layout in [(t, lay) for t in ((1, 2, 3) if dims == 3 else (1, 2, 4)) for lay in ("free", "runs")]:
        w = np.where(support(shape, dims, radius), rng.uniform(0.5, 1.5, (2 * radius + 1,) * dims), 0.0)
        form = sparse24.transform(shape, dims, radius, t, precision, w, layout)
        kept, chunk = sparse24.GRANULARITY[precision]
        assert sparse24.structured(form.a, kept, chunk)
        values, nibbles = sparse24.compress(form.a, precision)
        assert np.array_equal(sparse24.decompress(values, nibbles, precision), form.a)
        x = rng.random((9, 21, 35) if dims == 3 else (41, 67))
        got = sparse24.apply(form, x, sparse24.decompress(values, nibbles, precision))
        np.testing.assert_allclose(got, scipy.ndimage.correlate(x, fuse(w, t), mode="wrap"), rtol=1e-12)


def test_the_banded_operand_is_not_structured_before_the_transform():
    """The dense layout (columns in order) breaks 2:4 for any row wider than 2: hence the permutation."""
    band = np.zeros((16, 32))
    for i in range(16):
        band[i, i:i + 3] = 1.0
    assert not sparse24.structured(band, 2, 4) and not sparse24.structured(band, 1, 2)


def test_metadata_nibbles_are_the_isas_values():
    """PTX ISA 9.7.14.6.1: f16 indices idx0 | idx1 << 2 ascending (0b0100 .. 0b1110); tf32 0b0100 / 0b1110."""
    a = np.array([[0, 3, 0, 4, 5, 0, 0, 0]], dtype=float)
    _, nib = sparse24.compress(a, "fp16")
    assert list(nib[0]) == [0b1101, 0b0100]        # (1, 3); a lone nonzero at 0 keeps (0, 1)
    _, nib = sparse24.compress(np.array([[0, 2, 3, 0, 0, 0, 0, 0]], dtype=float), "fp32")
    assert list(nib[0]) == [0b1110, 0b0100, 0b0100, 0b0100]
    valid = {0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110}
    f = sparse24.transform("box", 2, 1, 3, "fp16")
    assert set(np.unique(sparse24.compress(f.a, "fp16")[1])) <= valid
    with pytest.raises(ValueError, match="1:2"):
        sparse24.compress(np.ones((1, 4)), "fp32")


def test_eq2_S_is_useful_over_logical_products():
    """Paper 002 eq. 2: C_TC = C / S. Per 16 x 8 tile the MMAs multiply 128 K16 nmma logical products,
    128 K^(t) of them useful; S <= 1/2 (mma.sp's logical operand is at least half zeros)."""
    for precision in ("fp32", "fp16"):
        f = sparse24.transform("box", 2, 1, 3, precision)
        k = sparse24.SP_SHAPE[precision][2]
        assert f.sparsity == pytest.approx(f.points / (len(f.a) * k)) and f.sparsity <= 0.5
        assert f.s_kept == pytest.approx(2 * f.sparsity)
    f = sparse24.transform("box", 2, 1, 3, "fp32", layout="free")   # 7 rows x 22 columns + 6 pads = 10 MMAs of k16
    assert (f.real, f.padded, len(f.a), f.sparsity) == (154, 6, 10, pytest.approx(49 / 160))


def test_eq3_c_tc_is_the_mmas_logical_work():
    """Eq. 3: C_TC = alpha / S C^(t) = 2 nmma k per output point, what the kernel's MMAs execute."""
    for name, (shape, dims, radius) in STENCILS.items():
        f = sparse24.transform(shape, dims, radius, 2, "fp16")
        k = E.stencil_points(shape, dims, radius)
        c_tc = E.stencil_tc(k, 2, E.fusion_redundancy(shape, dims, radius, 2), f.sparsity, 2)[0]
        assert c_tc == pytest.approx(2 * len(f.a) * 32), name


def test_eq9_eq10_alpha_on_the_papers_numbers():
    """Eq. 9-10 (Tables 2-3): Box-2D1R t=3 1.81, t=7 3.57; Box-2D3R t=1 1; Box-3D1R t=3 4.23, where
    Sec. 5.3's text says 1.81 (module docstring) and Table 3's I = 85.75 needs 4.23."""
    assert E.fusion_redundancy("box", 2, 1, 3) == pytest.approx(1.81, abs=0.005)
    assert E.fusion_redundancy("box", 2, 1, 7) == pytest.approx(3.57, abs=0.005)
    assert E.fusion_redundancy("box", 2, 3, 1) == 1.0
    a3 = E.fusion_redundancy("box", 3, 1, 3)
    assert a3 == pytest.approx(343 / 81) and E.stencil_tc(27, 3, a3, 0.5, 8)[2] == pytest.approx(85.75)
    assert E.stencil_tc(27, 3, 1.81, 0.5, 8)[2] != pytest.approx(85.75, rel=0.1)   # the text's 1.81 does not


def test_eq11_spider_needs_two_different_S():
    """Eq. 11 (Table 2 row 9, Table 3 case 6): SPIDER Box-2D1R t=7 float C = 960 with S = 15/32, but
    Box-3D1R t=7 I = 1795.21 with S = 0.47 exactly."""
    a2 = E.fusion_redundancy("box", 2, 1, 7)
    assert E.stencil_tc(9, 7, a2, 15 / 32, 4)[0] == pytest.approx(960)
    assert E.stencil_tc(9, 7, a2, 0.47, 4)[0] == pytest.approx(957.4, abs=0.1)
    assert E.stencil_tc(27, 7, E.fusion_redundancy("box", 3, 1, 7), 0.47, 4)[2] == pytest.approx(1795.21, abs=0.01)


def test_eq12_eq20_sparse_tensor_cores_keep_I_and_double_the_ridge():
    """Eq. 12 (the P_TC,actual line) and eq. 20, Table 4 (A100, Box-2D1R t=7 float, I = 120): the
    ridge 81 dense, 161 sparse (B = 1.935 TB/s), so SPIDER is compute-bound dense, memory-bound
    sparse: scenario 4 -> 3 (Table 3 case 3). The model bounds the gain by B I / P_TC = 232.2 / 156 =
    1.49; Table 4 measures 3.06x (its dense SPIDER variant at 327 of the sparse 1003 GStencil/s), more
    than its own model allows."""
    a = E.fusion_redundancy("box", 2, 1, 7)
    i = E.stencil_tc(9, 7, a, 15 / 32, 4)[2]
    assert i == pytest.approx(120) and round(E.machine_balance(156, 1.935)) == 81
    assert round(E.machine_balance(312, 1.935)) == 161
    dense = E.scenario(19.5e12, 156e12, 1.935e12, 9, 7, a, 15 / 32, 4)
    sparse = E.scenario(19.5e12, 312e12, 1.935e12, 9, 7, a, 15 / 32, 4)
    assert (dense, sparse) == (4, 3)
    gain = E.tc_actual_perf(312e12, 1.935e12, i, a, 15 / 32) / E.tc_actual_perf(156e12, 1.935e12, i, a, 15 / 32)
    assert gain == pytest.approx(1.935 * 120 / 156) and gain < 3.06 and 1002.94 / 327.39 == pytest.approx(3.06, abs=0.01)


def test_specs_sparse_peaks_are_twice_the_dense_with_sources():
    for name in ("a100", "h100", "h200", "gh200"):
        gpu = config.load_gpu(name)
        for p in ("fp32", "fp16"):
            pk = peaks.at(gpu, p)
            assert pk.sparse_tensor_core == pytest.approx(2 * pk.tensor_core, abs=1.0), (name, p)
            assert pk.peak("tensor_core", "2:4") == pk.sparse_tensor_core and pk.peak("cuda_core", "2:4") is None
            assert pk.sparse_mma_shape == sparse24.SP_SHAPE[p]
            assert "sparsity" in gpu["sources"]["peak_TFLOPs"][p]["sparse_tensor_core"]
        assert peaks.at(gpu, "fp64").sparse_tensor_core is None      # no FP64 sparse tensor cores
    assert peaks.at(config.load_gpu("h100"), "fp32").sparse_tensor_core == 989.0
    assert peaks.at(config.load_gpu("h100"), "fp16").sparse_tensor_core == 1979.0
    for name in ("mi250x", "cpu"):
        assert all(peaks.at(config.load_gpu(name), p).sparse_tensor_core is None for p in ("fp32", "fp16"))


def test_table_reports_S_alpha_padding_per_stencil_and_depth():
    rows = sparse24.table({"2d9pt": ("box", 2, 1)}, [1, 3], ["fp32"], layout="free")
    assert [(r["depth"], r["points"], r["mmas"]) for r in rows] == [(1, 9, 4), (3, 49, 10)]
    assert rows[1]["alpha"] == pytest.approx(49 / 27) and rows[1]["padding"] == pytest.approx(6 / 160)
    assert all(0 < r["S"] <= 0.5 and math.isclose(r["S_kept"], 2 * r["S"]) for r in rows)
