"""The six stencils in three roles: CPU paths and (marker gpu) CUDA kernels against the reference (fp64 here;
the other precisions: tests/test_kernels_stencil_precision.py)."""

import itertools
from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest

from membound.kernels import harness
from membound.kernels import stencil as S
from membound.kernels.stencil import launch as P
from membound.kernels.stencil import runner as stencil_cuda
from membound.kernels.stencil.tiles import BASES, CC2, ST, TB2, TUNED
from membound.model import equations
from membound.model.precision import PRECISIONS, fmt
from membound.run import config, measure

NAMES = [i.name for i in S.IMPLS if i.sparsity == "dense"]   # tc_sparse: tests/test_stencil_sparse.py

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
        assert mask.sum() == equations.fused_points(shape, dims, radius, depth)
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


@pytest.mark.parametrize("argv, match", [(["--domain", "40x52x3"], "--domain"), (["--steps", "0"], "--steps"),
                                         (["--depths", "9"], "depth 9 is outside the 2D kernels' 1..8")])
def test_cli_bad_input(tmp_path, argv, match):
    base = {"--domain": "40x52", "--steps": "6"}
    base.update(dict(zip(argv[::2], argv[1::2])))
    args = ["--backend", "cpu", "--stencil", "2d5pt", "--shape", "star", "--dims", "2", "--radius", "1",
            "--depth", "3", "--warmup", "0", "--reps", "1", "--out", str(tmp_path / "x.csv")]
    with pytest.raises(SystemExit, match=match):
        S.main(args + [v for kv in base.items() for v in kv])
    assert not (tmp_path / "x.csv").exists()


