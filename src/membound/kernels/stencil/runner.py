"""The stencils' CUDA side (membound.kernels.stencil): the compiled kernels, their arguments and a
runner of `steps` steps per role, in each storage precision. One source per algorithm: the kernels
are compiled per precision with -DELEM=<element bytes> (bf16: and -DBF16=1; stencil_real.cuh: storage
type, accumulator, conversions; stencil_mma.cuh: the precision's MMA and its twin), under the same kernel names.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import cache

import numpy as np

from membound.kernels import load_module
from membound.kernels.stencil import sp_layout as stencil_sp_layout
from membound.kernels.stencil.cpu import b_operands
from membound.kernels.stencil.launch import Stencil, cc_launch, format_macros, occupancy, tc_config
from membound.model import sparse24
from membound.model.geometry import PACK, mma_shape, support
from membound.model.precision import fmt, nan, of_dtype, store
from membound.run import detect


@cache
def device_gpu() -> str:
    """The profile name of this process's GPU (config/gpus/<name>.yaml, by its device_match): whose
    tiles the CUDA-core kernels run (tiles.TUNED)."""
    import cupy as cp

    return detect.profile_for([cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()])


def shared_limit(backend: str) -> int | None:
    """The device's opt-in shared memory per block in bytes (None on the CPU)."""
    if backend != "cuda":
        return None
    import cupy as cp

    attr = getattr(cp.cuda.runtime, "cudaDevAttrMaxSharedMemoryPerBlockOptin", 97)
    return cp.cuda.runtime.deviceGetAttribute(attr, cp.cuda.Device().id)


def acc_dtype(precision: str) -> np.dtype:
    """The CUDA-core kernels' arithmetic type (stencil_real.cuh acc_t): the record's, float64 for fp64,
    else float32."""
    return np.dtype(fmt(precision).acc)


def weights_arg(w: np.ndarray, precision: str = "fp64") -> np.ndarray:
    """The weights as the CUDA-core kernels' by-value argument (struct Weights, stencil_strip.cuh), in
    the accumulator type (the weights are storage values: exact in it)."""
    dt = acc_dtype(precision)
    return np.ascontiguousarray(w.ravel(), dtype=dt).view(np.dtype([("w", dt, (w.size,))]))


