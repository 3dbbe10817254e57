"""FP64 stencils in the three roles of paper 000 Table 3 (Figure 8), on CUDA (CuPy) or the CPU (numpy).

A stencil (shape star|box, dims 2|3, radius r) has a DISTINCT random weight per point, passed at run
time: out[p] = sum_o w[o] * in[p + o] over its offsets o (paper 002 Sec. 3.2.1, K points).

Roles (impl: unit, paper role):
- cc_naive (cuda_core, Brick): one time step per launch, `steps` launches: the cc_tb kernel at depth 1.
- cc_tb (cuda_core, EBISU): temporal blocking at depth t, the last of t steps written (steps/t
  launches). 2D: streaming along y with t pipelined stages of row rings (stencil_tb2.cu, EBISU's
  design), or a tile plus a halo of t*r loaded once, t steps on shrinking regions (stencil_cc.cu);
  3D: streaming along z with t pipelined stages of plane rings (stencil_tb3.cu; stencil_cc3.cu at
  depth 1). Which kernel and tile, per GPU, stencil and depth: stencil_plan.cc_tile. The weights
  are passed by value (struct Weights).
- tc (tensor_core, ConvStencil): kernel fusion as ConvStencil (paper 002 Sec. 2.2.3): the t-step
  stencil is fused into one enlarged stencil K^(t) (the t-fold self-convolution of the weights,
  radius t*r) applied once per t steps with FP64 MMA (m8n8k4); see tc_rows for the transformation.
  2D: stencil_tc.cu; 3D: stencil_tc3.cu, streaming along z (see tc_groups).
- tc_sparse (tensor_core, SPIDER/SparStencil; fp32 and fp16 only): the fused stencil's weights as the
  structured-sparse operand of mma.sp (TF32 1:2, f16 2:4; membound.model.sparse24), stencil_sp.cu
  (kernels/stencil_sp.py); the CPU backend emulates the same product with numpy.
- tc_twin (cuda_core, ConvStencil twin): the same sources built with TWIN=1 (issue 15): the same
  loads, stores and launches, each MMA done on its register fragments with shuffles and FMAs.

Depths (the fusion sweep, paper 002 Figure 11): one process runs cc_tb and tc at every depth of
--depths and the role depth --depth (Table 3's), cc_naive at depth 1 and tc_twin at the role depth; a
timed call runs `steps` rounded up to a multiple of its depth. A depth whose kernel needs more shared
memory per block than the device allows (with this GPU's tiles) is refused before any job (stencil_plan.py).

Boundary rule: periodic in every dimension, for every role and the reference. With periodic
boundaries t sequential steps equal one application of the fused stencil everywhere, so all three
roles compute exactly the function of `steps` sequential steps of scipy.ndimage.correlate(mode='wrap').

The CPU backend runs the same algorithms in numpy, and the reference is scipy's (stencil_cpu.py).
"""

from __future__ import annotations

import math
import sys
from functools import cache, partial

import numpy as np

from membound.kernels import arg_parser, load_module, stencil_plan, stencil_sp
from membound.kernels.harness import Case, Impl, run_jobs, select
from membound.kernels.stencil_cpu import CPU, reference, sampled_reference
from membound.kernels.stencil_plan import (SWEPT, TC3_TILE, Stencil, cc_launch, occupancy, plan,  # noqa: F401
                                           steps_at, tc_config)
from membound.model.geometry import fuse, fused_support, support, tc_rows, tc_sparsity  # noqa: F401
from membound.run import detect, measure
from membound.run.measure import guarded

IMPLS = (Impl("stencil", "cc_naive", "cuda_core", "Brick"), Impl("stencil", "cc_tb", "cuda_core", "EBISU"),
         Impl("stencil", "tc", "tensor_core", "ConvStencil"),
         Impl("stencil", "tc_twin", "cuda_core", "ConvStencil twin", needs_mma=True),
         Impl("stencil", "tc_sparse", "tensor_core", "SPIDER/SparStencil", precisions=("fp32", "fp16"),
              sparsity="2:4"))