def test_cli_cpu_runs_every_depth_of_the_sweep(tmp_path):
    """--depths: cc_tb and tc at each depth, cc_naive at 1, the twin at the role depth; steps rounded up."""
    out = tmp_path / "2d9pt.csv"
    S.main(["--backend", "cpu", "--stencil", "2d9pt", "--shape", "box", "--dims", "2", "--radius", "1",
            "--depth", "2", "--depths", "1", "3", "--domain", "30x41", "--steps", "4", "--warmup", "0", "--reps", "1",
            "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(zip(frame.impl, frame.depth, frame.steps)) == [
        ("cc_naive", 1, 4), ("cc_tb", 1, 4), ("cc_tb", 2, 4), ("cc_tb", 3, 6), ("tc", 1, 4), ("tc", 2, 4), ("tc", 3, 6),
        ("tc_twin", 2, 4)]
    assert (frame.rel_err < S.TOL).all() and (frame.work_items == 30 * 41 * frame.steps).all()


@pytest.mark.parametrize("name", STENCILS)
def test_cpu_temporal_blocking_and_fusion_at_every_depth(name):
    shape, dims, radius, _ = STENCILS[name]
    rng = np.random.default_rng(10)
    x = rng.random(RAGGED[dims])
    w = S.random_weights(rng, shape, dims, radius)
    for depth in range(1, P.MAX_DEPTH[dims] + 1):
        ref = S.reference(x, w, 2 * depth)
        for impl in [i for i in P.SWEPT if i in S.CPU]:    # tc_sparse: tests/test_stencil_sparse.py
            measure.check(S.CPU[impl](x, w, 2 * depth, depth), ref, S.TOL, f"{name} {impl} t={depth}")


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("gpu", [None, "h100"])
def test_shared_bytes_are_what_the_launch_asks_for(monkeypatch, gpu, precision):
    asked = []
    monkeypatch.setattr(stencil_cuda, "compiled", lambda source, name, macros, smem: (asked.append((smem, macros["ELEM"])),
                                                                                     (None, smem))[1])
    for name, (shape, dims, radius, _) in STENCILS.items():
        w = S.random_weights(np.random.default_rng(11), shape, dims, radius)
        for depth in range(1, P.MAX_DEPTH[dims] + 1):
            st = S.Stencil(name, shape, dims, radius, depth)
            rows, frags = S.tc_rows(S.fuse(w, depth), S.fused_support(w != 0, depth), precision)
            S._cc_kernel(st, depth, gpu, precision=precision)
            S._tc_kernel(st, frags, rows, False, precision)
            elem = fmt(precision).bytes
            assert asked[-2:] == [(P.shared_bytes("cc_tb", st, gpu, precision), elem),
                                  (P.shared_bytes("tc", st, precision=precision), elem)]


@pytest.mark.slow
@pytest.mark.parametrize("precision", PRECISIONS)
def test_compile_ahead_names_the_modules_the_runner_compiles(monkeypatch, precision):
    """stencil_cuda.modules (the job's compile-ahead) from the structure alone: the very (source,
    macros) that the kernels built from random weights compile, for every impl, stencil and depth."""
    from membound.kernels.stencil import sp_layout as stencil_sp_layout
    from membound.model import sparse24

    asked = []
    monkeypatch.setattr(stencil_cuda, "compiled", lambda source, name, macros, smem: (asked.append((source, macros)),
                                                                                     (None, smem))[1])
    impls = [i.name for i in S.IMPLS if precision in i.precisions]
    for name, (shape, dims, radius, _) in STENCILS.items():
        w = S.random_weights(np.random.default_rng(5), shape, dims, radius, precision)
        for depth in range(1, P.MAX_DEPTH[dims] + 1):
            st = S.Stencil(name, shape, dims, radius, depth)
            for impl in impls:
                if impl == "tc_sparse":
                    form = sparse24.transform(shape, dims, radius, depth, precision, w, stencil_sp_layout.LAYOUT)
                    asked.append((stencil_sp_layout.source(dims)[0], stencil_sp_layout.module(form, dims)[0]))
                elif impl.startswith("tc"):
                    rows, frags = stencil_cuda.b_operands(w, depth, precision)
                    S._tc_kernel(st, frags, rows, impl == "tc_twin", precision)
                else:
                    S._cc_kernel(st, depth if impl == "cc_tb" else 1, "h100", precision=precision)
                assert stencil_cuda.modules(impl, st, precision, "h100") == asked[-1:], (name, depth, impl)


def test_the_gpus_tiles_are_what_runs_and_what_is_checked():
    """cc_tile: a GPU's TUNED entry, else the default rule; plan checks the tile that will run."""
    st = S.Stencil("2d49pt", "box", 2, 3, 1)
    assert P.cc_tile(st, 1, "h100") == TUNED["h100"][2, "box", 3, 1] != P.cc_tile(st, 1, "a100")
    assert P.cc_tile(st, 1, "a100") == P.cc_tile(st, 1) == P.default_tile(2, "box", 3, 1)
    star = S.Stencil("2d5pt", "star", 2, 1, 1)     # a precision's own entry before the shape's
    assert P.cc_tile(star, 1, "h100", 2) == TUNED["h100"][2, "star", 1, 1, 2] != P.cc_tile(star, 1, "h100", 4)
    assert P.cc_tile(star, 1, "h100", 4) == TUNED["h100"][2, "star", 1, 1]
    with pytest.raises(ValueError, match="depths 1..4"):
        P.cc_tile(S.Stencil("3d7pt", "star", 3, 1, 1), 5)
    huge = dict(TB2, NT=1024, CH=16, PF=2)
    tuned = {"h100": {**TUNED["h100"], (2, "box", 3, 7): huge}}
    with patch.dict(P.TUNED, tuned):
        refused = P.plan(st, [7], ["cc_tb"], 227 * 1024, "h100")[1]
    assert refused == ["2d49pt cc_tb fp64 at depth 7 needs 3605.0 KiB of shared memory per block, the device allows 227 KiB"]
    with pytest.raises(ValueError, match="NT=16 is no wider than its halo at depth 3"):
        P.cc_launch(st, 3, tile=dict(TB2, NT=16))
    with pytest.raises(ValueError, match="with VS sums vectors of its 16-byte copies: set VEC=1"):   # not a compile error
        P.cc_launch(st, 1, tile=dict(CC2, VS=1))
    with pytest.raises(ValueError, match=r"VY=2 rows a thread must divide BY=1 \(2D: VY=1\)"):
        P.cc_launch(st, 1, tile=dict(ST, CH=7, VY=2))


@pytest.mark.parametrize("gpu", [None, *TUNED])
def test_every_tile_passes_the_checks_on_its_gpu(gpu):
    """Every TUNED entry and every default tile: a depth the kernels run, and a launch whose shared
    memory fits its GPU (the default: sm_90), at every depth of every stencil shape."""
    limit = P.SHARED_KIB[config.load_gpu(gpu)["arch"] if gpu else "sm_90"] * 1024
    keys = {(d, sh, r, t) for sh, d, r, _ in STENCILS.values() for t in range(1, P.MAX_DEPTH[d] + 1)}
    assert {key[:4] for key in TUNED.get(gpu, {})} <= keys and {key[4:] for key in TUNED.get(gpu, {})} <= {(), (8,), (4,), (2,)}
    for (dims, shape, radius, depth), elem in itertools.product(sorted(keys), (8, 4, 2)):
        st = S.Stencil("x", shape, dims, radius, depth)
        assert P.cc_launch(st, depth, gpu, elem=elem).smem <= limit
        assert P.cc_tile(st, depth, gpu, elem)["kernel"] in {b["kernel"] for b in BASES.values()}


def test_plan_refuses_what_does_not_fit_and_keeps_the_role_depth():
    st = S.Stencil("2d49pt", "box", 2, 3, 1)
    jobs, refused = P.plan(st, range(1, 9), NAMES, 163 * 1024, "h100")
    at = [(impl, s.depth) for impl, s in jobs]
    assert ("cc_tb", 4) in at and ("tc", 5) in at and ("cc_tb", 5) not in at and ("tc", 6) not in at
    assert [a for a in at if a[0] in ("cc_naive", "tc_twin")] == [("cc_naive", 1), ("tc_twin", 1)]
    assert [w.split(" needs")[0] for w in refused] == [f"2d49pt cc_tb fp64 at depth {t}" for t in (5, 6, 7)] + [
        f"2d49pt tc fp64 at depth {t}" for t in (6, 7, 8)]
    half = P.plan(st, range(1, 9), NAMES, 163 * 1024, "h100", "fp16")[1]   # half the bytes: every depth fits
    assert half == []
    with pytest.raises(ValueError, match="the role depth must run"):
        P.plan(S.Stencil("2d49pt", "box", 2, 3, 8), [], NAMES, 227 * 1024, "h100")
    assert P.plan(st, range(1, 9), NAMES)[1] == []          # no limit (the CPU): every depth runs


@pytest.mark.slow
def test_check_config_on_the_h100_and_a100():
    kernels = {name: dict(shape=sh, dims=d, radius=r, depth=t, depths=list(range(1, P.MAX_DEPTH[d] + 1)))
               for name, (sh, d, r, t) in STENCILS.items()}
    h100 = S.check_config(kernels, "h100", "sm_90", PRECISIONS)   # fp32 and fp16: every depth fits
    assert [w.split(" needs")[0] for w in h100] == ["2d49pt tc fp64 at depth 8"]
    assert [w.split(" needs")[0] for w in S.check_config(kernels, "a100", "sm_80", PRECISIONS)] == [
        "2d13pt tc fp64 at depth 8", *(f"2d49pt tc fp64 at depth {t}" for t in (6, 7, 8)), "3d7pt cc_tb fp64 at depth 4",
        "3d27pt cc_tb fp64 at depth 4"]
    assert S.check_config(kernels, "cpu", "x86-64") == []
    kernels["3d7pt"]["depths"] = [1, 5]
    with pytest.raises(ValueError, match=r"stencil.kernels.3d7pt on cpu \(x86-64, fp64\): depth 5 is outside the 3D kernels' "):
        S.check_config(kernels, "cpu", "x86-64")


@pytest.mark.gpu
@pytest.mark.parametrize("name", STENCILS)
@pytest.mark.parametrize("impl", [i for i in P.SWEPT if i != "tc_sparse"])   # tc_sparse: test_stencil_sparse.py
def test_gpu_every_depth_that_fits_matches_reference(name, impl):
    """cc_tb and tc at every depth 1..MAX_DEPTH the device's shared memory allows, on a ragged domain."""
    import cupy as cp

    shape, dims, radius, _ = STENCILS[name]
    rng = np.random.default_rng(12)
    x = rng.random(RAGGED[dims])
    w = S.random_weights(rng, shape, dims, radius)
    limit = S._shared_limit("cuda")
    for depth in range(1, P.MAX_DEPTH[dims] + 1):
        st = S.Stencil(name, shape, dims, radius, depth)
        if P.refusal(impl, st, limit, S.device_gpu()):
            continue
        out = S._cuda_runner(impl, st, w, cp.asarray(x), 2 * depth)()
        measure.check(cp.asnumpy(out), S.reference(x, w, 2 * depth), S.TOL, f"{name} {impl} t={depth}")


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
               for depth in range(1, P.MAX_DEPTH[dims] + 1)]