def lane_major(frags: np.ndarray, precision: str) -> np.ndarray:
    """B fragments (nfrag, k, 8) as each lane holds them, 8 bytes a lane (stencil_mma.cuh): lane 4g + t
    holds B[k][g] for k = 4 PACK r + PACK t + h (r the register, h the half of an f16x2), in order."""
    pack = PACK.get(precision, 1)
    k = frags.shape[1]
    arr = store(frags, precision).reshape(len(frags), k // (4 * pack), 4, pack, 8)   # exact: storage values
    return np.ascontiguousarray(arr.transpose(0, 4, 2, 1, 3).reshape(len(frags), -1))


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


def compiled(source: str, name: str, macros: dict, smem: int):
    kernel = load_module(source, options(macros)).get_function(name)
    kernel.max_dynamic_shared_size_bytes = smem
    return kernel, smem


def options(macros: dict) -> tuple[str, ...]:
    """The NVRTC options of a module built with `macros` (its -D flags, in one order)."""
    return tuple(f"-D{k}={v}" for k, v in sorted(macros.items()))


def cc_kernel(st: Stencil, depth: int, gpu: str | None, tile: dict | None = None, precision: str = "fp64"):
    """(kernel, shared bytes), launch of the CUDA-core kernel at `depth` (1: the unblocked role) on
    `gpu` in `precision`, with its tile (launch.cc_tile) or `tile` (a sweep's variant)."""
    launch = cc_launch(st, depth, gpu, tile, fmt(precision).bytes)
    launch = replace(launch, macros={**launch.macros, **format_macros(precision)})
    return compiled(launch.source, launch.name, launch.macros, launch.smem), launch


def tc_module(st: Stencil, frags: np.ndarray, rows: np.ndarray, twin: bool, precision: str = "fp64"):
    """(source, name, macros, shared bytes), tile, threads, B fragments, rows or None of the tensor-core
    kernel: 2D stencil_tc.cu, 3D stencil_tc3.cu (its TABLE from tc_groups); twin: built with TWIN=1."""
    name, macros, smem, tile = tc_config(st, len(frags), twin, precision)
    bx, by, threads = 8 * tile["NT"] * tile["WX"], mma_shape(precision)[0] * tile["WY"], 32 * tile["WX"] * tile["WY"]
    if st.dims == 3:
        table, frags = tc_groups(rows, frags, st.radius * st.depth)
        return (f"{name}.cu", name, dict(macros, TABLE=table), smem), (bx, by, tile["BZ"]), threads, frags, None
    return (f"{name}.cu", name, macros, smem), (bx, by, 1), threads, frags, rows


def tc_kernel(st: Stencil, frags: np.ndarray, rows: np.ndarray, twin: bool, precision: str = "fp64"):
    """tc_module with its module compiled: ((kernel, shared bytes), tile, threads, B fragments, rows or None)."""
    spec, *rest = tc_module(st, frags, rows, twin, precision)
    return compiled(*spec), *rest


def modules(impl: str, st: Stencil, precision: str, gpu: str | None) -> list[tuple[str, dict]]:
    """(source, macros) of the module `runner(impl, st, ...)` compiles in `precision` on `gpu` (this
    GPU's tiles): they follow the stencil's structure, so any weights on its support give them."""
    if impl == "tc_sparse":
        form = sparse24.transform(st.shape, st.dims, st.radius, st.depth, precision, None, stencil_sp_layout.LAYOUT)
        return [(stencil_sp_layout.source(st.dims)[0], stencil_sp_layout.module(form, st.dims)[0])]
    if impl in ("tc", "tc_twin"):
        mask = support(st.shape, st.dims, st.radius)
        rows, frags = b_operands(mask / mask.sum(), st.depth, precision)   # fused sums of 1: in every format's range
        (source, _, macros, _), *_ = tc_module(st, frags, rows, impl == "tc_twin", precision)
        return [(source, macros)]
    if impl not in ("cc_naive", "cc_tb"):
        raise ValueError(f"runner.modules does not know impl '{impl}': name the modules its runner compiles")
    launch = cc_launch(st, st.depth if impl == "cc_tb" else 1, gpu, None, fmt(precision).bytes)
    return [(launch.source, {**launch.macros, **format_macros(precision)})]


def compile_ahead(specs, workers: int | None = None) -> int:
    """Compile the modules `specs` ((source, macros) pairs) in a pool of threads, before the first case
    runs: NVRTC releases the GIL, so a job's cold kernel cache costs its slowest module per core
    rather than the sum (docs/performance.md). Returns how many distinct modules it compiled."""
    unique = list(dict.fromkeys((source, options(macros)) for source, macros in specs))
    with ThreadPoolExecutor(workers or os.cpu_count()) as pool:
        list(pool.map(lambda spec: load_module(*spec).compile(), unique))
    return len(unique)


def runner(impl: str, st: Stencil, w: np.ndarray, x0, steps: int, tile: dict | None = None):
    """A function running `steps` steps of `impl` from device array x0 (its dtype: the precision's
    storage); returns the output array (tile: the CUDA-core tile to run instead of this GPU's)."""
    import cupy as cp

    precision = of_dtype(x0.dtype)
    shape3 = (1,) * (3 - x0.ndim) + x0.shape
    nz, ny, nx = shape3
    bufs = [cp.full_like(x0, nan(precision)), cp.full_like(x0, nan(precision))]
    if impl in ("tc", "tc_twin"):
        rows, frags = b_operands(w, st.depth, precision)
        (kernel, smem), tc_tile, threads, frags, rows = tc_kernel(st, frags, rows, impl == "tc_twin", precision)
        extra = (cp.asarray(lane_major(frags, precision)), np.int32(len(frags)))
        if rows is not None:
            extra = (cp.asarray(rows), np.int32(len(rows)), *extra)
        launches = steps // st.depth
        grid, after = tuple(math.ceil(n / b) for n, b in zip((nx, ny, nz), tc_tile)), ()
    else:
        depth = st.depth if impl == "cc_tb" else 1
        (kernel, smem), launch = cc_kernel(st, depth, device_gpu(), tile, precision)
        blocks = occupancy(launch.threads, kernel.num_regs, smem)
        grid, after = launch.grid(shape3, cp.cuda.Device().attributes["MultiProcessorCount"], blocks)
        extra, after = (weights_arg(w, precision),), tuple(np.int32(a) for a in after)
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
