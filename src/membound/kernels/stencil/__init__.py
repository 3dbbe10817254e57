"""Stencils in the three roles of paper 000 Table 3 (Figure 8), in fp64, fp32 and fp16, on CUDA (CuPy) or
the CPU (numpy).

A stencil (shape star|box, dims 2|3, radius r) has a DISTINCT random weight per point, passed at run
time: out[p] = sum_o w[o] * in[p + o] over its offsets o (paper 002 Sec. 3.2.1, K points).

Roles (impl: unit, paper role):
- cc_naive (cuda_core, Brick): one time step per launch, `steps` launches: the cc_tb kernel at depth 1.
- cc_tb (cuda_core, EBISU): temporal blocking at depth t, the last of t steps written (steps/t
  launches). 2D: streaming along y with t pipelined stages of row rings (stencil_tb2.cu, EBISU's
  design), or a tile plus a halo of t*r loaded once, t steps on shrinking regions (stencil_cc.cu);
  3D: streaming along z with t pipelined stages of plane rings (stencil_tb3.cu; stencil_cc3.cu at
  depth 1); at depth 1 also the vector kernels (stencil_cc.cu and stencil_cc3.cu with VS,
  stencil_stream.cu). Which kernel and tile, per GPU, stencil and depth: launch.cc_tile. The weights
  are passed by value (struct Weights).
- tc (tensor_core, ConvStencil): kernel fusion as ConvStencil (paper 002 Sec. 2.2.3): the t-step
  stencil is fused into one enlarged stencil K^(t) (the t-fold self-convolution of the weights,
  radius t*r) applied once per t steps with the precision's MMA (fp64 m8n8k4; fp32 TF32 m16n8k8 and fp16
  m16n8k16, both accumulating in fp32); see tc_rows for the transformation.
  2D: stencil_tc.cu; 3D: stencil_tc3.cu, streaming along z (see tc_groups).
- tc_sparse (tensor_core, SPIDER/SparStencil; fp32 and fp16 only): the fused stencil's weights as the
  structured-sparse operand of mma.sp (TF32 1:2, f16 2:4; membound.model.sparse24), stencil_sp.cu
  (kernels/stencil/sp.py); the CPU backend emulates the same product with numpy.
- tc_twin (cuda_core, ConvStencil twin): the same sources built with TWIN=1 (issue 15): the same
  loads, stores and launches, each MMA done on its register fragments with shuffles and FMAs.

Depths (the fusion sweep, paper 002 Figure 11): one process runs cc_tb and tc at every depth of
--depths and the role depth --depth (Table 3's), cc_naive at depth 1 and tc_twin at the role depth; a
timed call runs `steps` rounded up to a multiple of its depth. A depth whose kernel needs more shared
memory per block than the device allows (with this GPU's tiles) is refused before any job (launch.py).

Boundary rule: periodic in every dimension, for every role and the reference. With periodic
boundaries t sequential steps equal one application of the fused stencil everywhere, so all three
roles compute exactly the function of `steps` sequential steps of scipy.ndimage.correlate(mode='wrap').

Precisions (model/precision.py): the field is stored in the precision's format, the weights are
rounded to it; CUDA cores sum in fp64 (fp64) or fp32 (fp32, fp16: fp16 stores fp16 and accumulates
in fp32), tensor cores take the precision's operand type (f64, tf32, f16) and accumulate in fp64 or
fp32. Each case is checked against the float64 reference of the same rounded input and weights at
the a-priori bound precision.stencil_tolerance (docs/precision.md: the bound per stencil); CUDA code
in runner.py.

The CPU backend runs the same algorithms in numpy, and the reference is scipy's (cpu.py).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import replace
from functools import partial

import numpy as np

from membound.kernels import arg_parser
from membound.kernels.harness import Case, Impl, run_cli, select, skip_reason
from membound.kernels.stencil import launch as stencil_plan
from membound.kernels.stencil import sp as stencil_sp
from membound.kernels.stencil.cpu import CPU, reference, sampled_reference
from membound.kernels.stencil.launch import SWEPT, TC3_TILE, Stencil, cc_launch, occupancy, plan, steps_at, tc_config  # noqa: F401
from membound.kernels.stencil.runner import cc_kernel as _cc_kernel  # noqa: F401
from membound.kernels.stencil.runner import compile_ahead, compiled, device_gpu, modules, tc_groups, weights_arg  # noqa: F401
from membound.kernels.stencil.runner import runner as _cuda_runner
from membound.kernels.stencil.runner import shared_limit as _shared_limit
from membound.kernels.stencil.runner import tc_kernel as _tc_kernel  # noqa: F401
from membound.model.geometry import fuse, fused_support, support, tc_rows, tc_sparsity  # noqa: F401
from membound.model.precision import decode, fmt, quantize, rounded, stencil_tolerance
from membound.model.sparse24 import SP_SHAPE
from membound.run import measure

IMPLS = (Impl("stencil", "cc_naive", "cuda_core", "Brick"),
         Impl("stencil", "cc_tb", "cuda_core", "EBISU"),
         Impl("stencil", "tc", "tensor_core", "ConvStencil"),
         Impl("stencil", "tc_twin", "cuda_core", "ConvStencil twin", needs_mma=True),
         Impl("stencil", "tc_sparse", "tensor_core", "SPIDER/SparStencil", precisions=tuple(SP_SHAPE),
              sparsity="2:4"))
TOL = 1e-10                   # the tests' fixed FP64 tolerance (the checks use the derived bound, `tolerance`)
WHOLE_CHECK_POINTS = 4_000_000  # larger timed domains: whole check on CHECK_DOMAIN + sampled check
CHECK_DOMAIN = {2: (333, 517), 3: (37, 45, 70)}
SAMPLES = 256


# ------------------------------------------------------------------------------------ weights


def random_weights(rng: np.random.Generator, shape: str, dims: int, radius: int, precision: str = "fp64") -> np.ndarray:
    """Distinct positive random weights on the stencil's support (zero elsewhere), summing to 1 so
    that values neither blow up nor decay over many steps, rounded to `precision`'s storage (the
    values every kernel and the reference use, as float64)."""
    mask = support(shape, dims, radius)
    w = np.where(mask, rng.uniform(0.5, 1.5, mask.shape), 0.0)
    return rounded(w / w.sum(), precision)


def tolerance(impl: str, st: Stencil, precision: str, steps: int, w: np.ndarray, ref, abs_ref, x_max: float) -> float:
    """The check's bound for `steps` steps of `impl` at st.depth (precision.stencil_tolerance): step by
    step on CUDA cores (cc_naive, cc_tb), T/t launches of the fused stencil K^(t) (tc on tensor cores,
    tc_twin on CUDA cores; tc_sparse is checked as tc)."""
    points = int(np.count_nonzero(w))
    fused = int(fused_support(w != 0, st.depth).sum()) if impl.startswith("tc") else 0
    unit = "tensor_core" if impl == "tc" else "cuda_core"
    return stencil_tolerance(precision, unit, points, steps, ref, abs_ref, fused=fused, depth=st.depth,
                             weight_sum=float(np.abs(w).sum()), x_max=x_max)


# ------------------------------------------------------------------------------------ measure


def _check_cuda(impl, st, rng, shape, steps, tile=None, precision="fp64"):
    """Whole-array check of `impl` on a fresh random field of `shape` (same kernel and launch config)."""
    import cupy as cp

    x = quantize(rng.random(shape), precision)
    w = random_weights(rng, st.shape, st.dims, st.radius, precision)
    out = _cuda_runner(impl, st, w, cp.asarray(x), steps, tile)()
    ref = reference(x, w, steps)
    tol = tolerance(impl, st, precision, steps, w, ref, ref, float(decode(x, precision).max()))   # w, x >= 0
    return measure.check(decode(cp.asnumpy(out), precision), ref, tol, f"{st.name} {impl} {precision} on {_fmt(shape)}")


def prepare(impl: Impl, st: Stencil, domain: tuple, steps: int, backend: str, rng: np.random.Generator,
            tile: dict | None = None, precision: str = "fp64") -> Case:
    """One role in `precision` on a fresh random field of `domain`: its timed call (`steps` steps) and
    its check, the whole output, or for domains above WHOLE_CHECK_POINTS SAMPLES sampled points (after
    a whole check of the same kernels on CHECK_DOMAIN), at the derived bound (`tolerance`; the
    inputs in [0, 1) and the weights positive, so that R = 1). tile: the CUDA-core tile to run
    instead of this GPU's (tools/sweep_depths.py --tiles)."""
    w = random_weights(rng, st.shape, st.dims, st.radius, precision)
    if impl.sparsity == "2:4":   # the dense tensor cores' bound: a padded zero adds exactly
        bound = partial(tolerance, "tc", st, precision, steps, w)
        return stencil_sp.prepare(st, w, domain, steps, backend, rng, precision, compiled, bound, WHOLE_CHECK_POINTS,
                                  CHECK_DOMAIN[st.dims], SAMPLES)
    depth = 1 if impl.name == "cc_naive" else st.depth
    points = math.prod(domain)
    whole = points <= WHOLE_CHECK_POINTS
    if backend == "cpu":
        x = quantize(rng.random(domain), precision)
        run = lambda: CPU[impl.name](x, w, steps, depth)  # noqa: E731
        to_host, xp = np.asarray, np
        note = "emulated on CPU; " if impl.name.startswith("tc") else ""
    else:
        import cupy as cp

        try:   # drawn on the device: no field of gigabytes drawn and uploaded from the host
            x = quantize(cp.random.RandomState(int(rng.integers(2**63))).random_sample(domain), precision)
            run = _cuda_runner(impl.name, st, w, x, steps, tile)
        except cp.cuda.memory.OutOfMemoryError as err:
            raise MemoryError(f"stencil domain {_fmt(domain)} does not fit ({err}); shrink stencil.domain_"
                              f"{st.dims}d in config/config.yaml") from None
        except ValueError as err:   # a field smaller than the kernel's chunk of rows (launch.Launch.grid)
            raise SystemExit(f"error: --domain {_fmt(domain)}: {err}") from None
        to_host, xp, note = cp.asnumpy, cp, ""
        if whole:
            x = x.get()
        else:
            _check_cuda(impl.name, st, rng, CHECK_DOMAIN[st.dims], steps, tile, precision)
    if whole:
        output, ref, what = to_host, reference(x, w, steps), f"{st.name} {impl.name} {precision} on {_fmt(domain)}"
        checked = "whole output checked"
    else:
        idx = rng.integers(0, domain, size=(SAMPLES, len(domain)))
        output = lambda out: to_host(out[tuple(xp.asarray(i) for i in idx.T)])  # noqa: E731
        ref, what = sampled_reference(x, w, steps, idx), f"{st.name} {impl.name} {precision} on {_fmt(domain)} (sampled)"
        checked = (f"whole output checked on {_fmt(CHECK_DOMAIN[st.dims])} with the same kernels, "
                   f"{SAMPLES} sampled points of the timed domain checked")
    tol = tolerance(impl.name, replace(st, depth=depth), precision, steps, w, ref, ref, 1.0)   # x in [0, 1), w > 0
    acc = f"; stored in {precision}, summed in fp32" if fmt(precision).bytes == 2 else ""
    return Case(run=run, output=output, reference=ref, tol=tol, what=what, precision=precision,
                row={"problem": st.name, "n": points, "domain": _fmt(domain), "depth": depth, "steps": steps,
                     "work_items": points * steps},
                work=points * steps, metric="GStencil/s",
                notes=[f"{note}{checked}; checked: rel_err <= {tol:.3g}{acc}; periodic boundaries; "
                       f"one timed call = {steps} steps in {steps // depth} launches"])


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


