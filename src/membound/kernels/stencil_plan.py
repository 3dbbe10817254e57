"""What the stencil kernels are launched with, and which depths they run: the CUDA-core and
tensor-core kernel of a stencil at a depth (its source, compile-time macros and tile), the dynamic
shared memory per block it asks for, and the plan of one benchmark process over the depths of the
fusion sweep (paper 002 Figure 11), with the depths a GPU cannot run refused before any job."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from membound.model.geometry import fused_support, support, tc_rows

SWEPT = ("cc_tb", "tc")       # run at every depth of the sweep; cc_naive at 1, tc_twin at the role depth
MAX_DEPTH = {2: 8, 3: 4}      # the depths the kernels are checked at, per dimension (paper 002 Figure 11: 1..8)
# Opt-in dynamic shared memory per block, KiB, per arch (CUDA C++ Programming Guide, "Technical
# Specifications per Compute Capability"); the benchmark reads the device's own.
SHARED_KIB = {"sm_80": 163, "sm_90": 227}


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


# CUDA-core kernel and tile per (dims, temporally blocked, shape, high order: radius > 1), from sweeps on
# the H100 (docs/kernels_stencil.md). kernel: the .cu file (stencil_cc: 2D, a tile plus halo per block;
# stencil_cc3 / stencil_tb3: 3D, streaming along z). BX x BY (x BZ) output tile per block, V points
# per thread along y, TPB tiles per block along y (stencil_cc; the next one prefetched with cp.async
# when > 1), MINB minimum blocks per SM (0: the compiler's choice), WSMEM weights in shared memory.
_2D = dict(kernel="stencil_cc", BX=64, BY=32, BZ=1, V=8, NTHREADS=256, TPB=1, MINB=0, WSMEM=0)
_3D_TB = dict(kernel="stencil_tb3", BX=32, BY=32, BZ=128, V=4, NTHREADS=512, MINB=0, WSMEM=0)
CC_TILE = {
    **{(2, blocked, shape, False): _2D for blocked in (False, True) for shape in ("star", "box")},
    **{(2, blocked, "star", True): dict(_2D, BX=128, V=16, TPB=4) for blocked in (False, True)},
    **{(2, blocked, "box", True): dict(_2D, V=16, NTHREADS=128, TPB=4, WSMEM=1) for blocked in (False, True)},
    **{(3, False, "star", high): dict(_3D_TB, BX=64, BY=16, BZ=32, NTHREADS=256) for high in (False, True)},
    **{(3, False, "box", high): dict(kernel="stencil_cc3", BX=32, BY=64, BZ=32, V=8, NTHREADS=256, MINB=0, WSMEM=0)
       for high in (False, True)},
    **{(3, True, "star", high): _3D_TB for high in (False, True)},
    **{(3, True, "box", high): dict(_3D_TB, BX=64, BY=16) for high in (False, True)},
}
TC_TILE = dict(NT=4, WX=2, WY=4)
TC3_TILE = dict(NT=2, WX=2, WY=4, BZ=64, MINB=2)   # stencil_tc3.cu: BZ output planes per block, MINB blocks per SM


def cc_tile(st: Stencil, depth: int) -> dict:
    """The CUDA-core kernel and tile (CC_TILE) of stencil `st` at `depth` (1: the unblocked role)."""
    return CC_TILE[st.dims, depth > 1, st.shape, st.radius > 1]


def cc_config(st: Stencil, depth: int) -> tuple[str, dict, int, dict]:
    """(kernel name, macros, shared bytes, tile) of the CUDA-core kernel at `depth` (1: the unblocked role)."""
    tile, r = cc_tile(st, depth), st.radius
    name = tile["kernel"]
    macros = dict(RAD=r, STAR=int(st.shape == "star"), DEPTH=depth,
                  **{k: v for k, v in tile.items() if k != "kernel"})
    halo = depth * r
    sx, sy = tile["BX"] + 2 * halo, tile["BY"] + 2 * halo
    if name == "stencil_cc3":    # a ring of 2r+1 planes
        words = (2 * r + 1) * sy * sx
    elif name == "stencil_tb3":  # `depth` stages of 2r+2 planes, V rows of slack
        words = depth * (2 * r + 2) * sy * sx + tile["V"] * sx
    else:  # one input tile (two when a block walks several: the next one in flight) and, temporally
        #    blocked, the ping-pong partner with V rows of slack
        words = (1 + (tile["TPB"] > 1) + (depth > 1)) * (sy + (tile["V"] if depth > 1 else 0)) * sx
    return name, macros, 8 * words, tile


def tc_config(st: Stencil, nfrag: int, twin: bool) -> tuple[str, dict, int, dict]:
    """(kernel name, macros but stencil_tc3's TABLE, shared bytes, tile) of the tensor-core kernel at
    st.depth with `nfrag` B fragments: 2D stencil_tc.cu, 3D stencil_tc3.cu; twin: built with TWIN=1."""
    rf = st.radius * st.depth
    tile = TC3_TILE if st.dims == 3 else TC_TILE
    pitch = 8 * tile["NT"] * tile["WX"] + 2 * rf + 3
    pitch += (4 - pitch) % 16
    macros = dict(RF=rf, PITCH=pitch, TWIN=int(twin), **tile, **({} if st.dims == 3 else {"DIMS": 2}))
    planes = 2 if st.dims == 3 else 1          # stencil_tc3: two plane buffers
    words = planes * (8 * tile["WY"] + 2 * rf) * pitch + 32 * nfrag
    return ("stencil_tc3" if st.dims == 3 else "stencil_tc"), macros, 8 * words, tile


def shared_bytes(impl: str, st: Stencil) -> int:
    """Dynamic shared memory per block of `impl` for stencil `st` at its depth (cc_naive: depth 1)."""
    if impl.startswith("tc"):
        mask = fused_support(support(st.shape, st.dims, st.radius), st.depth)
        return tc_config(st, len(tc_rows(mask.astype(float), mask)[1]), impl == "tc_twin")[2]
    return cc_config(st, 1 if impl == "cc_naive" else st.depth)[2]


def refusal(impl: str, st: Stencil, limit: int) -> str | None:
    """Why `impl` cannot run `st` at its depth where a block may have `limit` bytes of shared memory
    (None: it can)."""
    need = shared_bytes(impl, st)
    if need <= limit:
        return None
    return (f"{st.name} {impl} at depth {st.depth} needs {need / 1024:.1f} KiB of shared memory per block, "
            f"the device allows {limit / 1024:.0f} KiB")


def steps_at(steps: int, depth: int) -> int:
    """The time steps one timed call runs at `depth`: `steps` rounded up to a multiple of the depth."""
    return depth * math.ceil(steps / depth)


def plan(st: Stencil, depths, impls, limit: int | None = None) -> tuple[list[tuple[str, Stencil]], list[str]]:
    """The jobs of one stencil, (impl name, stencil at the depth it runs), and the refusals: SWEPT impls
    at each of `depths` and st.depth (the role depth), the others of `impls` at st.depth (cc_naive
    runs depth 1 whatever it is). A depth whose shared memory exceeds `limit` bytes is refused (a
    phrase in the second list); ValueError where that is the role depth, or a depth is beyond MAX_DEPTH."""
    jobs, refused = [], []
    for impl in impls:
        for t in sorted({*depths, st.depth}) if impl in SWEPT else [st.depth]:
            if not 1 <= t <= MAX_DEPTH[st.dims]:
                raise ValueError(f"depth {t} is outside the {st.dims}D kernels' 1..{MAX_DEPTH[st.dims]}: drop it")
            at = replace(st, depth=t)
            why = refusal(impl, at, limit) if limit else None
            if why and t == st.depth:
                raise ValueError(f"{why}; the role depth must run: choose a smaller depth")
            if why:
                refused.append(why)
            else:
                jobs.append((impl, at))
    return jobs, refused


def check_config(kernels: Mapping, arch: str, impls) -> list[str]:
    """Config stencil.kernels against what the kernels `impls` run on a GPU of `arch` (SHARED_KIB; no
    shared-memory check for another arch): ValueError naming the key where `plan` raises one, else the
    refused depths, one phrase each (their rows will not exist)."""
    limit = SHARED_KIB[arch] * 1024 if arch in SHARED_KIB else None
    refused = []
    for name, spec in kernels.items():
        st = Stencil(name, spec["shape"], spec["dims"], spec["radius"], spec["depth"])
        try:
            refused += plan(st, spec.get("depths", []), impls, limit)[1]
        except ValueError as err:
            raise ValueError(f"stencil.kernels.{name} on {arch}: {err}") from None
    return refused
