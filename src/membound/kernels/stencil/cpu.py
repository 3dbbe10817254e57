"""The stencils' numpy side (membound.kernels.stencil): the independent reference (scipy's
periodic correlate in float64, whole or at sampled points) and the CPU backend's three algorithms in
the storage dtype of each precision: cc_naive one step at a time, cc_tb in tiles with a t*r halo,
tc on the m x k (A) and k x 8 (B) operand tiles the GPU kernel issues in that precision
(geometry.STENCIL_MMA), multiplied with numpy matmul ('emulated on CPU'; tc_twin: elementwise and
summed over k). As the CUDA kernels, each step (cc) or launch (tc) sums in the accumulator type
(float64 for fp64, float32 for fp32, fp16 and bf16) and rounds its output to storage (precision.store);
tc's operands are rounded as the tensor cores see them (precision.tc_operand: tf32 for fp32; bf16's
bit patterns decoded)."""

from __future__ import annotations

import math

import numpy as np

from membound.model.geometry import fuse, fused_support, mma_shape, tc_rows
from membound.model.precision import decode, fmt, of_dtype, quantize, store, tc_operand
from membound.run.measure import array_module, to_host

# ------------------------------------------------------------------------------------ reference


def reference(x: np.ndarray, w: np.ndarray, steps: int) -> np.ndarray:
    """`steps` sequential periodic steps with scipy in float64 (the independent reference) from x (a
    storage array, or float64)."""
    import scipy.ndimage   # here: every Snakemake start imports this module, few jobs run the reference

    x = values(x)
    for _ in range(steps):
        x = scipy.ndimage.correlate(x, w, mode="wrap")
    return x


def values(x):
    """The numbers of a storage array x (or of float64 values) as float64, where x lies (precision.decode)."""
    return decode(x, of_dtype(x.dtype)).astype(np.float64)


def _valid_step(block, w: np.ndarray):
    """One step on the last w.ndim axes of `block` (host or device), keeping only points whose
    neighbours are all inside."""
    rad = w.shape[0] // 2
    core = tuple(s - 2 * rad for s in block.shape[-w.ndim:])
    out = array_module(block).zeros(block.shape[:-w.ndim] + core, dtype=block.dtype)
    w = w.astype(block.dtype)
    for off in zip(*np.nonzero(w)):
        out += w[off] * block[(...,) + tuple(slice(o, o + n) for o, n in zip(off, core))]
    return out


def _wrap_block(x: np.ndarray, starts, sizes) -> np.ndarray:
    """x[starts:starts+sizes] on every axis, with periodic wrap."""
    index = np.ix_(*[np.arange(s, s + n) % dim for s, n, dim in zip(starts, sizes, x.shape)])
    return x[index]


def neighbourhoods(x, points: np.ndarray, reach: int):
    """The periodic neighbourhood of half-width `reach` of each point (rows of `points`) of the field
    x, gathered where x lies (host or device): shape (len(points), 2 reach + 1, ...)."""
    xp, side = array_module(x), np.arange(-reach, reach + 1)
    shape = lambda d: (len(points), *(-1 if e == d else 1 for e in range(x.ndim)))  # noqa: E731
    return x[tuple(xp.asarray(((points[:, d, None] + side) % n).reshape(shape(d))) for d, n in enumerate(x.shape))]


