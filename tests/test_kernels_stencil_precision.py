"""The stencils in fp32 and fp16 (issue 24): the numpy paths in the storage dtypes within the derived bound,
the bound itself against hand-computed values, the tensor-core layouts per MMA shape, shared memory per
element size, and (marker gpu) every CUDA kernel in every precision against the float64 reference."""

import itertools

import numpy as np
import pytest

from membound.kernels import stencil as S
from membound.kernels.stencil import launch as P
from membound.kernels.stencil import runner as stencil_cuda
from membound.kernels.stencil.cpu import b_operands
from membound.model import geometry
from membound.model.precision import PRECISIONS, decode, fmt, gamma, quantize, stencil_tolerance
from membound.run import measure

STENCILS = {"2d5pt": ("star", 2, 1, 3), "2d9pt": ("box", 2, 1, 3), "2d13pt": ("star", 2, 3, 1),
            "2d49pt": ("box", 2, 3, 1), "3d7pt": ("star", 3, 1, 3), "3d27pt": ("box", 3, 1, 3)}
RAGGED = {2: (45, 71), 3: (13, 11, 19)}
LOW = ("fp32", "fp16", "bf16")


def _case(name, precision, seed=0, field=None):
    shape, dims, radius, depth = STENCILS[name]
    rng = np.random.default_rng(seed)
    x = quantize(rng.random(field or RAGGED[dims]), precision)
    w = S.random_weights(rng, shape, dims, radius, precision)
    return S.Stencil(name, shape, dims, radius, depth), x, w, 2 * depth


def _check(out, st, impl, precision, x, w, steps):
    ref = S.reference(x, w, steps)
    tol = S.tolerance(impl, st if impl != "cc_naive" else P.Stencil(st.name, st.shape, st.dims, st.radius, 1),
                      precision, steps, w, ref, ref, float(decode(x, precision).max()))
    return measure.check(decode(np.asarray(out), precision), ref, tol, f"{st.name} {impl} {precision}"), tol


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("impl", [i.name for i in S.IMPLS if i.sparsity == "dense"])   # tc_sparse: test_stencil_sparse.py
@pytest.mark.parametrize("name", STENCILS)
def test_cpu_roles_in_every_precision_within_the_bound(name, impl, precision):
    st, x, w, steps = _case(name, precision)
    depth = 1 if impl == "cc_naive" else st.depth
    out = S.CPU[impl](x, w, steps, depth)
    assert out.dtype == fmt(precision).dtype and out.shape == x.shape
    err, tol = _check(out, st, impl, precision, x, w, steps)
    assert err <= tol and (precision == "fp64" or err > 0)        # rounded, within the bound


@pytest.mark.parametrize("precision", LOW)
def test_the_bound_fails_a_wrong_result(precision):
    """A kernel that drops the stencil's last point, or leaves one output stale, fails its bound."""
    st, x, w, steps = _case("2d9pt", precision)
    dropped = w.copy()
    dropped[-1, -1] = 0
    with pytest.raises(measure.CheckError):
        _check(S.CPU["cc_tb"](x, dropped, steps, st.depth), st, "cc_tb", precision, x, w, steps)
    out = S.CPU["tc"](x, w, steps, st.depth)
    stale = 1 if fmt(precision).u < 2**-8 else 10   # bf16's norm-wise bound (2^-8 a step) hides one stale point
    out[3:3 + stale, 5:5 + stale] = x[3:3 + stale, 5:5 + stale]   # of 3195: 100 of them it must not
    with pytest.raises(measure.CheckError):
        _check(out, st, "tc", precision, x, w, steps)


def test_stencil_tolerance_against_hand_computed_values():
    y = np.ones(64)
    u16, u32 = 2.0**-11, 2.0**-24
    # CUDA cores, fp16 stored, fp32 sums: 12 steps of 5 points, each (1 + u16)(1 + gamma_5(2^-24)) - 1
    e1 = (1 + u16) * (1 + 5 * u32 / (1 - 5 * u32)) - 1
    ref64 = (1 + gamma(5, 2.0**-53)) ** 12 - 1
    eta = 12 * 2.0**-25 * (1 + e1) ** 12 * np.sqrt(64) / np.linalg.norm(y)   # sqrt(N) / ||y|| = 1
    assert stencil_tolerance("fp16", "cuda_core", 5, 12, y, y) == pytest.approx((1 + e1) ** 12 - 1 + eta + ref64)
    # tensor cores, TF32: 4 launches of the 25-point fused stencil at t = 3
    u_b = (1 + gamma(15, 2.0**-53)) * (1 + u32) * (1 + u16) - 1
    e = (1 + u16) * (1 + u_b) * (1 + gamma(25, 2.0**-23)) * (1 + u32) - 1
    got = stencil_tolerance("fp32", "tensor_core", 5, 12, y, y, fused=25, depth=3)
    assert got == pytest.approx((1 + e) ** 4 - 1 + ref64, rel=1e-6)
    assert 3.9e-3 < got < 4e-3 and stencil_tolerance("fp64", "cuda_core", 5, 12, y, y) < 2e-14
    # R = || |W|^T |x| || / || W^T x ||: a signed result with cancellation widens the bound
    assert stencil_tolerance("fp32", "cuda_core", 5, 1, np.array([1.0, -1.0]), np.array([4.0, 4.0])) == pytest.approx(
        4 * stencil_tolerance("fp32", "cuda_core", 5, 1, np.array([1.0, -1.0]), np.array([1.0, 1.0])), rel=1e-3)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("name", STENCILS)
