"""The tensor-core SpMV's plan (spmv_tc.cu): DASP's row classes with its short-row packing, made once
outside the timed region, for an MMA whose tile rows hold K = 4 S slots (S slots per lane: 1 for fp64
m8n8k4, 2 for tf32 m16n8k8, 4 for fp16 m16n8k16; `slots_per_lane`). `plan` is O(rows), numpy on the
host; where each nonzero goes (`Plan.placement`, O(nnz)) is computed where indptr lies: numpy, or CuPy
on the device.

- **long** rows (> LONG nnz): cut into pieces of `piece_tiles` tiles of 32 S consecutive nonzeros, one
  warp each, summed atomically (spmv_tc.cu PIECE).
- **empty** rows: 32 to a warp, y = 0 (ZEROS).
- every other row lies in one **tile row** ("lane row") of c tiles, 8 lane rows to a group (GROUPS), and
  several short rows may share one (DASP's short-row packing, generalized): a lane row holds a primary
  row from its first slot and up to SEGS[S] - 1 fillers (1 in fp64, 3 else), rows shorter than K,
  right-aligned in its last tile, each its own segment (2 bits of the column word). Which rows share is
  decided on counts per window of WINDOW rows: the free slots in the last tile of the rows of >= K nnz
  are filled first, then the remaining short rows are packed among themselves, each time taking the
  fullest combinations first (`patterns`) -- DASP's 1 + 3 and 2 + 2 rows are two of them.
- within a window, lane rows are sorted by tiles c, then segments, then their first row, and taken 8 at a
  time; runs of groups with the same c and J (segments) are dealt to warps, `groups_per_warp` groups each.

A matrix's plans for every S are made once by the workflow and read by every SpMV job (spmv_plans.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache

import numpy as np

from membound.model.precision import fmt
from membound.run.measure import array_module

SEG_SHIFT = 30      # column word = segment << SEG_SHIFT | column (spmv_tc.cu)
MAX_SEG = 4         # rows a lane row can hold (2 bits)
SEGS = {1: 2, 2: 4, 4: 4}  # rows a lane row holds by S (fp64 2: docs/kernels_spmv.md, "Two rows a tile row")
LONG = 256          # rows with more nonzeros are split into pieces
PIECE_TILES = (8, 128)  # tiles per piece of a long row: a power of 2 in this range (piece_tiles)
PIECE_SHARE = 4096      # ... and at most 1 / PIECE_SHARE of the plan's tiles
TARGET = {1: 16, 2: 8, 4: 8}  # tiles a warp's groups should add up to, by S (at most 4 groups: docs/kernels_spmv.md)
WINDOW = 4096       # rows are packed and sorted only within windows, so x's and y's accesses stay local
GROUPS, PIECE, ZEROS = 0, 1, 2


def slots_per_lane(precision: str) -> int:
    """S: the slots of one lane per MMA, 8 bytes of values in every precision (fp64 1, fp32 2, fp16 4)."""
    return 8 // fmt(precision).bytes


@dataclass
class Plan:
    """One SpMV's warps (spmv_tc.cu) and, per row, where its nonzeros go (`placement`)."""
    s: int                  # slots per lane; a tile is 32 s slots, a tile row K = 4 s
    desc: np.ndarray        # int32 (warps, 4): tile, rows offset | long index, c | tiles | rows, groups | J << 8 | kind << 16
    rows: np.ndarray        # int32 output rows of GROUPS (8 J per group, [j][g]) and ZEROS warps (-1: none)
    long_row: np.ndarray    # int32 rows of > LONG nnz
    long_pieces: np.ndarray  # int32 pieces of each
    mma: int                # MMAs one SpMV issues
    slots: int              # packed slots, tiles x 32 s
    # per row: its q-th nonzero has position p = start + q in its lane row and lies at slot
    # first + p + (p // K) jump of the tile stream (jump = tile - K, or 0 for a long row), in segment `segment`
    first: np.ndarray
    start: np.ndarray
    jump: np.ndarray
    segment: np.ndarray

    @property
    def k(self) -> int:
        return 4 * self.s

    def placement(self, indptr):
        """(slot, seg) of every packed slot: the nnz index there (int32, -1: padding) and its segment
        (uint8), for the CSR row pointers `indptr`; computed with numpy, or with CuPy on the device
        where indptr is a CuPy array."""
        xp = array_module(indptr)
        nnz = int(indptr[-1])
        # the row of each nonzero: the steps between the non-empty rows, at their first nonzeros, summed
        full = xp.flatnonzero(xp.diff(indptr))
        step = xp.zeros(nnz, xp.int64)
        step[indptr[full]] = xp.diff(full, prepend=0)
        row = xp.cumsum(step)
        del step
        q = xp.arange(nnz, dtype=xp.int64)
        p = q - indptr[row] + xp.asarray(self.start)[row]
        dest = xp.asarray(self.first)[row] + p + p // self.k * xp.asarray(self.jump)[row]
        del p
        slot = xp.full(self.slots, -1, xp.int32)
        slot[dest] = q.astype(xp.int32)
        seg = xp.zeros(self.slots, xp.uint8)
        seg[dest] = xp.asarray(self.segment)[row]
        return slot, seg

    def packed(self, indptr, indices, data, acc) -> dict:
        """spmv_tc.cu's arrays for the CSR (indptr, indices, data), where it lies (numpy or CuPy), packed once
        as DASP's preprocessing is: descriptors, output rows, values and column words (segment << SEG_SHIFT |
        column; padding: value 0, column 0) in MMA order, the long rows' tables and accumulators (dtype acc)."""
        xp = array_module(indptr)
        slot, seg = self.placement(indptr)
        slot = xp.where(ok := slot >= 0, slot, 0)
        word = xp.left_shift(seg.astype(xp.uint32), xp.uint32(SEG_SHIFT)) | indices[slot].astype(xp.uint32)

        def some(a):  # no empty buffers
            return xp.asarray(a if len(a) else np.zeros(1, a.dtype))

        n_long = max(len(self.long_row), 1)
        return {"desc": xp.asarray(self.desc), "rows": some(self.rows),
                "pval": xp.where(ok, data[slot], 0).astype(data.dtype),
                "pcol": xp.where(ok, word, xp.uint32(0)).astype(xp.uint32).view(xp.int32),
                "long_row": some(self.long_row), "long_pieces": some(self.long_pieces),
                "long_acc": xp.zeros(n_long, acc), "long_cnt": xp.zeros(n_long, xp.uint32)}


