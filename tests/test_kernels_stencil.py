"""The six FP64 stencils in three roles: CPU paths and (marker gpu) CUDA kernels against the reference."""

import numpy as np
import pandas as pd
import pytest

from membound import measure, model
from membound.kernels import harness
from membound.kernels import stencil as S

NAMES = [i.name for i in S.IMPLS]

STENCILS = {"2d5pt": ("star", 2, 1, 3), "2d9pt": ("box", 2, 1, 3), "2d13pt": ("star", 2, 3, 1),
            "2d49pt": ("box", 2, 3, 1), "3d7pt": ("star", 3, 1, 3), "3d27pt": ("box", 3, 1, 3)}
RAGGED = {2: (45, 71), 3: (13, 11, 19)}       # not multiples of any tile


def _case(name, seed=0):
    shape, dims, radius, depth = STENCILS[name]
    rng = np.random.default_rng(seed)
    x = rng.random(RAGGED[dims])
    w = S.random_weights(rng, shape, dims, radius)
    return S.Stencil(name, shape, dims, radius, depth), x, w, 2 * depth


def test_reference_is_a_periodic_weighted_sum():
    rng = np.random.default_rng(1)
    x = rng.random((9, 11))
    w = S.random_weights(rng, "star", 2, 1)
    expect = sum(w[1 + dy, 1 + dx] * np.roll(x, (-dy, -dx), axis=(0, 1))
                 for dy, dx in [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)])
    np.testing.assert_allclose(S.reference(x, w, 1), expect, rtol=1e-14)
    assert len(np.unique(w[w != 0])) == 5          # a distinct weight per point


def test_fusion_matches_sequential_steps():
    rng = np.random.default_rng(2)
    x = rng.random((20, 23))
    w = S.random_weights(rng, "box", 2, 1)
    np.testing.assert_allclose(S.reference(x, S.fuse(w, 3), 1), S.reference(x, w, 3), rtol=1e-13)


@pytest.mark.parametrize("name", STENCILS)
@pytest.mark.parametrize("impl", NAMES)
def test_cpu_roles_match_reference(name, impl):
    st, x, w, steps = _case(name)
    depth = 1 if impl == "cc_naive" else st.depth
    measure.check(S.CPU[impl](x, w, steps, depth), S.reference(x, w, steps), S.TOL, f"{name} {impl}")


def test_corrupted_output_fails():
    st, x, w, steps = _case("2d9pt")
    out = S.CPU["tc"](x, w, steps, st.depth)
    out[7, 3] += 1e-6
    with pytest.raises(measure.CheckError):
        measure.check(out, S.reference(x, w, steps), S.TOL, "corrupted")


@pytest.mark.parametrize("name", STENCILS)
def test_sampled_reference(name):
    st, x, w, steps = _case(name, seed=3)
    points = np.random.default_rng(4).integers(0, x.shape, size=(16, x.ndim))
    np.testing.assert_allclose(S.sampled_reference(x, w, steps, points),
                               S.reference(x, w, steps)[tuple(points.T)], rtol=1e-12)


def test_tc_sparsity_values():
    assert S.tc_sparsity("box", 2, 1, 3) == pytest.approx(49 / 112)     # docstring example
    assert S.tc_sparsity("box", 2, 3, 1) == pytest.approx(49 / 112)
    assert S.tc_sparsity("star", 2, 1, 3) == pytest.approx(25 / 80)
    for shape, dims, radius, depth in STENCILS.values():
        mask = S.fused_support(S.support(shape, dims, radius), depth)
        assert mask.sum() == model.fused_points(shape, dims, radius, depth)
        assert 0 < S.tc_sparsity(shape, dims, radius, depth) <= 1


def test_tc_operands_are_the_fused_weights():
    rng = np.random.default_rng(5)
    w = S.random_weights(rng, "star", 2, 1)
    wf = S.fuse(w, 2)
    rows, frags = S.tc_rows(wf, S.fused_support(w != 0, 2))
    # every fused weight appears 8 times (once per output column) across the B operands
    assert np.isclose(frags.sum(), 8 * wf.sum())
    assert rows[:, 3].sum() == len(frags)


@pytest.mark.parametrize("shape", ["star", "box"])
def test_tc_groups_keep_every_fragment_of_every_row(shape):
    """stencil_tc3.cu's table: each (row, chunk) fragment sits where G(dy, a, nk, mask, f0) says."""
    w = S.random_weights(np.random.default_rng(6), shape, 3, 1)
    rows, frags = S.tc_rows(S.fuse(w, 3), S.fused_support(w != 0, 3))
    table, grouped = S.tc_groups(rows, frags, 3)
    first = dict(zip(map(tuple, rows.tolist()), np.concatenate([[0], np.cumsum(rows[:, 3])])))
    seen = 0
    for g in table.replace(")G", ") G").split():
        dy, a, nk, mask, f0 = map(int, g[2:-1].split(","))
        js = [j for j in range(7) if mask >> j & 1]
        for c in range(nk):
            for rank, j in enumerate(js):
                assert np.array_equal(grouped[f0 + c * len(js) + rank], frags[first[3 - j, dy, a, nk] + c])
                seen += 1
    assert seen == len(frags) == len(grouped)