def test_tc_layout_per_mma_shape_rebuilds_the_fused_stencil(name, precision):
    """Each row's fragments hold the fused weights at dx = a + k c + i - j exactly once per output
    column j, k the precision's MMA k; fp16's a + radius is even (f16x2 words aligned)."""
    shape, dims, radius, depth = STENCILS[name]
    w = S.random_weights(np.random.default_rng(1), shape, dims, radius)
    wf = S.fuse(w, depth).reshape((1,) * (3 - dims) + S.fuse(w, depth).shape)
    rows, frags = S.tc_rows(S.fuse(w, depth), S.fused_support(w != 0, depth), precision)
    m, n, k = geometry.mma_shape(precision)
    rad, rz = wf.shape[-1] // 2, wf.shape[0] // 2
    assert frags.shape[1:] == (k, n) and len(frags) == rows[:, 3].sum()
    rebuilt, f = np.zeros_like(wf), 0
    for dz, dy, a, nk in rows:
        assert (a + rad) % geometry.PACK.get(precision, 1) == 0
        for c in range(nk):
            for i in range(k):
                for j in range(n):
                    if frags[f, i, j]:
                        rebuilt[dz + rz, dy + rad, a + k * c + i - j + rad] += frags[f, i, j] / n
            f += 1
    np.testing.assert_allclose(rebuilt, wf, rtol=1e-15, atol=0)


def test_sparsity_per_precision_hand_computed():
    """Star 2D r = 1, t = 1: rows of width 1, 3, 1 take 2, 3, 2 chunks of k = 4 (fp64), 1, 2, 1 of 8 (TF32)
    and 1, 1, 1 of 16 (f16; the centre row lowered from a = -1 to -2, width 4 <= 8)."""
    assert geometry.tc_sparsity("star", 2, 1, 1, "fp64") == pytest.approx(5 / (4 * 7))
    assert geometry.tc_sparsity("star", 2, 1, 1, "fp32") == pytest.approx(5 / (8 * 4))
    assert geometry.tc_sparsity("star", 2, 1, 1, "fp16") == pytest.approx(5 / (16 * 3))
    assert geometry.tc_sparsity("star", 2, 1, 1, "bf16") == geometry.tc_sparsity("star", 2, 1, 1, "fp16")   # m16n8k16
    with pytest.raises(ValueError, match="no tensor-core stencil layout in 'fp8'"):
        geometry.mma_shape("fp8")


@pytest.mark.parametrize("precision", PRECISIONS)
def test_lane_major_b_fragments_follow_the_ptx_layouts(precision):
    """Lane 4g + t: fp64 B(t, g); TF32 B(t, g), B(t + 4, g); f16 B(2t, g), B(2t + 1, g), B(2t + 8, g), B(2t + 9, g)."""
    k = geometry.mma_shape(precision)[2]
    frags = np.arange(2 * k * 8, dtype=float).reshape(2, k, 8) / 1024
    lanes = stencil_cuda.lane_major(frags, precision).reshape(2, 32, -1)
    assert lanes.dtype == fmt(precision).dtype and lanes.nbytes == 2 * 32 * 8
    half = lambda t: [2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9]  # noqa: E731
    ks = {"fp64": lambda t: [t], "fp32": lambda t: [t, t + 4], "fp16": half, "bf16": half}
    for lane in range(32):
        g, t = divmod(lane, 4)
        np.testing.assert_array_equal(decode(lanes[1, lane], precision), frags[1, ks[precision](t), g])


def test_b_operands_are_rounded_as_the_tensor_cores_see_them():
    w = S.random_weights(np.random.default_rng(2), "box", 2, 1, "fp32")
    _, frags = b_operands(w, 2, "fp32")
    bits = frags.astype(np.float32).view(np.uint32)
    assert frags.dtype == np.float32 and not (bits & 0x1FFF).any()       # tf32: 10 stored significand bits
    _, half = b_operands(w, 2, "fp16")
    assert half.dtype == np.float16
    _, bf = b_operands(w, 2, "bf16")                                      # bf16 values, decoded to float32
    assert bf.dtype == np.float32 and not (bf.view(np.uint32) & 0xFFFF).any()