def sampled_reference(x, w: np.ndarray, steps: int, points: np.ndarray) -> np.ndarray:
    """The value after `steps` steps at each point (rows of `points`), from its periodic
    neighbourhood in x (on the device where x is: the same array code as on the host)."""
    patches = values(neighbourhoods(x, points, steps * (w.shape[0] // 2)))
    for _ in range(steps):
        patches = _valid_step(patches, w)
    return to_host(patches).reshape(len(points))


# ---------------------------------------------------------------------------------------- CPU


def acc_dtype(x: np.ndarray) -> np.dtype:
    """The accumulator dtype of a field stored in x's dtype (its precision's record: float64 for float64,
    else float32)."""
    return np.dtype(fmt(of_dtype(x.dtype)).acc)


def _step(block, w):
    """One valid step of a block in storage dtype: summed in the accumulator type, rounded to storage."""
    p = of_dtype(block.dtype)
    return store(_valid_step(decode(block, p).astype(acc_dtype(block)), w), p)


def _cpu_naive(x, w, steps, depth):
    rad = w.shape[0] // 2
    for _ in range(steps):
        x = _step(np.pad(x, rad, mode="wrap"), w)
    return x


def _cpu_tb(x, w, steps, depth):
    halo = depth * (w.shape[0] // 2)
    edge = 64 if x.ndim == 2 else 16
    for _ in range(steps // depth):
        out = np.empty_like(x)
        for corner in np.ndindex(*[math.ceil(n / edge) for n in x.shape]):
            lo = [c * edge for c in corner]
            size = [min(edge, n - l) for l, n in zip(lo, x.shape)]
            block = _wrap_block(x, [l - halo for l in lo], [s + 2 * halo for s in size])
            for _ in range(depth):
                block = _step(block, w)
            out[tuple(slice(l, l + s) for l, s in zip(lo, size))] = block
        x = out
    return x


def precision_of(x: np.ndarray) -> str:
    """The precision whose storage dtype x has."""
    return of_dtype(x.dtype)


def b_operands(w: np.ndarray, depth: int, precision: str) -> tuple[np.ndarray, np.ndarray]:
    """(rows, B fragments) of the fused stencil in `precision` as the tensor cores see them: the fused
    weights (float64) rounded to storage, then to the tensor-core type (precision.tc_operand)."""
    rows, frags = tc_rows(fuse(w, depth), fused_support(w != 0, depth), precision)
    return rows, tc_operand(quantize(frags, precision), precision)


def _cpu_tc(x, w, steps, depth, twin=False):
    precision = precision_of(x)
    mm, mn, mk = mma_shape(precision)
    rows, frags = b_operands(w, depth, precision)
    acc_t = acc_dtype(x)
    frags = frags.astype(acc_t)
    mask = fused_support(w != 0, depth)
    x3 = x.reshape((1,) * (3 - x.ndim) + x.shape)
    nz, ny, nx = x3.shape
    rad, rz = mask.shape[-1] // 2, (mask.shape[0] // 2 if x.ndim == 3 else 0)
    ty, tx = math.ceil(ny / mm), math.ceil(nx / mn)
    for _ in range(steps // depth):
        pad = ((rz, rz), (rad, rad + ty * mm - ny), (rad, rad + tx * mn - nx + mk - 1))
        p = tc_operand(np.pad(x3, pad, mode="wrap"), precision).astype(acc_t)
        acc = np.zeros((nz, ty, tx, mm, mn), dtype=acc_t)
        f = 0
        for dz, dy, a, nk in rows:
            for c in range(nk):
                col0 = rad + a + mk * c
                s = p[rz + dz:rz + dz + nz, rad + dy:rad + dy + ty * mm, col0:col0 + tx * mn + mk - mn]
                s = np.lib.stride_tricks.sliding_window_view(s, mk, axis=-1)[..., ::mn, :]   # (nz, ty*mm, tx, mk)
                blocks = s.reshape(nz, ty, mm, tx, mk).transpose(0, 1, 3, 2, 4)
                if twin:                          # the twin: products summed over k, no matmul
                    acc += (blocks[..., :, :, None] * frags[f]).sum(axis=-2, dtype=acc_t)
                else:                             # (.., m, k) @ (k, 8): the MMA's operand tiles
                    acc += blocks @ frags[f]
                f += 1
        x3 = store(acc.transpose(0, 1, 3, 2, 4).reshape(nz, ty * mm, tx * mn)[:, :ny, :nx], precision)
    return x3.reshape(x.shape)


CPU = {"cc_naive": _cpu_naive, "cc_tb": _cpu_tb, "tc": _cpu_tc,
       "tc_twin": lambda x, w, steps, depth: _cpu_tc(x, w, steps, depth, twin=True)}
