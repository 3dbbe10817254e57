"""What the stencil kernels are launched with, and which depths they run: the one place that picks the
CUDA-core kernel and tile per (GPU, stencil, depth) (tiles.TUNED: tuned/<gpu>.yaml, else `default_tile`), the
tensor-core kernel's macros, the dynamic shared memory per block each asks for, and the plan of one
benchmark process over the depths of the fusion sweep (paper 002 Figure 11), with the depths a GPU
cannot run refused before any job. Shared memory follows the precision's element size (the tiles are
the same in every precision; ELEM, the kernels' macro). Pure Python: the tests check every launch
without a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from membound.kernels.stencil.tiles import CC3, TB2, TB3, TUNED
from membound.model.geometry import mma_shape, tc_fragments
from membound.model.precision import PRECISIONS, fmt

SWEPT = ("cc_tb", "tc", "tc_sparse")  # run at every depth of the sweep; cc_naive at 1, tc_twin at the role depth
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


# ------------------------------------------------------------------------------ CUDA-core tiles


def default_tile(dims: int, shape: str, radius: int, depth: int) -> dict:
    """The tile of a GPU without its own TUNED entry: 2D stencil_tb2 (rows per chunk CH >= 2*radius, a
    thread's own column in registers while those queues stay within ~48 registers; 128 columns past
    depth 4, whose rings fill shared memory); 3D as the H100 sweeps of issue 13 chose."""
    if dims == 2:
        ch = max(4, 2 * radius) if depth > 1 else 8
        return dict(TB2, CH=ch, NT=256 if depth <= 4 else 128, OWNREG=int(2 * ch * (depth - 1) <= 24))
    if depth == 1:
        return dict(CC3) if shape == "box" else dict(TB3, BX=64, BY=16, BZ=32, NTHREADS=256)
    return dict(TB3, BX=64, BY=16) if shape == "box" else dict(TB3)


def cc_tile(st: Stencil, depth: int, gpu: str | None = None, elem: int = 8) -> dict:
    """The CUDA-core kernel and tile of `st` at `depth` (1: the unblocked role) on `gpu` (a profile
    name) with elements of `elem` bytes: its TUNED entry for that element size, else its TUNED entry,
    else default_tile."""
    if not 1 <= depth <= MAX_DEPTH[st.dims]:
        raise ValueError(f"depth {depth}: CUDA-core {st.dims}D stencils run depths 1..{MAX_DEPTH[st.dims]}")
    key, tuned = (st.dims, st.shape, st.radius, depth), TUNED.get(gpu or "", {})
    return dict(tuned.get((*key, elem)) or tuned.get(key) or default_tile(*key))


def occupancy(threads: int, regs: int, smem: int) -> int:
    """Resident blocks per SM of a kernel (sm_80 / sm_90: 2048 threads, 64K registers allocated per
    warp in units of 256, 228 KB of shared memory with 1 KB reserved per block); at least 1."""
    warps = -(-threads // 32)
    regs_per_block = warps * -(-regs * 32 // 256) * 256
    return max(1, min(2048 // (32 * warps), 65536 // max(1, regs_per_block), 228 * 1024 // (smem + 1024)))


@dataclass(frozen=True)
class Launch:
    source: str        # the .cu file under kernels/
    name: str          # its kernel
    macros: dict       # -D macros
    smem: int          # dynamic shared memory bytes
    threads: int
    waves: int = 0     # stencil_tb2, stencil_stream: waves of blocks over the field (sets the segment, `grid`)

    def grid(self, shape3: tuple, sms: int, blocks_per_sm: int) -> tuple[tuple[int, int, int], tuple]:
        """The grid over a (nz, ny, nx) field and the kernel's arguments after (.., nz, ny, nx):
        stencil_tb2 and stencil_stream take `seg`, the output rows (planes) per block, so that the
        blocks make about `waves` waves of sms * blocks_per_sm."""
        nz, ny, nx = shape3
        m = self.macros
        if self.name == "stencil_stream":   # columns x (3D) row blocks x segments along the stream axis
            columns = math.ceil(nx / (m["NTX"] * m["UV"] * 16 // m["ELEM"]))
            rows, ns = (math.ceil(ny / m["BY"]), nz) if m["DIMS"] == 3 else (1, ny)
            if m.get("BAL"):   # the (column, row, slice) order in runs of seg, one a block
                seg = math.ceil(columns * rows * ns / (max(1, self.waves) * sms * blocks_per_sm))
                return (math.ceil(columns * rows * ns / seg), 1, 1), (seg,)
            seg = math.ceil(ns / max(1, self.waves * sms * blocks_per_sm // (columns * rows)))
            segs = math.ceil(ns / seg)
            return ((columns, rows, segs) if m["DIMS"] == 3 else (columns, segs, 1)), (seg,)
        if self.name != "stencil_tb2":
            return (math.ceil(nx / m["BX"]), math.ceil(ny / (m["BY"] * m.get("TPB", 1))), math.ceil(nz / m["BZ"])), ()
        if ny < m["CH"]:
            raise ValueError(f"a field of {ny} rows is smaller than stencil_tb2's chunk of CH={m['CH']} rows")
        columns = math.ceil(nx / (m["NT"] - 2 * m["DEPTH"] * m["RAD"]))
        seg = math.ceil(ny / max(1, self.waves * sms * blocks_per_sm // columns))
        return (columns, math.ceil(ny / seg), 1), (seg,)


def cc_launch(st: Stencil, depth: int, gpu: str | None = None, tile: dict | None = None, elem: int = 8) -> Launch:
    """The launch of the CUDA-core kernel of `st` at `depth` on `gpu` with elements of `elem` bytes
    (8, 4, 2: fp64, fp32, fp16): cc_tile's tile, or `tile` (a sweep's variant). ValueError where the
    tile is no wider than its halo (stencil_tb2)."""
    tile, r, halo = tile or cc_tile(st, depth, gpu, elem), st.radius, depth * st.radius
    name = tile["kernel"]
    macros = dict(RAD=r, STAR=int(st.shape == "star"), DEPTH=depth, ELEM=elem,
                  **{k: v for k, v in tile.items() if k not in ("kernel", "WAVES")})
    if name == "stencil_stream":   # a ring of chunks of CH slices of BY (+ 2r in 3D) rows of whole vectors
        if depth != 1 or tile["CH"] % (2 * r + 1):
            raise ValueError(f"stencil {st.name}: stencil_stream runs depth 1 with CH a multiple of {2 * r + 1} "
                             f"(depth {depth}, CH={tile['CH']}); choose another tile in kernels/stencil/tuned/<gpu>.yaml")
        vw = 16 // elem
        sx = (tile["NTX"] * tile["UV"] + 2 * -(-r // vw)) * vw
        rows = tile["BY"] + 2 * r if st.dims == 3 else 1
        macros["DIMS"], macros["BY"] = st.dims, tile["BY"] if st.dims == 3 else 1
        vy = tile.get("VY", 1)
        if macros["BY"] % vy:
            raise ValueError(f"stencil {st.name}: stencil_stream's VY={vy} rows a thread must divide BY={macros['BY']} "
                             "(2D: VY=1); choose another tile in kernels/stencil/tuned/<gpu>.yaml")
        slots = 2 if tile.get("CPY") == 2 else tile["PF"] + 1
        words, threads = slots * tile["CH"] * rows * sx, tile["NTX"] * macros["BY"] // vy
    elif name == "stencil_tb2":   # an input ring of PF + 1 + HC chunks, then depth - 1 stage rings
        ch, hc = tile["CH"], -(-2 * r // tile["CH"])
        p_in, p_st = tile["PF"] + 1 + hc, 2 + hc
        p_st = p_st if p_in % p_st == 0 else p_in
        words, threads = (p_in + (depth - 1) * p_st) * ch * (tile["NT"] + 2 * r), tile["NT"]
        if tile["NT"] <= 2 * halo:
            raise ValueError(f"stencil {st.name}: tile NT={tile['NT']} is no wider than its halo at depth {depth}; "
                             "choose another tile in kernels/stencil/tuned/<gpu>.yaml")
    else:
        sx, sy = tile["BX"] + 2 * halo, tile["BY"] + 2 * halo
        threads = tile["NTHREADS"]
        if tile.get("VS") and not tile.get("VEC"):
            raise ValueError(f"stencil {st.name}: {name} with VS sums vectors of its 16-byte copies: set VEC=1")
        if tile.get("VEC"):   # stencil_cc: XO pad columns, rows of whole 16-byte vectors
            vw = 16 // elem
            if tile["BX"] % vw:
                raise ValueError(f"stencil {st.name}: VEC needs BX={tile['BX']} to be a multiple of {vw}")
            sx = -(-((vw - halo % vw) % vw + sx) // vw) * vw
        if name == "stencil_cc3":    # a ring of 2r+1 planes, and PF more in flight
            if tile.get("PF") and not tile.get("VEC"):
                raise ValueError(f"stencil {st.name}: stencil_cc3 with PF={tile['PF']} copies 16-byte vectors: "
                                 "set VEC=1")
            words = (2 * r + 1 + tile.get("PF", 0)) * sy * sx
        elif name == "stencil_tb3":  # an input ring of 2r+1+PF planes, depth - 1 stages of 2r+2, V rows of slack
            words = (2 * r + 1 + tile.get("PF", 1) + (depth - 1) * (2 * r + 2)) * sy * sx + tile["V"] * sx
        else:  # stencil_cc: one input tile (two when a block walks several) and, blocked, the ping-pong partner
            words = (1 + (tile["TPB"] > 1) + (depth > 1)) * (sy + (tile["V"] if depth > 1 else 0)) * sx
    return Launch(f"{name}.cu", name, macros, elem * words, threads, tile.get("WAVES", 0))


# ---------------------------------------------------------------------------- tensor-core kernel

TC_TILE = dict(NT=4, WX=2, WY=4)
TC3_TILE = dict(NT=2, WX=2, WY=4, BZ=64, MINB=2)   # stencil_tc3.cu: BZ output planes per block, MINB blocks per SM


# The shared row pitch in elements is PITCH_MOD[0] mod PITCH_MOD[1]: lanes 4g + t then load the words
# g * pitch + t (fp32; fp16: pitch / 2 words a row, t the f16x2 word) from 32 distinct banks (fp64: 4
# mod 16 doubles, as the 8-byte loads of m8n8k4 want).
PITCH_MOD = {8: (4, 16), 4: (4, 32), 2: (8, 64)}


def format_macros(precision: str) -> dict:
    """The macros beside ELEM that tell a format's kernels which one it is, its record's `cuda_macros`
    (stencil_real.cuh: ELEM 2 is fp16, with BF16 1 bf16); none for the others (their modules keep the
    options, and cache keys, they had)."""
    return dict(fmt(precision).cuda_macros)


def tc_config(st: Stencil, nfrag: int, twin: bool, precision: str = "fp64") -> tuple[str, dict, int, dict]:
    """(kernel name, macros but stencil_tc3's TABLE, shared bytes, tile) of the tensor-core kernel at
    st.depth with `nfrag` B fragments in `precision` (its MMA shape, m rows of a warp's tiles; shared
    rows of its element size; B fragments 8 bytes a lane): 2D stencil_tc.cu, 3D stencil_tc3.cu; twin:
    built with TWIN=1."""
    rf = st.radius * st.depth
    mma_m, _, mma_k = mma_shape(precision)
    elem = fmt(precision).bytes
    tile = TC3_TILE if st.dims == 3 else TC_TILE
    pitch = 8 * tile["NT"] * tile["WX"] + 2 * rf + mma_k - 1
    rem, mod = PITCH_MOD[elem]
    pitch += (rem - pitch) % mod
    macros = dict(RF=rf, PITCH=pitch, TWIN=int(twin), ELEM=elem, **tile, **({} if st.dims == 3 else {"DIMS": 2}),
                  **format_macros(precision))
    planes = 2 if st.dims == 3 else 1          # stencil_tc3: two plane buffers
    tile_bytes = elem * planes * (mma_m * tile["WY"] + 2 * rf) * pitch
    return ("stencil_tc3" if st.dims == 3 else "stencil_tc"), macros, tile_bytes + 8 * 32 * nfrag, tile


# ------------------------------------------------------------------------------ what fits, what runs


def shared_bytes(impl: str, st: Stencil, gpu: str | None = None, precision: str = "fp64") -> int:
    """Dynamic shared memory per block of `impl` for stencil `st` at its depth (cc_naive: depth 1) on
    `gpu` in `precision`."""
    if impl == "tc_sparse":    # stencil_sp(3).cu: the tile or plane buffers, and the fragments in shared memory
        from membound.kernels.stencil.sp_layout import structure_bytes

        sp = precision if fmt(precision).mma_sp else next(p for p in PRECISIONS if fmt(p).mma_sp)
        return structure_bytes(st.shape, st.dims, st.radius, st.depth, sp)
    if impl.startswith("tc"):
        nfrag = tc_fragments(st.shape, st.dims, st.radius, st.depth, precision)
        return tc_config(st, nfrag, impl == "tc_twin", precision)[2]
    return cc_launch(st, 1 if impl == "cc_naive" else st.depth, gpu, elem=fmt(precision).bytes).smem


def refusal(impl: str, st: Stencil, limit: int, gpu: str | None = None, precision: str = "fp64") -> str | None:
    """Why `impl` cannot run `st` at its depth on `gpu` in `precision` where a block may have `limit`
    bytes of shared memory (None: it can)."""
    need = shared_bytes(impl, st, gpu, precision)
    if need <= limit:
        return None
    return (f"{st.name} {impl} {precision} at depth {st.depth} needs {need / 1024:.1f} KiB of shared memory per "
            f"block, the device allows {limit / 1024:.0f} KiB")


def steps_at(steps: int, depth: int) -> int:
    """The time steps one timed call runs at `depth`: `steps` rounded up to a multiple of the depth."""
    return depth * math.ceil(steps / depth)


def plan(st: Stencil, depths, impls, limit: int | None = None, gpu: str | None = None,
         precision: str = "fp64") -> tuple[list[tuple[str, Stencil]], list[str]]:
    """The jobs of one stencil on `gpu` in `precision`, (impl name, stencil at the depth it runs), and the refusals:
    SWEPT impls at each of `depths` and st.depth (the role depth), the others of `impls` at st.depth
    (cc_naive runs depth 1 whatever it is). A depth whose shared memory exceeds `limit` bytes is
    refused (a phrase in the second list); ValueError where that is the role depth, or a depth is
    beyond MAX_DEPTH."""
    jobs, refused = [], []
    for impl in impls:
        for t in sorted({*depths, st.depth}) if impl in SWEPT else [st.depth]:
            if not 1 <= t <= MAX_DEPTH[st.dims]:
                raise ValueError(f"depth {t} is outside the {st.dims}D kernels' 1..{MAX_DEPTH[st.dims]}: drop it")
            at = replace(st, depth=t)
            why = refusal(impl, at, limit, gpu, precision) if limit else None
            if why and t == st.depth:
                raise ValueError(f"{why}; the role depth must run: choose a smaller depth")
            if why:
                refused.append(why)
            else:
                jobs.append((impl, at))
    return jobs, refused


def check_config(kernels: Mapping, gpu: str, arch: str, impls, precisions=("fp64",)) -> list[str]:
    """Config stencil.kernels against what the kernels `impls` run on `gpu` (its tiles) in each of
    `precisions`, of `arch` (SHARED_KIB; no shared-memory check for another arch): ValueError naming
    the key where `plan` raises one, else the refused depths, one phrase each (their rows will not exist)."""
    limit = SHARED_KIB[arch] * 1024 if arch in SHARED_KIB else None
    refused = []
    for name, spec in kernels.items():
        st = Stencil(name, spec["shape"], spec["dims"], spec["radius"], spec["depth"])
        for p in precisions:
            try:
                refused += plan(st, spec.get("depths", []), impls, limit, gpu, p)[1]
            except ValueError as err:
                raise ValueError(f"stencil.kernels.{name} on {gpu} ({arch}, {p}): {err}") from None
    return refused