def test_cli_cpu_writes_checked_rows(tmp_path):
    out = tmp_path / "2d5pt.csv"
    S.main(["--backend", "cpu", "--stencil", "2d5pt", "--shape", "star", "--dims", "2", "--radius", "1",
            "--depth", "3", "--domain", "40x52", "--steps", "6", "--warmup", "0", "--reps", "2", "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(frame.columns) == measure.ROW_COLUMNS
    assert list(frame.impl) == NAMES
    assert list(frame.unit) == ["cuda_core", "cuda_core", "tensor_core", "cuda_core"]
    assert list(frame.role) == ["Brick", "EBISU", "ConvStencil", "ConvStencil twin"]
    assert list(frame.depth) == [1, 3, 3, 3]
    assert (frame.rel_err < S.TOL).all() and (frame.value > 0).all()
    assert (frame.work_items == 40 * 52 * 6).all() and (frame.metric == "GStencil/s").all()


@pytest.mark.parametrize("argv, match", [(["--domain", "40x52x3"], "--domain"), (["--steps", "4"], "--steps")])
def test_cli_bad_input(tmp_path, argv, match):
    base = {"--domain": "40x52", "--steps": "6"}
    base.update(dict(zip(argv[::2], argv[1::2])))
    args = ["--backend", "cpu", "--stencil", "2d5pt", "--shape", "star", "--dims", "2", "--radius", "1",
            "--depth", "3", "--warmup", "0", "--reps", "1", "--out", str(tmp_path / "x.csv")]
    with pytest.raises(SystemExit, match=match):
        S.main(args + [v for kv in base.items() for v in kv])
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.gpu
@pytest.mark.parametrize("name", STENCILS)
@pytest.mark.parametrize("impl", NAMES)
def test_gpu_roles_match_reference(name, impl):
    import cupy as cp

    st, x, w, steps = _case(name, seed=6)
    out = S._cuda_runner(impl, st, w, cp.asarray(x), steps)()
    measure.check(cp.asnumpy(out), S.reference(x, w, steps), S.TOL, f"{name} {impl}")


@pytest.mark.gpu
def test_gpu_check_domain_and_sampled_path():
    tc = S.IMPLS[NAMES.index("tc")]
    row = harness.measure(tc, lambda: S.prepare(tc, S.Stencil("2d9pt", "box", 2, 1, 3), (2100, 2000), 6, "cuda",
                                                np.random.default_rng(7)), "cuda", 0, 1)
    assert row["rel_err"] < S.TOL and "sampled" in row["note"]


EVERY_DEPTH = [(dims, shape, radius, depth) for dims, shape, radius in
               [(2, "star", 1), (2, "box", 1), (2, "star", 3), (2, "box", 3), (3, "star", 1), (3, "box", 1)]
               for depth in range(1, S.tuning.MAX_DEPTH[dims] + 1)]


@pytest.mark.gpu
@pytest.mark.parametrize("dims, shape, radius, depth", EVERY_DEPTH)
def test_gpu_cuda_core_kernels_every_depth(dims, shape, radius, depth):
    """The tuned CUDA-core kernel of every stencil shape at every depth the config may ask for, on a
    ragged field (2D stencil_tb2: many short segments of rows, as the grid fills the GPU's SMs)."""
    import cupy as cp

    st = S.Stencil("x", shape, dims, radius, depth)
    rng = np.random.default_rng(10)
    x = rng.random((83, 61) if dims == 2 else (37, 29, 33))
    w = S.random_weights(rng, shape, dims, radius)
    out = S._cuda_runner("cc_tb", st, w, cp.asarray(x), 2 * depth)()
    measure.check(cp.asnumpy(out), S.reference(x, w, 2 * depth), S.TOL, f"{dims}d {shape} r={radius} t={depth}")


@pytest.mark.gpu
@pytest.mark.parametrize("dims, shape, radius, depth", [(2, "star", 1, 3), (2, "box", 3, 1), (3, "star", 1, 1),
                                                        (3, "box", 1, 1), (3, "star", 2, 1), (3, "star", 1, 3),
                                                        (3, "box", 1, 3), (3, "star", 1, 2)])
def test_gpu_cuda_core_kernels_over_several_ragged_blocks(dims, shape, radius, depth):
    """Every CUDA-core kernel over several blocks along its streaming axis, the last one ragged (2D:
    a tall field, stencil_tb2's segments of rows; 3D: z, BZ planes per block)."""
    import cupy as cp

    st = S.Stencil("x", shape, dims, radius, depth)
    tile = S.tuning.cc_tile(dims, shape, radius, depth)
    rng = np.random.default_rng(8)
    x = rng.random((4133, 45) if dims == 2 else (2 * tile["BZ"] + 5, 37, 45))
    w = S.random_weights(rng, shape, dims, radius)
    out = S._cuda_runner("cc_tb", st, w, cp.asarray(x), 2 * depth)()
    measure.check(cp.asnumpy(out), S.reference(x, w, 2 * depth), S.TOL, f"{dims}d {shape} r={radius} t={depth}")


@pytest.mark.gpu
@pytest.mark.parametrize("impl", ["tc", "tc_twin"])
@pytest.mark.parametrize("shape, radius, depth", [("star", 1, 3), ("box", 1, 3), ("star", 2, 1)])
def test_gpu_tc_z_streaming_kernel_over_several_ragged_z_blocks(impl, shape, radius, depth):
    import cupy as cp

    st = S.Stencil("3d", shape, 3, radius, depth)
    rng = np.random.default_rng(9)
    x = rng.random((S.TC3_TILE["BZ"] * 2 + 5, 37, 45))     # three z blocks, the last one ragged
    w = S.random_weights(rng, shape, 3, radius)
    out = S._cuda_runner(impl, st, w, cp.asarray(x), 2 * depth)()
    measure.check(cp.asnumpy(out), S.reference(x, w, 2 * depth), S.TOL, f"3d {shape} r={radius} t={depth} {impl}")