def piece_tiles(tiles: int) -> int:
    """Tiles per piece of a long row in a plan of `tiles` tiles: the largest power of 2 in PIECE_TILES
    that is at most tiles / PIECE_SHARE. Each piece ends in an atomic add and a fence, so a large matrix's
    long rows go in long pieces; a small matrix's stay short, so that no piece outlasts the other warps
    (docs/kernels_spmv.md, "Piece length")."""
    low, high = PIECE_TILES
    size = low
    while size * 2 <= min(high, tiles / PIECE_SHARE):
        size *= 2
    return size


def groups_per_warp(c, j, s):
    """Groups of c tiles and j segments one warp takes: at most 32 output lanes, about TARGET[s] tiles."""
    return np.minimum(4 // j, np.maximum(1, TARGET[s] // c))


@cache
def patterns(cap: int, items: int, largest: int) -> tuple[tuple[int, ...], ...]:
    """Multisets of row lengths 1..largest with at most `items` rows and sum <= cap, fullest first, then
    with the longest rows first (largest first within each)."""
    out = []

    def grow(prefix, top, left):
        if prefix:
            out.append(tuple(prefix))
        if len(prefix) < items:
            for n in range(min(top, left), 0, -1):
                grow(prefix + [n], n, left - n)

    grow([], largest, cap)
    return tuple(sorted(out, key=lambda p: (-sum(p), [-n for n in p])))


def _greedy(short_counts, bins, k):
    """(capacity, pattern, multiplicity per window) of the packing: bins[:, f] lane rows with f free
    slots take fillers first (capacity f < k), then the rest of the short rows make new lane rows
    (capacity k); short_counts[:, n] rows of n < k nonzeros per window, consumed."""
    taken = []
    for cap in [*range(k - 1, 0, -1), k]:
        left = bins[:, cap] if cap < k else None
        for pat in patterns(cap, SEGS[k // 4] - (cap < k), k - 1):
            mult = left.copy() if left is not None else np.full(len(short_counts), np.iinfo(np.int64).max)
            need = Counter(pat)
            for n, times in need.items():
                mult = np.minimum(mult, short_counts[:, n] // times)
            if not mult.any():
                continue
            for n, times in need.items():
                short_counts[:, n] -= times * mult
            if left is not None:
                left -= mult
            taken.append((cap, pat, mult))
    return taken


def _rank(keys: np.ndarray) -> np.ndarray:
    """Each element's rank among the equal keys before it (keys sorted)."""
    return np.arange(len(keys)) - np.searchsorted(keys, keys, "left")


def _lanes(length: np.ndarray, k: int):
    """Lane rows of the rows of 1..LONG nonzeros: (items (lanes, MAX_SEG) rows, -1: none; window)."""
    rows = np.flatnonzero((length > 0) & (length <= LONG))
    n, win = length[rows], rows // WINDOW
    windows = int(win.max()) + 1 if len(rows) else 0
    short = n < k
    short_counts = np.bincount(win[short] * k + n[short], minlength=windows * k).reshape(windows, k)
    prim = rows[~short]
    free = (-length[prim]) % k
    bins = np.bincount(prim // WINDOW * k + free, minlength=windows * k).reshape(windows, k)
    taken = _greedy(short_counts, bins, k)
    assert not short_counts.any(), "every short row is packed"
    # instances of each (capacity, pattern): window, capacity, pattern items; ordered by window, capacity, greedy order
    inst_w = np.concatenate([np.repeat(np.arange(windows), m) for _, _, m in taken] or [np.zeros(0, np.int64)])
    inst_cap = np.concatenate([np.full(int(m.sum()), cap) for cap, _, m in taken] or [np.zeros(0, np.int64)])
    inst_items = np.concatenate([np.tile(list(p) + [0] * (MAX_SEG - len(p)), (int(m.sum()), 1)) for _, p, m in taken]
                                or [np.zeros((0, MAX_SEG), np.int64)])
    order = np.lexsort((inst_cap, inst_w))  # stable: the greedy order within (window, capacity)
    inst_w, inst_cap, inst_items = inst_w[order], inst_cap[order], inst_items[order]
    filling = inst_cap < k
    # lane rows: every row of >= k nnz (sorted by window, free slots, row), fillers of the i-th instance of
    # (window, f) to the i-th such row; then one lane row per new-lane instance
    prim = prim[np.lexsort((prim, free, prim // WINDOW))]
    prim_key = (prim // WINDOW) * k + (-length[prim]) % k
    items = np.full((len(prim) + int((~filling).sum()), MAX_SEG), -1, np.int64)
    lengths = np.zeros_like(items)
    items[: len(prim), 0], lengths[: len(prim), 0] = prim, length[prim]
    key = inst_w[filling] * k + inst_cap[filling]
    at = np.searchsorted(prim_key, key, "left") + _rank(key)
    lengths[at, 1:] = inst_items[filling, : MAX_SEG - 1]
    lengths[len(prim):] = inst_items[~filling]
    win_of = np.concatenate([prim // WINDOW, inst_w[~filling]])
    # the short rows themselves, matched in order to the demands for their (window, length)
    lane, slot = np.nonzero(lengths > 0)
    demand = (lane >= len(prim)) | (slot > 0)
    lane, slot = lane[demand], slot[demand]
    dkey = win_of[lane] * k + lengths[lane, slot]
    order = np.argsort(dkey, kind="stable")
    srows = rows[short]
    srows = srows[np.lexsort((srows, length[srows], srows // WINDOW))]
    items[lane[order], slot[order]] = srows
    return items, win_of


def plan(indptr: np.ndarray, s: int) -> Plan:
    """The plan of the CSR row pointers `indptr` for S = s slots per lane (module docstring)."""
    indptr = np.asarray(indptr, dtype=np.int64)
    length = np.diff(indptr)
    k, tile = 4 * s, 32 * s
    items, win = _lanes(length, k)
    n_items = (items >= 0).sum(axis=1)
    lens = np.where(items >= 0, length[items.clip(0)], 0)
    c_own = -(-lens[:, 0] // k)
    # groups: lane rows sorted by window, tiles, segments, first row (nearby rows share x's and y's lines);
    # 8 at a time within each window
    order = np.lexsort((items[:, 0], -n_items, -c_own, win))
    items, lens, c_own, n_items, win = items[order], lens[order], c_own[order], n_items[order], win[order]
    first = np.searchsorted(win, win, "left")
    pos = np.arange(len(win)) - first
    win_groups = np.bincount(win, minlength=int(win.max()) + 1 if len(win) else 0)
    win_groups = -(-win_groups // 8)
    group = (np.cumsum(win_groups) - win_groups)[win] + pos // 8 if len(win) else pos
    n_groups = int(win_groups.sum())
    g_lane = pos % 8
    starts = np.flatnonzero(np.diff(group, prepend=-1))     # lane rows are in group order
    c, j = (np.maximum.reduceat(a, starts) if n_groups else a[:0] for a in (c_own, n_items))
    # warps of runs of groups with equal (c, j)
    new_run = np.ones(n_groups, bool)
    new_run[1:] = (c[1:] != c[:-1]) | (j[1:] != j[:-1])
    run_start = np.flatnonzero(new_run)
    run = np.cumsum(new_run) - 1
    in_run = np.arange(n_groups) - run_start[run]
    per = groups_per_warp(c, j, s)
    run_warps = -(-np.diff(np.append(run_start, n_groups)) // per[run_start])
    g_warp = (np.cumsum(run_warps) - run_warps)[run] + in_run // per
    # long rows and their pieces, then the groups, in the tile stream
    long_row = np.flatnonzero(length > LONG)
    long_tiles = -(-length[long_row] // tile)
    per_piece = piece_tiles(int(long_tiles.sum() + c.sum()))
    pieces = -(-long_tiles // per_piece)
    long_base = np.cumsum(long_tiles) - long_tiles
    group_base = long_tiles.sum() + np.cumsum(c) - c
    # where every row's nonzeros go (Plan): a long row's are consecutive (jump 0), fillers right-aligned
    first = np.zeros(len(length), np.int64)   # the slot of the row's lane row in its first tile
    start = np.zeros(len(length), np.int64)   # the row's first position in its lane row
    jump = np.full(len(length), tile - k, np.int64)
    segment = np.zeros(len(length), np.uint8)
    present = items >= 0
    fill_start = c[group][:, None] * k - np.cumsum(lens[:, ::-1], axis=1)[:, ::-1]
    lane_of, seg_of = np.nonzero(present)
    r = items[present]
    first[r] = group_base[group][lane_of] * tile + g_lane[lane_of] * k
    start[r], segment[r] = np.where(seg_of == 0, 0, fill_start[present]), seg_of
    first[long_row], jump[long_row] = long_base * tile, 0
    desc, rows, mma = _warps(items, group, g_lane, c, j, g_warp, group_base, long_row, long_base, pieces, long_tiles,
                             per_piece, np.flatnonzero(length == 0))
    return Plan(s, desc, rows, long_row.astype(np.int32), pieces.astype(np.int32), mma,
                int(long_tiles.sum() + c.sum()) * tile, first, start, jump, segment)


def _warps(items, group, g_lane, c, j, g_warp, group_base, long_row, long_base, pieces, long_tiles, per_piece, empty):
    """The descriptors and output rows of the piece, group and zero warps, in that order, and the MMAs."""
    n_groups = len(c)
    out_len = 8 * j
    out_base = np.cumsum(out_len) - out_len
    rows = np.full(int(out_len.sum()), -1, np.int32)
    seg_idx = np.tile(np.arange(MAX_SEG), (len(items), 1))
    present = items >= 0
    rows[(out_base[group][:, None] + seg_idx * 8 + g_lane[:, None])[present]] = items[present]
    # pieces
    li = np.repeat(np.arange(len(long_row)), pieces)
    p = np.arange(len(li)) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    tiles = np.minimum(per_piece, long_tiles[li] - p * per_piece)
    piece_desc = np.stack([long_base[li] + p * per_piece, li, tiles, np.full(len(li), PIECE << 16)], axis=1)
    # group warps: the first group of each warp
    n_warps = int(g_warp.max()) + 1 if n_groups else 0
    lead = np.searchsorted(g_warp, np.arange(n_warps), "left")
    count = np.bincount(g_warp, minlength=n_warps)
    group_desc = np.stack([group_base[lead], out_base[lead], c[lead], count | j[lead] << 8 | GROUPS << 16], axis=1)
    # zero warps
    z = np.arange(0, len(empty), 32)
    zero_desc = np.stack([np.zeros(len(z), np.int64), len(rows) + z, np.minimum(32, len(empty) - z),
                          np.full(len(z), ZEROS << 16)], axis=1)
    rows = np.concatenate([rows, empty.astype(np.int32)])
    desc = np.concatenate([piece_desc, group_desc, zero_desc]).reshape(-1, 4).astype(np.int32)
    return desc, rows, int(long_tiles.sum() + (c - 1 + j).sum())