TOL = 1e-10                   # FP64; the fused stencil sums in another order than t sequential steps
WHOLE_CHECK_POINTS = 4_000_000  # larger timed domains: whole check on CHECK_DOMAIN + sampled check
CHECK_DOMAIN = {2: (333, 517), 3: (37, 45, 70)}
SAMPLES = 256


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


# --------------------------------------------------------------------------------------- CUDA

@cache
def device_gpu() -> str:
    """The profile name of this process's GPU (config/gpus/<name>.yaml, by its device_match): whose
    tiles the CUDA-core kernels run (stencil_tiles.TUNED)."""
    import cupy as cp

    return detect.profile_for([cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()])


def _cc_kernel(st: Stencil, depth: int, gpu: str | None, tile: dict | None = None):
    """(kernel, shared bytes), launch of the CUDA-core kernel at `depth` (1: the unblocked role) on
    `gpu`, with its tile (stencil_plan.cc_tile) or `tile` (a sweep's variant)."""
    launch = cc_launch(st, depth, gpu, tile)
    return _compiled(launch.source, launch.name, launch.macros, launch.smem), launch


def weights_arg(w: np.ndarray) -> np.ndarray:
    """The weights as the CUDA-core kernels' by-value argument (struct Weights, stencil_strip.cuh)."""
    return np.ascontiguousarray(w.ravel(), dtype=np.float64).view(np.dtype([("w", np.float64, (w.size,))]))


def _tc_kernel(st: Stencil, frags: np.ndarray, rows: np.ndarray, twin: bool):
    """((kernel, shared bytes), tile, threads, B fragments, rows or None) of the tensor-core kernel:
    2D stencil_tc.cu, 3D stencil_tc3.cu (its TABLE from tc_groups); twin: built with TWIN=1."""
    name, macros, smem, tile = tc_config(st, len(frags), twin)
    bx, by, threads = 8 * tile["NT"] * tile["WX"], 8 * tile["WY"], 32 * tile["WX"] * tile["WY"]
    if st.dims == 3:
        table, frags = tc_groups(rows, frags, st.radius * st.depth)
        return _compiled(f"{name}.cu", name, dict(macros, TABLE=table), smem), (bx, by, tile["BZ"]), threads, frags, None
    return _compiled(f"{name}.cu", name, macros, smem), (bx, by, 1), threads, frags, rows


def _compiled(source: str, name: str, macros: dict, smem: int):
    kernel = load_module(source, tuple(f"-D{k}={v}" for k, v in sorted(macros.items()))).get_function(name)
    kernel.max_dynamic_shared_size_bytes = smem
    return kernel, smem


def _cuda_runner(impl: str, st: Stencil, w: np.ndarray, x0, steps: int, tile: dict | None = None):
    """A function running `steps` steps of `impl` from device array x0; returns the output array
    (tile: the CUDA-core tile to run instead of this GPU's)."""
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
        (kernel, smem), launch = _cc_kernel(st, depth, device_gpu(), tile)
        blocks = occupancy(launch.threads, kernel.num_regs, smem)
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


def _check_cuda(impl, st, rng, shape, steps, tile=None):
    """Whole-array check of `impl` on a fresh random field of `shape` (same kernel and launch config)."""
    import cupy as cp

    x = rng.random(shape)
    w = random_weights(rng, st.shape, st.dims, st.radius)
    out = _cuda_runner(impl, st, w, cp.asarray(x), steps, tile)()
    return measure.check(cp.asnumpy(out), reference(x, w, steps), TOL, f"{st.name} {impl} on {_fmt(shape)}")


