"""FP64 stencils in the three roles of paper 000 Table 3 (Figure 8), on CUDA (CuPy) or the CPU (numpy).

A stencil (shape star|box, dims 2|3, radius r) has a DISTINCT random weight per point, passed at run
time: out[p] = sum_o w[o] * in[p + o] over its offsets o (paper 002 Sec. 3.2.1, K points).

Roles (impl: unit, paper role):
- cc_naive (cuda_core, Brick): one time step per launch, `steps` launches (3D: streaming along z,
  stencil_cc3.cu or stencil_tb3.cu at depth 1).
- cc_tb (cuda_core, EBISU): temporal blocking at depth t, the last of t steps written (steps/t
  launches). 2D: a tile plus a halo of t*r is loaded once, t steps run on chip on shrinking regions;
  3D: streaming along z with t pipelined stages of plane rings in shared memory (stencil_tb3.cu).
- tc (tensor_core, ConvStencil): kernel fusion as ConvStencil (paper 002 Sec. 2.2.3): the t-step
  stencil is fused into one enlarged stencil K^(t) (the t-fold self-convolution of the weights,
  radius t*r) applied once per t steps with FP64 MMA (m8n8k4); see tc_rows for the transformation.
  2D: stencil_tc.cu; 3D: stencil_tc3.cu, streaming along z (see tc_groups).
- tc_twin (cuda_core, ConvStencil twin): the same sources built with TWIN=1 (issue 15): the same
  loads, stores and launches, each MMA done on its register fragments with shuffles and FMAs.

Boundary rule: periodic in every dimension, for every role and the reference. With periodic
boundaries t sequential steps equal one application of the fused stencil everywhere, so all three
roles compute exactly the function of `steps` sequential steps of scipy.ndimage.correlate(mode='wrap').

The CPU backend runs the same three algorithms in numpy: cc_tb in tiles with a t*r halo, tc with
numpy matmul on the 8x4 (A) and 4x8 (B) operand tiles the GPU kernel issues ('emulated on CPU'), and
tc_twin the same tiles multiplied elementwise and summed over k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.ndimage

from membound import measure
from membound.geometry import MMA_K, MMA_M, MMA_N, fuse, fused_support, support, tc_rows, tc_sparsity  # noqa: F401
from membound.kernels import arg_parser, load_module
from membound.kernels import stencil_tuning as tuning
from membound.kernels.harness import Case, Impl, run_jobs, select
from membound.measure import guarded

IMPLS = (Impl("stencil", "cc_naive", "cuda_core", "Brick"), Impl("stencil", "cc_tb", "cuda_core", "EBISU"),
         Impl("stencil", "tc", "tensor_core", "ConvStencil"),
         Impl("stencil", "tc_twin", "cuda_core", "ConvStencil twin", needs_mma=True))
TOL = 1e-10                   # FP64; the fused stencil sums in another order than t sequential steps
WHOLE_CHECK_POINTS = 4_000_000  # larger timed domains: whole check on CHECK_DOMAIN + sampled check
CHECK_DOMAIN = {2: (333, 517), 3: (37, 45, 70)}
SAMPLES = 256


@dataclass(frozen=True)
class Stencil:
    name: str
    shape: str
    dims: int
    radius: int
    depth: int

    def __post_init__(self):
        if self.shape not in ("star", "box") or self.dims not in (2, 3) or self.radius < 1 or self.depth < 1:
            raise ValueError(f"stencil '{self.name}': need shape star|box, dims 2|3, radius >= 1, depth >= 1")


# ------------------------------------------------------------------------------------ weights


def random_weights(rng: np.random.Generator, shape: str, dims: int, radius: int) -> np.ndarray:
    """Distinct positive random weights on the stencil's support (zero elsewhere), summing to 1 so
    that values neither blow up nor decay over many steps."""
    mask = support(shape, dims, radius)
    w = np.where(mask, rng.uniform(0.5, 1.5, mask.shape), 0.0)
    return w / w.sum()


# ------------------------------------------------------------------------------ TC transformation


def tc_groups(rows: np.ndarray, frags: np.ndarray, rf: int) -> tuple[str, np.ndarray]:
    """stencil_tc3.cu's TABLE and B fragments: the rows of `tc_rows` grouped by (dy, a, nk), so that
    one A fragment serves every dz of a group. A group is G(dy, a, nk, mask, f0): bit j = rf - dz
    of mask marks its rows; chunk c of the row of bit j is fragment f0 + c * (rows in the group) +
    (rank of bit j), in the returned order."""
    first = np.concatenate([[0], np.cumsum(rows[:, 3])])
    table, order = [], []
    for key in sorted({tuple(r[1:]) for r in rows.tolist()}):
        members = sorted((i for i, r in enumerate(rows.tolist()) if tuple(r[1:]) == key), key=lambda i: -rows[i, 0])
        mask = sum(1 << (rf - int(rows[i, 0])) for i in members)
        table.append(f"G({key[0]},{key[1]},{key[2]},{mask},{len(order)})")
        order.extend(first[i] + c for c in range(key[2]) for i in members)
    return "".join(table), frags[order]



# ------------------------------------------------------------------------------------ reference


def reference(x: np.ndarray, w: np.ndarray, steps: int) -> np.ndarray:
    """`steps` sequential periodic steps with scipy (the independent reference)."""
    for _ in range(steps):
        x = scipy.ndimage.correlate(x, w, mode="wrap")
    return x


def _valid_step(block: np.ndarray, w: np.ndarray) -> np.ndarray:
    """One step on the last w.ndim axes of `block`, keeping only points whose neighbours are all inside."""
    rad = w.shape[0] // 2
    core = tuple(s - 2 * rad for s in block.shape[-w.ndim:])
    out = np.zeros(block.shape[:-w.ndim] + core)
    for off in zip(*np.nonzero(w)):
        out += w[off] * block[(...,) + tuple(slice(o, o + n) for o, n in zip(off, core))]
    return out


def _wrap_block(x: np.ndarray, starts, sizes) -> np.ndarray:
    """x[starts:starts+sizes] on every axis, with periodic wrap."""
    index = np.ix_(*[np.arange(s, s + n) % dim for s, n, dim in zip(starts, sizes, x.shape)])
    return x[index]


def sampled_reference(x: np.ndarray, w: np.ndarray, steps: int, points: np.ndarray) -> np.ndarray:
    """The value after `steps` steps at each point (rows of `points`), from its periodic neighbourhood."""
    reach = steps * (w.shape[0] // 2)
    patches = np.stack([_wrap_block(x, p - reach, (2 * reach + 1,) * x.ndim) for p in points])
    for _ in range(steps):
        patches = _valid_step(patches, w)
    return patches.reshape(len(points))


# ---------------------------------------------------------------------------------------- CPU


def _cpu_naive(x, w, steps, depth):
    rad = w.shape[0] // 2
    for _ in range(steps):
        x = _valid_step(np.pad(x, rad, mode="wrap"), w)
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
                block = _valid_step(block, w)
            out[tuple(slice(l, l + s) for l, s in zip(lo, size))] = block
        x = out
    return x


def _cpu_tc(x, w, steps, depth, twin=False):
    mask = fused_support(w != 0, depth)
    rows, frags = tc_rows(fuse(w, depth), mask)
    x3 = x.reshape((1,) * (3 - x.ndim) + x.shape)
    nz, ny, nx = x3.shape
    rad, rz = mask.shape[-1] // 2, (mask.shape[0] // 2 if x.ndim == 3 else 0)
    ty, tx = math.ceil(ny / MMA_M), math.ceil(nx / MMA_N)
    for _ in range(steps // depth):
        pad = ((rz, rz), (rad, rad + ty * MMA_M - ny), (rad, rad + tx * MMA_N - nx + MMA_N - 1))
        p = np.pad(x3, pad, mode="wrap")
        acc = np.zeros((nz, ty, tx, MMA_M, MMA_N))
        f = 0
        for dz, dy, a, nk in rows:
            for c in range(nk):
                col0 = rad + a + MMA_K * c
                s = p[rz + dz:rz + dz + nz, rad + dy:rad + dy + ty * MMA_M, col0:col0 + tx * MMA_N]
                blocks = s.reshape(nz, ty, MMA_M, tx, MMA_N)[..., :MMA_K].transpose(0, 1, 3, 2, 4)
                if twin:                          # the twin: products summed over k, no matmul
                    acc += (blocks[..., :, :, None] * frags[f]).sum(axis=-2)
                else:                             # (.., 8, 4) @ (4, 8): the MMA's operand tiles
                    acc += blocks @ frags[f]
                f += 1
        x3 = acc.transpose(0, 1, 3, 2, 4).reshape(nz, ty * MMA_M, tx * MMA_N)[:, :ny, :nx]
    return x3.reshape(x.shape)


CPU = {"cc_naive": _cpu_naive, "cc_tb": _cpu_tb, "tc": _cpu_tc,
       "tc_twin": lambda x, w, steps, depth: _cpu_tc(x, w, steps, depth, twin=True)}


# --------------------------------------------------------------------------------------- CUDA

TC_TILE = dict(NT=4, WX=2, WY=4)
TC3_TILE = dict(NT=2, WX=2, WY=4, BZ=64, MINB=2)   # stencil_tc3.cu: BZ output planes per block, MINB blocks per SM


def cc_launch(st: Stencil, depth: int, shape3: tuple, tile: dict | None = None) -> tuning.Launch:
    """The CUDA-core kernel's launch for `st` at `depth` (1: the unblocked role) on this GPU: its
    tuned tile (stencil_tuning), or `tile` (the sweep's variants)."""
    import cupy as cp

    gpu = tuning.gpu_key(cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode())
    tile = tile or tuning.cc_tile(st.dims, st.shape, st.radius, depth, gpu)
    return tuning.plan(tile, st.shape, st.radius, depth, shape3, f"stencil {st.name}")


def weights_arg(w: np.ndarray) -> np.ndarray:
    """The weights as the CUDA-core kernels' by-value argument (struct Weights, stencil_strip.cuh)."""
    return np.ascontiguousarray(w.ravel(), dtype=np.float64).view(np.dtype([("w", np.float64, (w.size,))]))


def _tc_kernel(st: Stencil, frags: np.ndarray, rows: np.ndarray, twin: bool):
    """((kernel, shared bytes), tile, threads, B fragments, rows or None) of the tensor-core kernel:
    2D stencil_tc.cu, 3D stencil_tc3.cu (its TABLE from tc_groups); twin: built with TWIN=1."""
    rf = st.radius * st.depth
    tile = TC3_TILE if st.dims == 3 else TC_TILE
    bx, by = 8 * tile["NT"] * tile["WX"], 8 * tile["WY"]
    pitch = bx + 2 * rf + 3
    pitch += (4 - pitch) % 16
    macros = dict(RF=rf, PITCH=pitch, TWIN=int(twin), **tile)
    threads = 32 * tile["WX"] * tile["WY"]
    if st.dims == 3:
        table, frags = tc_groups(rows, frags, rf)
        words = 2 * (by + 2 * rf) * pitch + 32 * len(frags)
        kernel = _compiled("stencil_tc3.cu", "stencil_tc3", dict(macros, TABLE=table), 8 * words)
        return kernel, (bx, by, tile["BZ"]), threads, frags, None
    words = (by + 2 * rf) * pitch + 32 * len(frags)
    return _compiled("stencil_tc.cu", "stencil_tc", dict(macros, DIMS=2), 8 * words), (bx, by, 1), threads, frags, rows


def _compiled(source: str, name: str, macros: dict, smem: int):
    kernel = load_module(source, tuple(f"-D{k}={v}" for k, v in sorted(macros.items()))).get_function(name)
    kernel.max_dynamic_shared_size_bytes = smem
    return kernel, smem


def _cuda_runner(impl: str, st: Stencil, w: np.ndarray, x0, steps: int, tile: dict | None = None):
    """A function running `steps` steps of `impl` from device array x0; returns the output array
    (tile: the CUDA-core tile to run instead of the tuned one)."""
    import cupy as cp

    shape3 = (1,) * (3 - x0.ndim) + x0.shape
    nz, ny, nx = shape3
    bufs = [cp.full_like(x0, np.nan), cp.full_like(x0, np.nan)]
    if impl in ("tc", "tc_twin"):
        rows, frags = tc_rows(fuse(w, st.depth), fused_support(w != 0, st.depth))
        (kernel, smem), tc_tile, threads, frags, rows = _tc_kernel(st, frags, rows, impl == "tc_twin")
        lane_major = np.ascontiguousarray(frags.transpose(0, 2, 1).reshape(len(frags), 32))  # lane = 4j + k
        extra = (cp.asarray(lane_major), np.int32(len(frags)))
        if rows is not None:
            extra = (cp.asarray(rows), np.int32(len(rows)), *extra)
        launches = steps // st.depth
        grid, after = tuple(math.ceil(n / b) for n, b in zip((nx, ny, nz), tc_tile)), ()
    else:
        depth = st.depth if impl == "cc_tb" else 1
        launch = cc_launch(st, depth, shape3, tile)
        kernel, smem = _compiled(launch.source, launch.name, launch.macros, launch.smem)
        blocks = tuning.occupancy(launch.threads, kernel.num_regs, smem)
        grid, after = launch.grid(shape3, cp.cuda.Device().attributes["MultiProcessorCount"], blocks)
        extra, after = (weights_arg(w),), tuple(np.int32(a) for a in after)
        threads, launches = launch.threads, steps // depth
    dims = (np.int32(nz), np.int32(ny), np.int32(nx))

    def run():
        src = x0
        for i in range(launches):
            dst = bufs[i % 2]
            kernel(grid, (threads,), (src, dst, *extra, *dims, *after), shared_mem=smem)
            src = dst
        return src

    return run


# ------------------------------------------------------------------------------------ measure


def _check_cuda(impl, st, rng, shape, steps):
    """Whole-array check of `impl` on a fresh random field of `shape` (same kernel and launch config)."""
    import cupy as cp

    x = rng.random(shape)
    w = random_weights(rng, st.shape, st.dims, st.radius)
    out = _cuda_runner(impl, st, w, cp.asarray(x), steps)()
    return measure.check(cp.asnumpy(out), reference(x, w, steps), TOL, f"{st.name} {impl} on {_fmt(shape)}")


def prepare(impl: Impl, st: Stencil, domain: tuple, steps: int, backend: str, rng: np.random.Generator) -> Case:
    """One role on a fresh random field of `domain`: its timed call (`steps` steps) and its check, the
    whole output, or for domains above WHOLE_CHECK_POINTS SAMPLES sampled points (after a whole
    check of the same kernels on CHECK_DOMAIN)."""
    x = rng.random(domain)
    w = random_weights(rng, st.shape, st.dims, st.radius)
    depth = 1 if impl.name == "cc_naive" else st.depth
    points = math.prod(domain)
    whole = points <= WHOLE_CHECK_POINTS
    if backend == "cpu":
        run = lambda: CPU[impl.name](x, w, steps, depth)  # noqa: E731
        to_host, xp = np.asarray, np
        note = "emulated on CPU; " if impl.name.startswith("tc") else ""
    else:
        import cupy as cp

        try:
            run = _cuda_runner(impl.name, st, w, cp.asarray(x), steps)
        except cp.cuda.memory.OutOfMemoryError as err:
            raise MemoryError(f"stencil domain {_fmt(domain)} does not fit ({err}); shrink stencil.domain_"
                              f"{st.dims}d in config/config.yaml") from None
        except ValueError as err:   # a depth or tile that shared memory cannot hold (stencil_tuning.plan)
            raise SystemExit(f"error: {err}") from None
        to_host, xp, note = cp.asnumpy, cp, ""
        if not whole:
            _check_cuda(impl.name, st, rng, CHECK_DOMAIN[st.dims], steps)
    if whole:
        output, ref, what = to_host, reference(x, w, steps), f"{st.name} {impl.name} on {_fmt(domain)}"
        checked = "whole output checked"
    else:
        idx = rng.integers(0, domain, size=(SAMPLES, len(domain)))
        output = lambda out: to_host(out[tuple(xp.asarray(i) for i in idx.T)])  # noqa: E731
        ref, what = sampled_reference(x, w, steps, idx), f"{st.name} {impl.name} on {_fmt(domain)} (sampled)"
        checked = (f"whole output checked on {_fmt(CHECK_DOMAIN[st.dims])} with the same kernels, "
                   f"{SAMPLES} sampled points of the timed domain checked")
    return Case(run=run, output=output, reference=ref, tol=TOL, what=what,
                row={"problem": st.name, "n": points, "domain": _fmt(domain), "depth": depth, "steps": steps,
                     "work_items": points * steps},
                work=points * steps, metric="GStencil/s",
                notes=[f"{note}{checked}; periodic boundaries; one timed call = {steps} steps in {steps // depth} launches"])


def _fmt(domain) -> str:
    return "x".join(str(n) for n in domain)


def parse_domain(text: str, dims: int) -> tuple[int, ...]:
    """'10240x10240' -> (10240, 10240); a clear error when it is malformed or has the wrong rank."""
    try:
        domain = tuple(int(v) for v in text.lower().split("x"))
    except ValueError:
        domain = ()
    if len(domain) != dims or min(domain, default=0) < 1:
        raise SystemExit(f"error: --domain '{text}' must be {dims} positive sizes joined by 'x' (e.g. "
                         f"{'x'.join(['512'] * dims)})")
    return domain


def main(argv=None):
    parser = arg_parser("FP64 stencils on CUDA cores (naive, temporal blocking) and tensor cores (kernel fusion).")
    parser.add_argument("--stencil", required=True, help="name, e.g. 2d5pt")
    parser.add_argument("--shape", choices=["star", "box"], required=True)
    parser.add_argument("--dims", type=int, choices=[2, 3], required=True)
    parser.add_argument("--radius", type=int, required=True)
    parser.add_argument("--depth", type=int, required=True)
    parser.add_argument("--domain", required=True, help="e.g. 10240x10240 or 512x512x512")
    parser.add_argument("--steps", type=int, required=True)
    args = parser.parse_args(argv)
    st = Stencil(args.stencil, args.shape, args.dims, args.radius, args.depth)
    domain = parse_domain(args.domain, args.dims)
    if args.steps < 1 or args.steps % args.depth:
        raise SystemExit(f"error: --steps {args.steps} must be a positive multiple of --depth {args.depth}")
    rng = np.random.default_rng()
    jobs = [(impl, partial(prepare, impl, st, domain, args.steps, args.backend, rng))
            for impl, _ in select(IMPLS, args.backend, args.precisions)]
    run_jobs(args.backend, jobs, args.out, args.warmup, args.reps, args.counters, args.rep, "{value:9.2f} GStencil/s")


if __name__ == "__main__":
    guarded(main)
