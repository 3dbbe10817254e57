"""tc_sparse, the stencils on 2:4-sparse tensor cores: the lane packing against the documented
fragment layouts (numpy), the CPU case and its check, and (marker gpu) mma.sp's layouts and the
kernel against the float64 reference."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import scipy.ndimage

from membound import kept
from membound.kernels import harness
from membound.kernels import stencil as S
from membound.kernels.stencil import sp as SP
from membound.kernels.stencil import sp_layout as SPL
from membound.model import sparse24
from membound.model import sparse24_banks as BANKS
from membound.model.geometry import fuse, support
from membound.model.precision import decode, fmt, store
from membound.run import measure

STENCILS = {"2d5pt": ("star", 2, 1), "2d9pt": ("box", 2, 1), "2d13pt": ("star", 2, 3),
            "2d49pt": ("box", 2, 3), "3d7pt": ("star", 3, 1), "3d27pt": ("box", 3, 1)}
RAGGED = {2: (45, 71), 3: (13, 11, 19)}


def _warp_product(afrag, meta, bregs, precision, layout):
    """What one mma.sp computes from per-lane registers, decoded by the module docstring's layouts:
    D (16 x 8) = A B, A rebuilt from afrag and meta, B from bregs (32, NOFF) element values."""
    kept, chunk = sparse24.GRANULARITY[precision]
    k = sparse24.SP_SHAPE[precision][2]
    vals = np.zeros((16, k // 2))
    nib = np.zeros((16, 8), dtype=np.uint32)
    for lane in range(32):
        g, q = divmod(lane, 4)
        if precision == "fp32":
            v = afrag[lane].view(np.float32)
            for (row, c), val in zip([(g, q), (g + 8, q), (g, q + 4), (g + 8, q + 4)], v):
                vals[row, c] = val
        else:
            h = afrag[lane].astype(np.uint32)
            for reg, (row, c) in enumerate([(g, q), (g + 8, q), (g, q + 4), (g + 8, q + 4)]):
                pair = np.array([h[reg] & 0xFFFF, h[reg] >> 16], dtype=np.uint16)
                vals[row, 2 * c:2 * c + 2] = decode(pair.view(fmt(precision).dtype), precision)   # fp16, bf16 bits
        if q < 2:
            for c in range(8):
                if layout == "split" and c // 4 == q:
                    nib[g, c] = (meta[lane] >> (4 * (c % 4))) & 15
                    nib[g + 8, c] = (meta[lane] >> (16 + 4 * (c % 4))) & 15
                elif layout == "rows":
                    nib[g + 8 * q, c] = (meta[lane] >> (4 * c)) & 15
    a = sparse24.decompress(vals, nib, precision)
    b = np.zeros((k, 8))
    slots = BANKS.b_slots(precision)
    for lane in range(32):
        b[slots[lane], lane // 4] = bregs[lane]
    return a @ b


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("layout", ["split", "rows"])
def test_lane_packing_round_trips_through_the_documented_layout(precision, layout):
    form = sparse24.transform("box", 2, 1, 3, precision, np.random.default_rng(1).uniform(0.5, 1.5, (3, 3)))
    a = SP.operand(form.a, precision)
    values, nibbles = sparse24.compress(a, precision)
    afrag, meta = SPL.pack_lanes(values, nibbles, precision, layout)
    bl = np.random.default_rng(2).random((sparse24.SP_SHAPE[precision][2], 8))
    slots = BANKS.b_slots(precision)
    for f in range(len(a)):
        bregs = np.array([bl[slots[lane], lane // 4] for lane in range(32)])
        np.testing.assert_allclose(_warp_product(afrag[f], meta[f], bregs, precision, layout), a[f] @ bl, rtol=1e-12)


def test_b_offsets_load_what_the_form_names():
    form = sparse24.transform("star", 2, 3, 2, "fp16", layout="free")
    pitch = 200
    off = BANKS.b_offsets(form, pitch)
    cols = form.cols[:, BANKS.b_slots("fp16")]
    assert np.array_equal(off, cols[..., 1] * pitch + cols[..., 2])
    with pytest.raises(ValueError, match="runs"):
        BANKS.b_offsets(form, pitch, runs=True)


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("name", list(STENCILS))
def test_runs_layout_gives_each_lane_one_aligned_vector(name, precision):
    """Layout "runs": a lane's B elements of an MMA are RUN consecutive columns of one row (pads
    included), starting where the tile address is 16-byte aligned: (XO + u) = 0 mod RUN; the tile
    holds every column the slots load (XO + u >= 0, XO + BX - 16 + u < LXT), fp16 an even count."""
    shape, dims, radius = STENCILS[name]
    for depth in (1, 3):
        form = sparse24.transform(shape, dims, radius, depth, precision, layout="runs")
        pitch, xo, lxt = SPL.pitch_for(form, dims), BANKS.x_origin(form), SPL.tile_width(form, dims)
        off = BANKS.b_offsets(form, pitch, runs=True)
        run, u, t = sparse24.RUN[precision], form.cols[..., 2], SPL.tile_for(form, dims)
        assert off.shape[-1] == 1 and ((xo + off[..., 0] - form.cols[:, BANKS.b_slots(precision)[:, 0], 1]
                                        * pitch) % run == 0).all()
        assert pitch % run == 0 and sparse24.structured(form.a, *sparse24.GRANULARITY[precision])
        assert xo + u.min() >= 0 and xo + 16 * t["NX"] * t["WX"] - 16 + u.max() < lxt <= pitch
        assert lxt % 2 == 0 or precision == "fp32"


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("name", list(STENCILS))
def test_runs_start_at_the_phase_of_least_cost(name, precision):
    """transform's run phase: in 3D no other phase needs fewer MMAs (fp16 3d27pt at t = 3: 42, where
    runs starting at u = -RF mod 8, the phase before 2026-11-27, needed 49); in 2D none takes fewer B-load
    wavefronts a tile (at the kernel's own pitch), and the tile starts on a 32-byte sector at phase 0."""
    shape, dims, radius = STENCILS[name]

    def cost(form):
        banks = BANKS.wavefronts(form, SPL.pitch_for(form, dims)) * len(form.a)
        return (banks if dims == 2 else 0, len(form.a))

    for depth in (1, 3, 7) if dims == 2 else (1, 3):
        form = sparse24.transform(shape, dims, radius, depth, precision, layout="runs")
        costs = [cost(sparse24.transform(shape, dims, radius, depth, precision, layout="runs", phase=ph))
                 for ph in range(sparse24.RUN[precision])]
        assert cost(form) == min(costs)
        assert BANKS.least_wavefronts(form) == BANKS.wavefronts(form, SPL.pitch_for(form, dims)) or dims == 3
        assert form.phase or BANKS.x_origin(form) * fmt(precision).bytes % 32 == 0
    if (name, precision) == ("3d27pt", "fp16"):
        assert len(form.a) == 42 and costs[3][1] == 49


def test_wavefronts_count_what_ncu_measured():
    """2d49pt fp32 t = 4 as it ran before pitches were chosen (pitch 164, every zero run loading the
    tile's first aligned run): ncu counted 567.4 M shared wavefronts for 72.1 M B loads (H100,
    2026-11-27), 7.87 a load; 4 is the least. Runs at phase 0, as they then started."""
    form = sparse24.transform("box", 2, 3, 4, "fp32", layout="runs", phase=0)
    lanes = form.cols[:, BANKS.b_slots("fp32")[:4]]                       # (nf, lane q, its 4 slots, 4)
    zero = lanes[..., 3].all(axis=-1)
    lanes[zero, :, 1], lanes[zero, :, 2] = 0, -form.radius % 4 + np.arange(4)
    form.cols[:, BANKS.b_slots("fp32")[:4]] = lanes
    assert BANKS.wavefronts(form, 164) == pytest.approx(567.4 / 72.1, abs=0.01)
    assert all(BANKS.wavefronts(form, 164 + 4 * k) >= 4 for k in range(8))


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_a_zero_run_loads_a_run_of_its_mma(precision):
    form = sparse24.transform("box", 2, 3, 4, precision, layout="runs")
    lanes = form.cols[:, BANKS.b_slots(precision)[:4]]                    # (nf, lane q, its slots, 4)
    zero = lanes[..., 3].all(axis=-1)
    assert zero.any() and not zero.all(axis=-1).any()
    for f, q in zip(*np.nonzero(zero)):
        assert any(np.array_equal(lanes[f, q, :, :3], lanes[f, p, :, :3]) for p in range(4) if not zero[f, p])


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_pitch_takes_the_fewest_wavefronts_of_every_bank_offset(precision):
    form = sparse24.transform("box", 2, 3, 4, precision, layout="runs")
    pitch, step = SPL.pitch_for(form), 32 if precision == "fp32" else 64
    first = next(p for p in range(16 * 8 + 2 * (12 + sparse24.RUN[precision]), 10**4) if p % step == step // 8)
    assert pitch % (step // 8) == 0 and first <= pitch < first + step
    assert BANKS.wavefronts(form, pitch) == min(BANKS.wavefronts(form, first + k * step // 8) for k in range(8))
    assert SPL.structure_module("box", 2, 3, 4, precision)[0]["PITCH"] == pitch


def test_shared_bytes_count_the_fragments_held_in_shared_memory():
    """3D fp32 3d27pt at depth 3 keeps its 57.8 KiB of fragments in shared memory (FSM, up to
    FRAG_SMEM[3, "fp32"]); the workflow's shared-memory check counts them beside the plane tile."""
    from membound.kernels.stencil import launch as P

    macros, smem = SPL.module(sparse24.transform("box", 3, 1, 3, "fp32", layout=SPL.LAYOUT), 3)
    frag_bytes = macros["NFRAG"] * 32 * 20 + macros["NGRP"] * 32 * 4 * macros["NOFF"]   # B offsets per group
    assert macros["FSM"] == 1 and frag_bytes > 48 * 1024
    assert P.shared_bytes("tc_sparse", S.Stencil("3d27pt", "box", 3, 1, 3), precision="fp32") == smem > frag_bytes


@pytest.fixture
def sizes_in(kept_source):
    """tc_sparse's sizes kept under a temporary cache, for a temporary package source (conftest)."""
    SPL.structure_bytes.forget()
    yield kept_source
    SPL.structure_bytes.forget()


def _forget_sizes():
    """As a new process: the source digest and the kept sizes read anew."""
    kept.digest.cache_clear()
    SPL.structure_bytes.forget()


def test_the_start_ups_sizes_are_the_layouts_kept_on_disk_per_version_of_the_source(sizes_in):
    """The workflow's start-up check sizes tc_sparse from a file per version of membound's source: the
    layout's own bytes, read back by the next process, and a new file once any source file changes."""
    from membound.kernels.stencil import launch as P

    key, smem = "box 3 1 3 fp32", SPL.structure_module("box", 3, 1, 3, "fp32")[1]
    assert P.shared_bytes("tc_sparse", S.Stencil("3d27pt", "box", 3, 1, 3), precision="fp32") == smem
    file = SPL.structure_bytes.file()
    assert file.parent == kept.CACHE / "sp-layout" and json.loads(file.read_text()) == {key: smem}
    file.write_text(json.dumps({key: smem + 1}))      # a next process reads the file, not the layout
    _forget_sizes()
    assert SPL.structure_bytes("box", 3, 1, 3, "fp32") == smem + 1
    (sizes_in / "__init__.py").write_text("# changed\n")
    _forget_sizes()
    assert SPL.structure_bytes.file() != file and SPL.structure_bytes("box", 3, 1, 3, "fp32") == smem
    assert json.loads(SPL.structure_bytes.file().read_text()) == {key: smem}


def test_2d_fragments_in_shared_memory_up_to_the_precisions_size_and_two_blocks_an_sm():
    """2D: fp16 keeps up to 80 KiB of fragments in shared memory (2d49pt t = 6: all 93, 70 KiB), fp32 up
    to 48 KiB (2d49pt t = 4: the first 64 of 88), and a block's tile and fragments stay within two
    blocks an SM (fp16 t = 7: 88 of 129), where at least half the fragments fit (fp32 2d13pt t = 6, an
    81 KiB tile, would hold 42 of 89: none); the shared bytes count them."""
    def nfs(shape, radius, depth, precision):
        macros, smem = SPL.module(sparse24.transform(shape, 2, radius, depth, precision, layout=SPL.LAYOUT), 2)
        assert smem <= SPL.BLOCK_SMEM_2D and macros["NOFF"] == 1
        return macros["NFS"], macros["NFRAG"]

    assert nfs("box", 3, 6, "fp16") == (93, 93) and nfs("box", 3, 4, "fp32") == (64, 88)
    assert nfs("box", 3, 7, "fp16") == (88, 129) and nfs("star", 3, 6, "fp32") == (0, 89)


@pytest.mark.parametrize("shape, precision", [("box", "fp32"), ("star", "fp32"), ("box", "fp16"), ("star", "fp16")])
def test_3d_tiles_and_their_shared_bytes(shape, precision):
    """fp32 and the fp16 box run two input planes an iteration (PAIR) over four plane buffers at the
    smallest pitch, the fp16 star one plane at the pitch of fewest wavefronts; the shared bytes count
    every buffer."""
    form = sparse24.transform(shape, 3, 1, 3, precision, layout=SPL.LAYOUT)
    macros, smem = SPL.module(form, 3)
    pair = precision == "fp32" or shape == "box"
    assert macros.get("PAIR", 0) == int(pair)
    t, step = SPL.tile_for(form, 3), 32 if precision == "fp32" else 64
    width = SPL.tile_width(form, 3)
    first = width + (step // 8 - width) % step
    assert (macros["PITCH"] == first) if pair else (first <= macros["PITCH"] < first + step)
    frag_bytes = macros["FSM"] * (macros["NFRAG"] * 32 * 20 + macros["NGRP"] * 32 * 4 * macros["NOFF"])
    plane = (8 * t["WY"] + 2 * form.radius) * macros["PITCH"] * (4 if precision == "fp32" else 2)
    assert smem == (4 if pair else 1) * plane + frag_bytes


@pytest.mark.parametrize("depth, wy", [(2, 4), (3, 8), (8, 8)])
def test_2d_tiles_grow_taller_from_radius_9(depth, wy):
    """2D: 32 output rows a block up to a fused radius of 8, 64 from 9 (TALL_RF)."""
    form = sparse24.transform("star", 2, 3, depth, "fp16", layout=SPL.LAYOUT)
    assert SPL.tile_for(form, 2)["WY"] == wy == SPL.module(form, 2)[0]["WY"]


@pytest.mark.parametrize("shape", ["star", "box"])
def test_plane_groups_share_one_b_load_across_the_planes(shape):
    """Every fragment in one group; a group's members load the same (dy, u) in every slot, one a plane,
    bit j = RF - dz of its mask; a box stencil's groups hold all 2 RF + 1 planes (stencil_sp3.cu)."""
    form = sparse24.transform(shape, 3, 1, 3, "fp32", layout=SPL.LAYOUT)
    order, table = SPL.plane_groups(form)
    assert sorted(order) == list(range(len(form.a)))
    starts = list(table >> 16) + [len(order)]
    for g, mask in enumerate(table & 0xFFFF):
        members = order[starts[g]:starts[g + 1]]
        js = [form.radius - form.cols[f, 0, 0] for f in members]
        assert js == sorted(js) and sum(1 << j for j in js) == mask
        assert all(np.array_equal(form.cols[f, :, 1:], form.cols[members[0], :, 1:]) for f in members)
        assert shape == "star" or mask == (1 << 2 * form.radius + 1) - 1


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("name", ["2d9pt", "3d7pt"])
def test_cpu_case_passes_its_check_and_writes_a_row(tmp_path, name, precision):
    shape, dims, radius = STENCILS[name]
    impl = next(i for i in S.IMPLS if i.name == "tc_sparse")
    st = S.Stencil(name, shape, dims, radius, 2)
    rows = harness.run_jobs("cpu", [(impl, lambda: S.prepare(impl, st, RAGGED[dims], 4, "cpu", np.random.default_rng(0),
                                                        precision=precision))], tmp_path / "r.csv", 0, 1)
    assert rows[0]["precision"] == precision and rows[0]["sparsity"] == "2:4" and rows[0]["unit"] == "tensor_core"
    tol = float(re.search(r"checked: rel_err <= ([0-9.e+-]+)", rows[0]["note"]).group(1))
    assert 0 < rows[0]["rel_err"] < 0.2 * tol
    assert "emulated on CPU" in rows[0]["note"]


def test_a_wrong_kernel_fails_its_check_and_writes_no_row(tmp_path, monkeypatch):
    impl = next(i for i in S.IMPLS if i.name == "tc_sparse")
    st = S.Stencil("2d5pt", "star", 2, 1, 1)
    real = SP.emulate
    monkeypatch.setattr(SP, "emulate", lambda form, x, launches: real(form, x, launches) * np.float16(1.01))
    with pytest.raises(measure.CheckError):
        harness.run_jobs("cpu", [(impl, lambda: S.prepare(impl, st, (40, 40), 2, "cpu", np.random.default_rng(0),
                                                     precision="fp16"))], tmp_path / "r.csv", 0, 1)
    assert not (tmp_path / "r.csv").exists()


# ------------------------------------------------------------------------------------------ GPU

PROBE = r"""
extern "C" __global__ void probe(const uint4* a, const unsigned* e, const uint4* b, float* d) {
  const int l = threadIdx.x; uint4 av = a[l], bv = b[l]; float c[4] = {0, 0, 0, 0};
  asm volatile("mma.sp::ordered_metadata.sync.aligned.SHAPE.row.col.f32.TYPE.TYPE.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;" : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(av.x), "r"(av.y), "r"(av.z), "r"(av.w), "r"(bv.x), "r"(bv.y), "r"(bv.z), "r"(bv.w), "r"(e[l]));
  for (int h = 0; h < 4; ++h) d[l * 4 + h] = c[h];
}
"""


def _probe(precision, layout):
    """D of one mma.sp on the GPU from a random structured A and B packed in `layout`, and A @ B."""
    import cupy as cp

    rng = np.random.default_rng(5)
    kept, chunk = sparse24.GRANULARITY[precision]
    k = sparse24.SP_SHAPE[precision][2]
    a = np.zeros((16, k))
    for i in range(16):
        for c in range(k // chunk):
            pos = rng.choice(chunk, kept, replace=False)
            a[i, c * chunk + pos] = rng.integers(1, 8, kept)
    b = rng.integers(-4, 5, (k, 8)).astype(float)
    values, nibbles = sparse24.compress(a[None], precision)
    afrag, meta = SPL.pack_lanes(values, nibbles, precision, layout)
    slots = BANKS.b_slots(precision)
    lanes = np.array([b[slots[lane], lane // 4] for lane in range(32)])
    if precision == "fp32":
        bregs = lanes.astype(np.float32).view(np.uint32)
    else:
        h = np.ascontiguousarray(store(lanes, precision)).view(np.uint16).astype(np.uint32)   # fp16 or bf16 bits
        bregs = h[:, 0::2] | (h[:, 1::2] << 16)
    m, n, k = sparse24.SP_SHAPE[precision]
    mod = cp.RawModule(code=PROBE.replace("SHAPE", f"m{m}n{n}k{k}").replace("TYPE", sparse24.SP_TYPE[precision]))
    d = cp.zeros(128, dtype=cp.float32)
    mod.get_function("probe")(
        (1,), (32,), (cp.asarray(afrag[0].ravel()), cp.asarray(meta[0]), cp.asarray(bregs.ravel()), d))
    got = np.zeros((16, 8))
    dh = d.get().reshape(32, 4)
    for lane in range(32):
        g, q = divmod(lane, 4)
        for h in range(4):
            got[g + 8 * (h >> 1), 2 * q + (h & 1)] = dh[lane, h]
    return got, a @ b


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_mma_sp_layout(precision):
    """The metadata layout stencil_sp.py packs (META_LAYOUT) is the one the hardware reads; prints both."""
    ok = {}
    for layout in ("split", "rows"):
        got, want = _probe(precision, layout)
        ok[layout] = bool(np.array_equal(got, want))
        print(f"mma.sp {precision} metadata layout {layout}: {'matches' if ok[layout] else 'differs'}")
    assert ok[SPL.META_LAYOUT], ok


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("name", list(STENCILS))
def test_tc_sparse_kernel_matches_the_reference(tmp_path, name, depth, precision):
    assert _cuda_row(tmp_path, name, depth, precision, RAGGED[STENCILS[name][1]], 2 * depth)["rel_err"] < 1e-2


def _cuda_row(tmp_path, name, depth, precision, domain, steps) -> dict:
    """The checked row of tc_sparse on the GPU (its check passed, else run_jobs raised)."""
    shape, dims, radius = STENCILS[name]
    impl = next(i for i in S.IMPLS if i.name == "tc_sparse")
    st = S.Stencil(name, shape, dims, radius, depth)
    rows = harness.run_jobs("cuda", [(impl, lambda: S.prepare(impl, st, domain, steps, "cuda", np.random.default_rng(0),
                                                        precision=precision))], tmp_path / "r.csv", 0, 1)
    return rows[0]


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("depth", [1, 4])
@pytest.mark.parametrize("name", ["3d7pt", "3d27pt"])
def test_tc_sparse_3d_window_over_several_z_blocks(tmp_path, name, depth, precision):
    """stencil_sp3's rolling window across three z blocks, the last one ragged (every tile's BZ); nx odd
    at depth 1, even at depth 4 (fp16 pairs copied by 4 bytes where PAIR)."""
    shape, dims, radius = STENCILS[name]
    form = sparse24.transform(shape, dims, radius, depth, precision, layout=SPL.LAYOUT)
    domain = (2 * SPL.tile_for(form, dims)["BZ"] + 5, 11, 19 if depth == 1 else 20)
    assert _cuda_row(tmp_path, name, depth, precision, domain, depth)["rel_err"] < 1e-2


def test_sparse_form_matches_scipy_on_a_ragged_field():
    """The exactness the kernel relies on, here for the ragged domains of the GPU test."""
    rng = np.random.default_rng(3)
    w = rng.uniform(0.5, 1.5, (3, 3, 3))
    x = rng.random(RAGGED[3])
    form = sparse24.transform("box", 3, 1, 2, "fp16", w)
    np.testing.assert_allclose(sparse24.apply(form, x), scipy.ndimage.correlate(x, fuse(w, 2), mode="wrap"),
                               rtol=1e-12)


def test_counters_count_an_mma_sp_as_its_logical_shape():
    """One mma.sp is one HMMA.SP (SASS); counters/mma.py reads stencil_sp.cu's shapes and counts
    2 m n k of the logical shape (paper 002's C_TC with the logical S)."""
    import pandas as pd

    from membound.counters import mma

    for kernel in ("stencil_sp", "stencil_sp3"):     # 2D and 3D: their mma.sp in stencil_sp.cuh
        assert mma.own_shapes()[kernel] == {"tf32": (16, 8, 16), "f16": (16, 8, 32), "bf16": (16, 8, 32)}
        assert kernel in mma.sparse_kernels()
    launches = pd.DataFrame([{"precision": p, "kernel_name": "stencil_sp", "tensor_fp64_ops": float("nan"),
                              "dmma_inst": 0, "hmma_inst": 10} for p in ("fp32", "fp16", "bf16")])
    flops, how = mma.tensor_flops(launches, {})
    assert list(flops) == [10 * 2 * 16 * 8 * 16, 10 * 2 * 16 * 8 * 32, 10 * 2 * 16 * 8 * 32]
    assert "m16n8k32 f16" in how[1] and "m16n8k32 bf16" in how[2]