def prepare(impl: Impl, st: Stencil, domain: tuple, steps: int, backend: str, rng: np.random.Generator,
            tile: dict | None = None, precision: str = "fp64") -> Case:
    """One role on a fresh random field of `domain`: its timed call (`steps` steps) and its check, the
    whole output, or for domains above WHOLE_CHECK_POINTS SAMPLES sampled points (after a whole
    check of the same kernels on CHECK_DOMAIN). tile: the CUDA-core tile to run instead of this GPU's
    (tools/sweep_depths.py --tiles)."""
    w = random_weights(rng, st.shape, st.dims, st.radius)
    if impl.sparsity == "2:4":
        return stencil_sp.prepare(st, w, domain, steps, backend, rng, precision, _compiled, WHOLE_CHECK_POINTS,
                                  CHECK_DOMAIN[st.dims], SAMPLES)
    depth = 1 if impl.name == "cc_naive" else st.depth
    points = math.prod(domain)
    whole = points <= WHOLE_CHECK_POINTS
    if backend == "cpu":
        x = rng.random(domain)
        run = lambda: CPU[impl.name](x, w, steps, depth)  # noqa: E731
        to_host, xp = np.asarray, np
        note = "emulated on CPU; " if impl.name.startswith("tc") else ""
    else:
        import cupy as cp

        try:   # drawn on the device: no field of gigabytes drawn and uploaded from the host
            x = cp.random.RandomState(int(rng.integers(2**63))).random_sample(domain)
            run = _cuda_runner(impl.name, st, w, x, steps, tile)
        except cp.cuda.memory.OutOfMemoryError as err:
            raise MemoryError(f"stencil domain {_fmt(domain)} does not fit ({err}); shrink stencil.domain_"
                              f"{st.dims}d in config/config.yaml") from None
        except ValueError as err:   # a field smaller than the kernel's chunk of rows (stencil_plan.Launch.grid)
            raise SystemExit(f"error: --domain {_fmt(domain)}: {err}") from None
        to_host, xp, note = cp.asnumpy, cp, ""
        if whole:
            x = x.get()
        else:
            _check_cuda(impl.name, st, rng, CHECK_DOMAIN[st.dims], steps, tile)
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


def _shared_limit(backend: str) -> int | None:
    """The device's opt-in shared memory per block in bytes (None on the CPU)."""
    if backend != "cuda":
        return None
    import cupy as cp

    attr = getattr(cp.cuda.runtime, "cudaDevAttrMaxSharedMemoryPerBlockOptin", 97)
    return cp.cuda.runtime.deviceGetAttribute(attr, cp.cuda.Device().id)


def check_config(kernels, gpu: str, arch: str) -> list[str]:
    """stencil_plan.check_config of every implementation on `gpu` (the rules call it at start-up)."""
    return stencil_plan.check_config(kernels, gpu, arch, [impl.name for impl in IMPLS])


def main(argv=None):
    parser = arg_parser("FP64 stencils on CUDA cores (naive, temporal blocking) and tensor cores (kernel fusion).")
    parser.add_argument("--stencil", required=True, help="name, e.g. 2d5pt")
    parser.add_argument("--shape", choices=["star", "box"], required=True)
    parser.add_argument("--dims", type=int, choices=[2, 3], required=True)
    parser.add_argument("--radius", type=int, required=True)
    parser.add_argument("--depth", type=int, required=True, help="the role depth (Table 3, the twin)")
    parser.add_argument("--depths", type=int, nargs="+", default=[], help=f"further depths of {', '.join(SWEPT)}")
    parser.add_argument("--domain", required=True, help="e.g. 10240x10240 or 512x512x512")
    parser.add_argument("--steps", type=int, required=True, help="per timed call, rounded up to a multiple of each depth")
    args = parser.parse_args(argv)
    st = Stencil(args.stencil, args.shape, args.dims, args.radius, args.depth)
    domain = parse_domain(args.domain, args.dims)
    if args.steps < 1:
        raise SystemExit(f"error: --steps {args.steps} must be positive")
    chosen = select(IMPLS, args.backend, args.precisions)
    impls = {impl.name: impl for impl, _ in chosen}
    try:
        limit = _shared_limit(args.backend)
        planned, refused = plan(st, args.depths, list(impls), limit, device_gpu() if limit else None)
    except ValueError as err:
        raise SystemExit(f"error: {err}") from None
    for why in refused:
        print(f"note: refused: {why}; no row", file=sys.stderr)
    rng = np.random.default_rng()
    jobs = [(impls[name], partial(prepare, impls[name], at, domain, steps_at(args.steps, at.depth), args.backend, rng,
                                  precision=p)) for name, at in planned for impl, p in chosen if impl.name == name]
    run_jobs(args.backend, jobs, args.out, args.warmup, args.reps, args.counters, args.rep, "{value:9.2f} GStencil/s")


if __name__ == "__main__":
    guarded(main)
