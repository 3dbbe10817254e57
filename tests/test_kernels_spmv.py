"""SpMV: the plan covers every nonzero and row once and packs short rows, every impl matches the float64
reference of the rounded inputs within the precision's bound (explicit zeros, empty, short and long
rows), a wrong output fails without writing, fp16's range is checked, and the CSV schema."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from membound.kernels import harness, spmv
from membound.kernels.spmv import emulate as spmv_emulate
from membound.kernels.spmv import plans as spmv_plans
from membound.kernels.spmv import tc_plan as spmv_plan
from membound.matrices import csr
from membound.model.precision import PRECISIONS, decode, dot_tolerance, fmt, nan, quantize, store, tc_operand
from membound.run import measure

S = {"fp64": 1, "fp32": 2, "fp16": 4, "bf16": 4}
# rows with 0, 1, 3, 5, 7 and 100 nonzeros, long rows of one and several pieces in every precision, and a
# row count not a multiple of 8
LENGTHS = [0, 1, 5, 100, 0, 3, spmv_plan.LONG, spmv_plan.LONG + 1, 1025, 2081, 7]


def ragged(seed: int, extra_rows: int = 1003, cols: int = 6000, lengths=LENGTHS, top: int = 41) -> sp.csr_matrix:
    """A matrix with the rows of `lengths`, `extra_rows` random rows (0..top-1 nonzeros) and explicit zeros."""
    rng = np.random.default_rng(seed)
    lengths = np.concatenate([lengths, rng.integers(0, top, extra_rows)]).astype(np.int64)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.concatenate([np.sort(rng.choice(cols, n, replace=False)) for n in lengths]).astype(np.int32)
    data = rng.uniform(-1.0, 1.0, indptr[-1])
    data[::9] = 0.0  # explicit zeros stay stored
    return sp.csr_matrix((data, indices, indptr), shape=(len(lengths), cols))


def mma_of(p: spmv_plan.Plan) -> int:
    """MMAs one SpMV issues, from the warps' descriptors as spmv_tc.cu reads them."""
    kind, w = p.desc[:, 3] >> 16, p.desc[:, 3]
    groups = kind == spmv_plan.GROUPS
    per_group = p.desc[groups, 2] - 1 + ((w[groups] >> 8) & 0xFF)
    return int((per_group * (w[groups] & 0xFF)).sum() + p.desc[kind == spmv_plan.PIECE, 2].sum())


def test_piece_length_grows_with_the_plan_within_its_range():
    low, high = spmv_plan.PIECE_TILES
    share = spmv_plan.PIECE_SHARE
    assert spmv_plan.piece_tiles(0) == low == spmv_plan.piece_tiles(2 * low * share - 1)
    assert spmv_plan.piece_tiles(2 * low * share) == 2 * low
    assert spmv_plan.piece_tiles(1000 * high * share) == high


@pytest.fixture(params=["shortest", "longest"])
def pieces(request, monkeypatch):
    """The plans' piece length: the rule's for these small matrices (the shortest), or the longest."""
    low, high = spmv_plan.PIECE_TILES
    if request.param == "longest":
        monkeypatch.setattr(spmv_plan, "PIECE_SHARE", 1e-9)
    return high if request.param == "longest" else low