def check_config(kernels, gpu: str, arch: str, precisions=("fp64",)) -> list[str]:
    """launch.check_config of every implementation on `gpu` in each of `precisions` it has (the
    rules call it at start-up)."""
    return stencil_plan.check_config(kernels, gpu, arch, [impl.name for impl in IMPLS],
                                     [p for p in precisions if p in IMPLS[0].precisions])


def main(argv=None):
    parser = arg_parser("Stencils on CUDA cores (naive, temporal blocking) and tensor cores (kernel fusion).")
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
    limit = _shared_limit(args.backend)
    rng, runs, gpu = np.random.default_rng(), [], device_gpu() if limit else None
    for p in dict.fromkeys(p for _, p in chosen):
        impls = {impl.name: impl for impl, q in chosen if q == p}
        try:
            planned, refused = plan(st, args.depths, list(impls), limit, gpu, p)
        except ValueError as err:
            raise SystemExit(f"error: {err}") from None
        for why in refused:
            print(f"note: refused: {why}; no row", file=sys.stderr)
        runs += [(impls[name], at, p) for name, at in planned]
    if args.backend == "cuda":   # every module of the case at once, in threads (docs/performance.md)
        start = time.perf_counter()
        n = compile_ahead(s for impl, at, p in runs if not skip_reason(impl, "cuda") for s in modules(impl.name, at, p, gpu))
        print(f"note: {n} kernel modules compiled or loaded ahead in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    jobs = [(impl, partial(prepare, impl, at, domain, steps_at(args.steps, at.depth), args.backend, rng, None, p))
            for impl, at, p in runs]
    run_cli(args, jobs, "{value:9.2f} GStencil/s")