def test_shared_memory_follows_the_element_size():
    for name, (shape, dims, radius, depth) in STENCILS.items():
        st = S.Stencil(name, shape, dims, radius, depth)
        for impl, p in itertools.product(("cc_naive", "cc_tb"), PRECISIONS):
            d, e = (1 if impl == "cc_naive" else depth), fmt(p).bytes
            tile = P.cc_tile(st, d, "h100", e)            # the precision's tile (TUNED may key it by e)
            if tile["kernel"] == "stencil_stream":        # chunks of slices of rows of whole vectors, per precision
                vw, slots = 16 // e, 2 if tile["CPY"] == 2 else tile["PF"] + 1
                rows = tile["BY"] + 2 * radius if dims == 3 else 1
                sx = (tile["NTX"] * tile["UV"] + 2 * -(-radius // vw)) * vw
                assert P.shared_bytes(impl, st, "h100", p) == e * slots * tile["CH"] * rows * sx
                continue
            words = P.cc_launch(st, d, tile=tile, elem=8).smem // 8
            if tile.get("VEC"):   # rows of whole 16-byte vectors, padded so the first column is a vector's first
                pitch = {b: -(-((16 // b - d * radius % (16 // b)) % (16 // b) + tile["BX"] + 2 * d * radius)
                             // (16 // b)) * (16 // b) for b in (8, e)}
                assert words % pitch[8] == 0
                words = words // pitch[8] * pitch[e]
            assert P.shared_bytes(impl, st, "h100", p) == e * words
        for p in PRECISIONS:
            name_, macros, smem, tile = P.tc_config(st, 10, False, p)
            m, _, k = geometry.mma_shape(p)
            rem, mod = P.PITCH_MOD[fmt(p).bytes]
            assert macros["ELEM"] == fmt(p).bytes and macros["PITCH"] % mod == rem
            assert macros["PITCH"] >= 8 * tile["NT"] * tile["WX"] + 2 * radius * depth + k - 1
            planes = 2 if dims == 3 else 1
            assert smem == fmt(p).bytes * planes * (m * tile["WY"] + 2 * radius * depth) * macros["PITCH"] + 8 * 32 * 10


# --------------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
@pytest.mark.parametrize("precision", LOW)
@pytest.mark.parametrize("impl", [i.name for i in S.IMPLS if i.sparsity == "dense"])   # tc_sparse: test_stencil_sparse.py
@pytest.mark.parametrize("name", STENCILS)
def test_gpu_roles_in_fp32_and_fp16_within_the_bound(name, impl, precision):
    import cupy as cp

    st, x, w, steps = _case(name, precision, field={2: (45, 71), 3: (13, 11, 150)}[STENCILS[name][1]])
    out = S._cuda_runner(impl, st, w, cp.asarray(x), steps)()
    assert out.dtype == fmt(precision).dtype
    _check(cp.asnumpy(out), st, impl, precision, x, w, steps)


@pytest.mark.gpu
@pytest.mark.parametrize("precision", LOW)
@pytest.mark.parametrize("impl", ["cc_tb", "tc", "tc_twin"])
@pytest.mark.parametrize("name", ["2d5pt", "2d49pt", "3d7pt"])
def test_gpu_other_depths_in_fp32_and_fp16(name, impl, precision):
    """Depth 2 and the deepest (the role depths run above; tools/sweep_depths.py runs the rest)."""
    import cupy as cp

    shape, dims, radius, _ = STENCILS[name]
    limit = S._shared_limit("cuda")
    for depth in (2, P.MAX_DEPTH[dims]):
        st, x, w, _ = _case(name, precision, seed=depth)
        st = S.Stencil(name, shape, dims, radius, depth)
        if P.refusal(impl, st, limit, S.device_gpu(), precision):
            continue
        out = S._cuda_runner(impl, st, w, cp.asarray(x), 2 * depth)()
        _check(cp.asnumpy(out), st, impl, precision, x, w, 2 * depth)


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_gpu_fp16_sampled_path_writes_a_checked_row(precision):
    from membound.kernels import harness

    tc = next(i for i in S.IMPLS if i.name == "tc")
    row = harness.measure(tc, lambda: S.prepare(tc, S.Stencil("2d9pt", "box", 2, 1, 3), (2100, 2000), 6, "cuda",
                                                np.random.default_rng(3), None, precision), "cuda", 1, 2)
    assert row["precision"] == precision and "sampled" in row["note"] and "rel_err <=" in row["note"]
