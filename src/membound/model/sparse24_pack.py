"""The column packings of the 2:4 transform (membound.model.sparse24): which input column goes into
which K slot of which mma.sp, in layout "free" (`chunks`: any column in any slot, greedily, the fewest
zero columns) or "runs" (`runs`: a lane's B elements of an MMA one aligned run of consecutive
columns), and the mma.sp constants they follow (PTX ISA 9.7.14.6)."""

from __future__ import annotations

import numpy as np

from membound.model.precision import FORMATS, PRECISIONS

# mma.sp per precision that has it, from the precisions' records (precision.Format.mma_sp)
SPARSE = {p: FORMATS[p].mma_sp for p in PRECISIONS if FORMATS[p].mma_sp}
M_TILE, N_TILE = next(iter(SPARSE.values())).shape[:2]       # every mma.sp's m and n
GRANULARITY = {p: mma.sparsity for p, mma in SPARSE.items()}  # (kept, chunk) of mma.sp's A (PTX ISA 9.7.14.6.1)
SP_SHAPE = {p: mma.shape for p, mma in SPARSE.items()}       # logical m, n, k of mma.sp per precision
SP_TYPE = {p: mma.type for p, mma in SPARSE.items()}
RUN = {p: mma.shape[2] // 4 for p, mma in SPARSE.items()}    # layout "runs": a lane's B elements of one MMA
#                                                               (k / 4), consecutive x of one row
LAYOUT = "runs"                   # the layout stencil_sp.cu runs, so the model's S


def columns(wf3: np.ndarray, mask3: np.ndarray, dz: int) -> list[tuple[int, int, int, frozenset]]:
    """(dz, dy, u, rows) of every input column of plane dz: rows = the i with A[i, u] nonzero."""
    rz, rad = wf3.shape[0] // 2, wf3.shape[-1] // 2
    out = []
    for iy in range(wf3.shape[1]):
        dxs = np.flatnonzero(mask3[dz + rz, iy]) - rad
        if dxs.size == 0:
            continue
        for u in range(dxs[0], dxs[-1] + M_TILE):
            rows = frozenset(int(u - dx) for dx in dxs if 0 <= u - dx < M_TILE)
            if rows:
                out.append((dz, iy - rad, int(u), rows))
    return out


def pack(columns: list, kept: int, chunk: int) -> list[list]:
    """Chunks of at most `chunk` columns with at most `kept` nonzeros per row: each column (most rows
    first) into the fullest chunk where it fits, else a new one."""
    members: list[list] = []
    counts = np.zeros((len(columns), M_TILE), dtype=np.int64)     # nonzeros per row of each chunk
    sizes = np.zeros(len(columns), dtype=np.int64)
    for col in sorted(columns, key=lambda c: (-len(c[3]), c[1], c[2])):
        rows = np.zeros(M_TILE, dtype=np.int64)
        rows[list(col[3])] = 1
        n = len(members)
        fits = (sizes[:n] < chunk) & np.all(counts[:n] + rows <= kept, axis=1)
        best = int(np.argmax(np.where(fits, sizes[:n], -1))) if fits.any() else n
        if best == n:
            members.append([])
        members[best].append(col)
        counts[best] += rows
        sizes[best] += 1
    return [sorted(cols, key=lambda col: (col[1], col[2])) for cols in members]


def chunks(cols: list, kept: int, chunk: int) -> list[list]:
    """The columns in `kept`:`chunk` chunks. For 2:4 also the 1:2 pairs joined two by two (any two
    1:2 chunks make a valid 2:4 chunk), whichever needs fewer chunks."""
    direct = pack(cols, kept, chunk)
    if (kept, chunk) != (2, 4):
        return direct
    pairs = pack(cols, 1, 2)
    joined = [p + q for p, q in zip(pairs[::2], pairs[1::2] + [[]])]
    return min(direct, joined, key=len)


def runs(wf3: np.ndarray, mask3: np.ndarray, dz: int, precision: str, phase: int) -> list[list]:
    """Layout "runs": the K slots of plane dz's MMAs such that each lane's B elements of an MMA (TF32:
    slots q, q+4, q+8, q+12; f16: 8r+2q, 8r+2q+1) are RUN consecutive input columns of one fused row,
    starting at u = -phase mod RUN (one aligned vector load a lane where the tile's column of u = 0 is
    = phase mod RUN; sparse24.transform picks the phase). Runs of lanes 4g, 4g+1 (and of 4g+2, 4g+3)
    share the 1:2 / 2:4 chunks: two runs are paired where every chunk stays structured, greedily (most
    nonzeros first), a run without a partner beside a zero run; two pairs make an MMA. A zero run loads
    the run of its pair's other lane (else the MMA's first): its weights are zero, and a lane sharing
    another's address adds no shared-memory wavefront (sparse24_banks.wavefronts)."""
    kept, _ = GRANULARITY[precision]
    run, rz, rad = RUN[precision], wf3.shape[0] // 2, wf3.shape[-1] // 2
    runs = []
    for iy in range(wf3.shape[1]):
        dxs = np.flatnonzero(mask3[dz + rz, iy]) - rad
        if dxs.size == 0:
            continue
        lo = dxs[0] - (dxs[0] + phase) % run
        u0s = np.arange(lo, dxs[-1] + M_TILE, run)
        dx = u0s[:, None, None] + np.arange(run)[:, None] - np.arange(M_TILE) + rad   # (runs, e, row i) + rad
        inside = (dx >= 0) & (dx <= 2 * rad)
        cnts = np.where(inside, mask3[dz + rz, iy][np.clip(dx, 0, 2 * rad)], False).astype(np.int64)
        runs += [(iy - rad, int(u0), cnt) for u0, cnt in zip(u0s, cnts)]
    # nonzeros per chunk and row of each run (a run's elements in one chunk: TF32 1, f16 2)
    per_chunk = np.array([cnt.reshape(4, run // 4, M_TILE).sum(1) for _, _, cnt in runs])
    order = sorted(range(len(runs)), key=lambda i: -runs[i][2].sum())
    rank = np.argsort(order)
    free, pairs = np.ones(len(runs), bool), []
    for i in order:
        if not free[i]:
            continue
        free[i] = False
        fits = np.flatnonzero(free & (per_chunk + per_chunk[i] <= kept).all(axis=(1, 2)))
        partner = int(fits[np.argmin(rank[fits])]) if fits.size else None
        if partner is not None:
            free[partner] = False
        pairs.append((runs[i], runs[partner] if partner is not None else None))
    pad = (0, (-phase) % run, None)
    pairs += [(pad, None)] * (len(pairs) % 2)
    mmas = []
    for m in range(0, len(pairs), 2):
        lanes = [pairs[m][0], pairs[m][1] or pad, pairs[m + 1][0], pairs[m + 1][1] or pad]
        real = [lane for lane in lanes if lane[2] is not None]
        lanes = [lane if lane[2] is not None
                 else (lanes[q ^ 1] if lanes[q ^ 1][2] is not None else real[0])[:2] + (None,)
                 for q, lane in enumerate(lanes)]
        slots = []
        for kk in range(SP_SHAPE[precision][2]):
            q, e = (kk % 4, kk // 4) if FORMATS[precision].bytes == 4 else ((kk % 8) // 2, 2 * (kk // 8) + kk % 2)
            dy, u0, cnt = lanes[q]
            slots.append((dz, dy, u0 + e, int(cnt is None or not cnt[e].any())))
        mmas.append(slots)
    return mmas