@pytest.mark.parametrize("s", [1, 2, 4])
def test_plan_covers_every_nonzero_and_row_once(s, pieces):
    matrix = ragged(0)
    p = spmv_plan.plan(matrix.indptr, s)
    slot, seg = p.placement(matrix.indptr)
    used = slot[slot >= 0]
    assert np.array_equal(np.sort(used), np.arange(matrix.nnz))
    written = np.concatenate([p.rows[p.rows >= 0], p.long_row])
    assert np.array_equal(np.sort(written), np.arange(matrix.shape[0]))
    assert set(p.long_row) == set(np.flatnonzero(np.diff(matrix.indptr) > spmv_plan.LONG))
    kind = p.desc[:, 3] >> 16
    tiles = p.desc[kind == spmv_plan.PIECE, 2].sum() + (p.desc[kind == spmv_plan.GROUPS, 2]
                                                        * (p.desc[kind == spmv_plan.GROUPS, 3] & 0xFF)).sum()
    assert p.mma == mma_of(p) and len(slot) == p.slots == 32 * s * tiles
    # segments > 0 (fillers) only in a group's last tile; a tile row's slots of one segment are one row's
    tile_row = np.arange(len(slot)) // (4 * s)
    row_of = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    keys = tile_row[slot >= 0] * 4 + seg[slot >= 0]
    rows = row_of[used]
    order = np.argsort(keys, kind="stable")
    same_key = keys[order][1:] == keys[order][:-1]
    assert (rows[order][1:][same_key] == rows[order][:-1][same_key]).all()
    for tile, _, c, w in p.desc[p.desc[:, 3] >> 16 == spmv_plan.GROUPS]:
        last = tile + np.arange(w & 0xFF) * c + c - 1
        inner = np.setdiff1d(np.arange(tile, tile + c * (w & 0xFF)), last)
        assert not seg.reshape(-1, 32 * s)[inner].any()
    most = -(-np.diff(matrix.indptr).max() // (32 * s))   # the longest row's tiles
    assert p.desc[kind == spmv_plan.PIECE, 2].max() == min(most, pieces)


def test_plan_packs_short_rows_like_dasp():
    """fp64: 64 rows of 1 nnz and 64 of 3 pair up (1 + 3), 64 rows of 2 two by two: no padding at all,
    each pair two segments of one tile row; 8 rows of 4 nnz fill one tile."""
    matrix = ragged(1, 0, lengths=[1, 3, 2] * 64 + [4] * 8)
    p = spmv_plan.plan(matrix.indptr, 1)
    slot, seg = p.placement(matrix.indptr)
    assert len(slot) == matrix.nnz and (slot >= 0).all()
    assert seg.max() == 1 and (seg == 1).sum() == 64 * 1 + 32 * 2   # a 1 after each 3, a 2 after a 2
    assert spmv_plan.patterns(4, 4, 3)[:4] == ((3, 1), (2, 2), (2, 1, 1), (1, 1, 1, 1))


def test_fp64_lane_rows_hold_two_rows_tf32_four():
    """SEGS: 128 rows of 1 nnz pack two to a lane row in fp64 (half its slots padding), four in tf32."""
    matrix = ragged(3, 0, lengths=[1] * 128)
    seg = {s: spmv_plan.plan(matrix.indptr, s).placement(matrix.indptr)[1] for s in (1, 2)}
    assert seg[1].max() == 1 and seg[2].max() == 3
    assert spmv_plan.plan(matrix.indptr, 1).slots == 2 * matrix.nnz


def test_plan_fills_the_last_tile_of_longer_rows():
    """fp16 (16 slots a tile row): rows of 20 nnz leave 12 free slots in their second tile, which rows of
    12, or of 5 and 7, fill."""
    matrix = ragged(2, 0, lengths=[20] * 8 + [12] * 4 + [5, 7] * 4)
    p = spmv_plan.plan(matrix.indptr, 4)
    assert p.slots == matrix.nnz == 8 * 32  # one group of 2 tiles, no padding


def read_back(p: spmv_plan.Plan, slot: np.ndarray, seg: np.ndarray) -> dict[int, np.ndarray]:
    """Per output row, the nnz indices its warp reads from the placement, in order, as spmv_tc.cu reads
    the descriptors: a piece's tiles whole; a group's tile row g over its c tiles, segment j of it."""
    k, tile, kind = p.k, 32 * p.s, p.desc[:, 3] >> 16
    got: dict[int, list] = {}
    for t0, li, n, _ in p.desc[kind == spmv_plan.PIECE]:
        assert not seg[t0 * tile: (t0 + n) * tile].any()
        got.setdefault(int(p.long_row[li]), []).append(slot[t0 * tile: (t0 + n) * tile])
    lanes, lane_seg = slot.reshape(-1, 8, k), seg.reshape(-1, 8, k)
    for t0, out, c, w in p.desc[kind == spmv_plan.GROUPS]:
        n, jj = w & 0xFF, (w >> 8) & 0xFF
        for i in range(n):
            tiles = slice(t0 + i * c, t0 + (i + 1) * c)
            for j in range(jj):
                for g in range(8):
                    row = p.rows[out + i * 8 * jj + j * 8 + g]
                    read = lanes[tiles, g].ravel()[lane_seg[tiles, g].ravel() == j]
                    if row < 0:
                        assert (read < 0).all()
                    else:
                        got.setdefault(int(row), []).append(read)
    return {row: np.concatenate(parts) for row, parts in got.items()}


@pytest.mark.parametrize("s", [1, 2, 4])
@pytest.mark.parametrize("lengths, extra_rows, top", [(LENGTHS, 1003, 41), (LENGTHS, 9000, 12), ([0] * 9, 0, 1),
                                                      ([3000, 0, 300], 0, 1), ([1, 2, 3] * 40 + [17] * 9, 300, 8)])
def test_placement_puts_every_nonzero_once_in_its_rows_lane_in_column_order(s, lengths, extra_rows, top):
    """Random rows (two windows), empty rows only, long rows, short rows: every nonzero lands in exactly one
    slot, and the warp writing a row reads exactly that row's nonzeros, in column order (padding -1)."""
    matrix = ragged(12, extra_rows, lengths=lengths, top=top)
    p = spmv_plan.plan(matrix.indptr, s)
    slot, seg = p.placement(matrix.indptr)
    assert slot.dtype == np.int32 and seg.dtype == np.uint8 and len(slot) == len(seg) == p.slots
    assert np.array_equal(np.sort(slot[slot >= 0]), np.arange(matrix.nnz))
    got = read_back(p, slot, seg)
    for row in np.flatnonzero(np.diff(matrix.indptr)):
        read = got.pop(int(row))
        assert np.array_equal(read[read >= 0], np.arange(matrix.indptr[row], matrix.indptr[row + 1]))
    assert all((read < 0).all() for read in got.values())   # what is left: empty rows, padding only


@pytest.mark.parametrize("s", [1, 2, 4])
def test_a_warps_tile_rows_of_one_kind_hold_rising_rows(s):
    """Tile rows of equal tiles and segments are taken in row order: in a group warp, the first rows of
    such neighbours rise, so that its x gathers and y stores fall on fewer lines."""
    matrix = ragged(12, 9000, lengths=LENGTHS, top=12)
    p = spmv_plan.plan(matrix.indptr, s)
    length, pairs = np.diff(matrix.indptr), 0
    for _, out, _, w in p.desc[p.desc[:, 3] >> 16 == spmv_plan.GROUPS]:
        n, jj = w & 0xFF, (w >> 8) & 0xFF
        segs = p.rows[out: out + 8 * jj * n].reshape(n, jj, 8).transpose(0, 2, 1).reshape(-1, jj)
        segs = segs[segs[:, 0] >= 0]
        kind = -(-length[segs[:, 0]] // p.k) * 8 + (segs >= 0).sum(axis=1)
        same = kind[1:] == kind[:-1]
        assert (segs[1:, 0][same] > segs[:-1, 0][same]).all()
        pairs += same.sum()
    assert pairs > 1000


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("impl", ["scipy_csr", "numpy_mma", "numpy_mma_twin"])
def test_cpu_impls_match_the_reference(impl, precision, pieces):
    matrix = spmv.rounded(ragged(1), "ragged", precision)
    x = quantize(np.random.default_rng(2).uniform(-1, 1, matrix.shape[1]), precision)
    y = np.full(matrix.shape[0], nan(precision), matrix.dtype)
    spmv.cpu_runner(impl, matrix, x, y, precision)()
    wide, xw = spmv.decoded(matrix, precision).astype(np.float64), decode(x, precision).astype(np.float64)
    unit = "tensor_core" if impl == "numpy_mma" else "cuda_core"
    tol = dot_tolerance(precision, unit, np.diff(matrix.indptr).max(), wide @ xw, abs(wide) @ np.abs(xw))
    assert y.dtype == fmt(precision).dtype
    assert measure.rel_err(decode(y, precision).astype(np.float64), wide @ xw) <= tol
    assert decode(y, precision)[0] == 0.0 and decode(y, precision)[4] == 0.0  # empty rows are written


def test_l2_prefetch_is_off_in_fp64_beyond_the_l2_only():
    l2 = 50 * 2**20
    assert [spmv.tc_knobs(p, False, l2, l2)["TC_PREF"] for p in PRECISIONS] == [4, 4, 16, 16]
    assert [spmv.tc_knobs(p, True, l2 + 1, l2)["TC_PREF"] for p in PRECISIONS] == [0, 4, 16, 16]


@pytest.mark.parametrize("s", [1, 4])
def test_packed_arrays_hold_each_nonzero_once_with_its_column_and_segment(s):
    matrix = ragged(5, 300)
    p = spmv_plan.plan(matrix.indptr, s)
    slot, seg = p.placement(matrix.indptr)
    dev = p.packed(matrix.indptr, matrix.indices, matrix.data, np.float64)
    word = dev["pcol"].view(np.uint32)
    assert dev["pval"].dtype == matrix.data.dtype and len(dev["pval"]) == len(word) == p.slots
    assert np.array_equal(dev["pval"][slot >= 0], matrix.data[slot[slot >= 0]])
    assert np.array_equal(word[slot >= 0] & ((1 << spmv_plan.SEG_SHIFT) - 1), matrix.indices[slot[slot >= 0]])
    assert np.array_equal(word >> spmv_plan.SEG_SHIFT, np.where(slot >= 0, seg, 0))
    assert not dev["pval"][slot < 0].any() and not word[slot < 0].any()
    assert len(dev["long_acc"]) == len(dev["long_cnt"]) == max(len(p.long_row), 1)


def test_tf32_rounds_to_nearest_ties_away():
    one = np.float32(1.0)
    ulp = np.float32(2.0**-10)
    values = np.array([one + ulp / 4, one + ulp / 2, one + 3 * ulp / 4, -(one + ulp / 2)], np.float32)
    assert list(tc_operand(values, "fp32")) == [one, one + ulp, one + ulp, -(one + ulp)]


@pytest.mark.parametrize("lengths", [[0] * 5, [3000], [1] * 9, [0, 300, 0]])
@pytest.mark.parametrize("impl", ["numpy_mma", "numpy_mma_twin"])
def test_cpu_emulation_of_degenerate_shapes(impl, lengths):
    """Only empty rows, one long row, rows of one nonzero: every row written, right."""
    matrix = ragged(6, 0, lengths=lengths)
    x = np.random.default_rng(3).uniform(-1, 1, matrix.shape[1])
    for s, precision in [(1, "fp64"), (4, "fp16"), (4, "bf16")]:
        q = spmv.rounded(matrix, "m", precision)
        y = np.full(matrix.shape[0], nan(precision), q.dtype)
        spmv.cpu_runner(impl, q, quantize(x, precision), y, precision, spmv_plan.plan(q.indptr, s))()
        ref = spmv.decoded(q, precision).astype(np.float64) @ decode(quantize(x, precision), precision)
        assert np.allclose(decode(y, precision), ref, rtol=1e-2, atol=1e-2 * np.abs(ref).max(initial=1))


def write_matrix(path, matrix, name="ragged"):
    csr.save(path, matrix, {"code": "T1", "name": name, "source": "synthetic"})
    return path


def test_cli_cpu_writes_checked_rows_per_precision(tmp_path):
    matrix = ragged(3)
    out = tmp_path / "raw" / "spmv" / "ragged.csv"
    spmv.main(["--backend", "cpu", "--matrix", str(write_matrix(tmp_path / "m.npz", matrix)), "--warmup", "1",
               "--reps", "3", "--out", str(out), "--precisions", *PRECISIONS])
    frame = pd.read_csv(out)
    assert list(frame.columns) == measure.ROW_COLUMNS
    assert list(frame.impl) == ["scipy_csr", "numpy_mma", "numpy_mma_twin"] * 4
    assert list(frame.precision) == ["fp64"] * 3 + ["fp32"] * 3 + ["fp16"] * 3 + ["bf16"] * 3
    assert list(frame.role) == ["cuSPARSE", "DASP", "DASP twin"] * 4
    assert list(frame.unit) == ["cuda_core", "tensor_core", "cuda_core"] * 4
    assert (frame.kernel == "spmv").all() and (frame.problem == "ragged").all() and (frame.code == "T1").all()
    assert (frame.source == "synthetic").all() and (frame.nnz == matrix.nnz).all()
    assert (frame.work_items == matrix.nnz).all() and (frame.metric == "GFLOP/s").all() and (frame.reps == 3).all()
    tc = frame[frame.impl == "numpy_mma"].set_index("precision")
    for p in PRECISIONS:
        assert spmv.mma_shape(p)[0] in tc.note[p] and tc.mma[p] == spmv_plan.plan(matrix.indptr, S[p]).mma
        assert tc.value[p] == pytest.approx(2 * matrix.nnz / tc.t_median_s[p] / 1e9)
    assert "m16n8k8.row.col.f32.tf32.tf32.f32" in tc.note["fp32"] and "m16n8k16.row.col.f32.f16.f16.f32" in tc.note["fp16"]
    assert tc.rel_err["fp64"] < 1e-12 < 1e-5 < min(tc.rel_err["fp32"], tc.rel_err["fp16"])  # TF32, fp16: 11 bits
    assert "m16n8k16.row.col.f32.bf16.bf16.f32" in tc.note["bf16"] and tc.rel_err["bf16"] > tc.rel_err["fp16"]  # 8 bits


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("impl", ["scipy_csr", "numpy_mma", "numpy_mma_twin"])
@pytest.mark.parametrize("wrong", ["unwritten_row", "off_by_5_percent"])
def test_wrong_output_fails_and_writes_nothing(monkeypatch, tmp_path, wrong, impl, precision):
    real = spmv.cpu_runner

    def bad_runner(name, *args):
        run = real(name, *args)
        y = args[2]

        def bad():
            run()
            if name == impl:
                if wrong == "unwritten_row":
                    y[-1] = nan(precision)
                else:
                    y[:] = store(decode(y, precision) * 1.05, precision)
        return bad

    monkeypatch.setattr(spmv, "cpu_runner", bad_runner)
    folder = tmp_path / "out"
    with pytest.raises(measure.CheckError, match=f"spmv {impl} {precision} ragged"):
        spmv.main(["--backend", "cpu", "--matrix", str(write_matrix(tmp_path / "m.npz", ragged(4, 200))),
                   "--warmup", "0", "--reps", "1", "--out", str(folder / "x.csv"), "--precisions", precision])
    assert not folder.exists() or not list(folder.iterdir())


def test_fp16_out_of_range_is_skipped_with_a_note(tmp_path, capsys):
    matrix = ragged(5, 100)
    matrix.data[7] = 1.0e6
    out = tmp_path / "x.csv"
    spmv.main(["--backend", "cpu", "--matrix", str(write_matrix(tmp_path / "m.npz", matrix, "big")), "--warmup", "0",
               "--reps", "1", "--out", str(out), "--precisions", "fp32", "fp16"])
    assert "spmv big not run in fp16: values up to 1e+06 exceed fp16" in capsys.readouterr().err
    assert set(pd.read_csv(out).precision) == {"fp32"}


def test_plans_made_once_are_the_plans_and_belong_to_their_matrix(tmp_path, capsys):
    """Rule spmv_plans' file (spmv_plans CLI) holds plan() of every S; the CLI uses it, and refuses the
    plans of another matrix or a missing file in one line, writing nothing."""
    matrix, other = ragged(8, 500), ragged(9, 500)
    mfile, plans = write_matrix(tmp_path / "m.npz", matrix), tmp_path / "plans" / "m.npz"
    spmv_plans.main(["--matrix", str(mfile), "--out", str(plans)])
    for s, loaded in spmv_plans.load(plans, matrix.indptr).items():
        made = spmv_plan.plan(matrix.indptr, s)
        for field in dataclasses.fields(spmv_plan.Plan):
            a, b = getattr(made, field.name), getattr(loaded, field.name)
            assert type(a) is type(b) and np.array_equal(a, b) and np.asarray(a).dtype == np.asarray(b).dtype
    out = tmp_path / "x.csv"
    args = ["--backend", "cpu", "--warmup", "0", "--reps", "1", "--out", str(out), "--precisions", "fp64", "fp16"]
    spmv.main(["--matrix", str(mfile), "--plans", str(plans), *args])
    tc = pd.read_csv(out).query("impl == 'numpy_mma'").set_index("precision")
    assert (tc.rel_err < 1e-2).all() and tc.mma["fp16"] == spmv_plan.plan(matrix.indptr, 4).mma
    out.unlink()
    for wrong, said in [(write_matrix(tmp_path / "o.npz", other), "made from another matrix's row pointers"),
                        (mfile, "no such SpMV plans file")]:
        with pytest.raises(SystemExit):
            spmv.main(["--matrix", str(wrong), "--plans", str(plans if said.startswith("made") else tmp_path / "none"), *args])
        assert said in capsys.readouterr().err and not out.exists()


def test_missing_matrix_is_a_one_line_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        spmv.main(["--backend", "cpu", "--matrix", str(tmp_path / "none.npz"), "--warmup", "0", "--reps", "1",
                   "--out", str(tmp_path / "x.csv")])
    assert "none.npz: no such file" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.gpu
@pytest.mark.parametrize("seed, extra_rows", [(5, 0), (6, 1003), (7, 20001)])
def test_gpu_impls_match_the_reference_in_every_precision(seed, extra_rows):
    matrix = ragged(seed, extra_rows)
    rows = [harness.measure(impl, prepare, "cuda", 2, 3) for impl, prepare in
            spmv.jobs("cuda", matrix, {"name": f"ragged{seed}", "source": "synthetic"}, np.random.default_rng(seed),
                      PRECISIONS)]
    assert [(r["impl"], r["precision"]) for r in rows] == [
        (i, p) for p in PRECISIONS for i in ("cusparse_csr", "dasp_tc", "dasp_tc_twin")]
    assert all(r["value"] > 0 for r in rows)


@pytest.mark.gpu
@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("impl", ["cusparse_csr", "dasp_tc", "dasp_tc_twin"])
def test_gpu_short_and_huge_rows_and_poison_is_overwritten(impl, precision, pieces):
    """Short rows of every packing, one row of 5000 nnz (many pieces), run three times: the long rows'
    counters are reset by each launch, every y overwritten."""
    import cupy as cp

    rng = np.random.default_rng(8)
    matrix = spmv.rounded(ragged(10, 3000, lengths=LENGTHS + [5000], top=20), "ragged", precision)
    dev = spmv._device_csr(matrix, "ragged")
    p = spmv_plan.plan(matrix.indptr, S[precision])
    unit = "tensor_core" if impl == "dasp_tc" else "cuda_core"
    for _ in range(3):  # fresh x each time; y poisoned each time
        x_host = quantize(rng.uniform(-1, 1, matrix.shape[1]), precision)
        x, y = cp.asarray(x_host), cp.full(matrix.shape[0], nan(precision), matrix.dtype)
        run = (spmv.cusparse_runner(dev, x, y, precision) if impl == "cusparse_csr"
               else spmv.tc_runner(dev, x, y, p, precision, twin=impl.endswith("_twin")))[0]
        run()
        wide, xw = spmv.decoded(matrix, precision).astype(np.float64), decode(x_host, precision).astype(np.float64)
        tol = dot_tolerance(precision, unit, 5000, wide @ xw, abs(wide) @ np.abs(xw))
        assert measure.rel_err(decode(y.get(), precision).astype(np.float64), wide @ xw) <= tol


@pytest.mark.gpu
@pytest.mark.parametrize("precision", PRECISIONS)
def test_gpu_order_leaves_y_in_the_plans_order(precision, monkeypatch):
    """Built with spmv.ORDER (DASP's output, tools/bench_spmv.py --variants dasp_contract), the kernel leaves
    y of every row but the long ones untouched and yp[s] = (A x)[rows[s]] for every output slot s."""
    import cupy as cp

    monkeypatch.setattr(spmv, "ORDER", 1)
    matrix = spmv.rounded(ragged(16, 3000, lengths=LENGTHS + [5000], top=20), "ragged", precision)
    p = spmv_plan.plan(matrix.indptr, S[precision])
    x_host = quantize(np.random.default_rng(9).uniform(-1, 1, matrix.shape[1]), precision)
    y = cp.full(matrix.shape[0], nan(precision), matrix.dtype)
    run = spmv.tc_runner(spmv._device_csr(matrix, "ragged"), cp.asarray(x_host), y, p, precision)[0]
    run()
    short = np.ones(matrix.shape[0], bool)
    short[p.long_row] = False
    assert np.isnan(decode(y.get(), precision)[short]).all()
    slots = run.keep["rows"] >= 0
    y[run.keep["rows"][slots]] = run.keep["yp"][slots]
    wide, xw = spmv.decoded(matrix, precision).astype(np.float64), decode(x_host, precision).astype(np.float64)
    tol = dot_tolerance(precision, "tensor_core", 5000, wide @ xw, abs(wide) @ np.abs(xw))
    assert measure.rel_err(decode(y.get(), precision).astype(np.float64), wide @ xw) <= tol


@pytest.mark.gpu
@pytest.mark.parametrize("s", [1, 2, 4])
def test_gpu_placement_equals_numpy(s):
    """Plan.placement with CuPy on the device CSR's int32 indptr gives numpy's slots and segments."""
    import cupy as cp

    matrix = ragged(13, 9000, lengths=LENGTHS + [5000], top=60)
    p = spmv_plan.plan(matrix.indptr, s)
    for host, device in zip(p.placement(matrix.indptr), p.placement(spmv._device_csr(matrix, "ragged")[0])):
        assert isinstance(device, cp.ndarray) and device.dtype == host.dtype
        assert np.array_equal(device.get(), host)


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp64", "fp32", "fp16"])   # bf16: decoded first (spmv.jobs)
def test_gpu_device_reference_equals_scipy(precision):
    """A x and |A||x| on the device equal scipy's float64 products of the rounded inputs (empty, short and
    long rows), row by row within 1e-13 of |A||x|."""
    import cupy as cp

    matrix = spmv.rounded(ragged(14, 20001, lengths=LENGTHS + [5000]), "ragged", precision)
    x = quantize(np.random.default_rng(4).uniform(-1, 1, matrix.shape[1]), precision)
    y, b = spmv.device_reference(spmv._device_csr(matrix, "ragged"), cp.asarray(x))
    wide, xw = matrix.astype(np.float64), x.astype(np.float64)
    magnitude = abs(wide) @ np.abs(xw)
    for got, want in ((y, wide @ xw), (b, magnitude)):
        assert got.dtype == cp.float64 and measure.rel_err(got, cp.asarray(want)) <= 1e-13
        assert (np.abs(got.get() - want) <= 1e-13 * magnitude).all()


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["fp64", "fp16", "bf16"])
def test_gpu_case_is_checked_on_the_device_at_the_host_tolerance(precision):
    """A CUDA case's output and reference stay on the device; its tolerance is the one of scipy's reference
    of the same x (drawn in the same order from the same seed)."""
    import cupy as cp

    matrix, same = ragged(15, 3000), np.random.default_rng(5)
    q = spmv.decoded(spmv.rounded(matrix, "ragged", precision), precision).astype(np.float64)
    for impl, prepare in spmv.jobs("cuda", matrix, {"name": "ragged", "source": "synthetic"},
                                   np.random.default_rng(5), [precision]):
        case = prepare()
        out = case.output(case.run())
        assert isinstance(out, cp.ndarray) and isinstance(case.reference, cp.ndarray) and out.dtype == cp.float64
        assert measure.check(out, case.reference, case.tol, case.what) <= case.tol
        x = decode(quantize(same.uniform(-1, 1, matrix.shape[1]), precision), precision).astype(np.float64)
        host = dot_tolerance(precision, impl.unit, np.diff(matrix.indptr).max(), q @ x, abs(q) @ np.abs(x))
        assert case.tol == pytest.approx(host, rel=1e-12)