@pytest.mark.gpu
@pytest.mark.parametrize("tuned", [True, False])
@pytest.mark.parametrize("dims, shape, radius, depth", EVERY_DEPTH)
def test_gpu_cuda_core_kernels_every_depth(dims, shape, radius, depth, tuned):
    """This GPU's CUDA-core kernel (tuned: its TUNED tile; else the default rule's, what an untuned
    GPU runs) of every stencil shape at every depth the config may ask for, on a ragged field (2D
    stencil_tb2: many short segments of rows, as the grid fills the GPU's SMs)."""
    import cupy as cp

    st = S.Stencil("x", shape, dims, radius, depth)
    rng = np.random.default_rng(10)
    x = rng.random((83, 61) if dims == 2 else (37, 29, 33))
    w = S.random_weights(rng, shape, dims, radius)
    tile = None if tuned else P.default_tile(dims, shape, radius, depth)
    out = S._cuda_runner("cc_tb", st, w, cp.asarray(x), 2 * depth, tile)()
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
    tile = P.cc_tile(st, depth, S.device_gpu())
    rng = np.random.default_rng(8)
    x = rng.random((4133, 45) if dims == 2 else (2 * tile.get("BZ", 64) + 5, 37, 45))  # stencil_stream: no BZ
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


def test_counter_runs_take_the_sweep_only_when_asked():
    """ncu.stencil_sweep false (default): the counter job profiles Table 3's depth (and the unblocked
    role), the benchmark jobs keep the whole sweep; true: the counters cover the sweep too."""
    from membound import families

    config = {"stencil": {"domain_2d": [64, 64], "steps": 12, "sweep_repeats": 2,
                          "kernels": {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3, "depths": [1, 2, 3]}}},
              "ncu": {}}
    assert "--depth 3 --depths 1 2 --domain 64x64 --steps 12" in families._stencil_args(config, "2d5pt", False, 0)
    assert families._stencil_args(config, "2d5pt", True, 0).endswith("--depth 3 --domain 64x64 --steps 1")
    config["ncu"]["stencil_sweep"] = True
    assert "--depth 3 --depths 1 2 --domain 64x64 --steps 1" in families._stencil_args(config, "2d5pt", True, 0)


def test_the_sweep_runs_in_the_first_sweep_repeats_repetitions_only():
    """stencil.sweep_repeats 2: repetitions 0 and 1 measure every depth, 2 on Table 3's depth alone."""
    from membound import families

    config = {"stencil": {"domain_2d": [64, 64], "steps": 12, "sweep_repeats": 2,
                          "kernels": {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3, "depths": [1, 2, 3]}}},
              "precisions": ["fp64"]}
    args = [families.cli_args("stencil", config, "2d5pt", rep=r) for r in range(3)]
    assert ["--depths 1 2" in a for a in args] == [True, True, False]
    assert all("--depth 3 " in a for a in args)
