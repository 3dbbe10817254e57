"""Which CUDA-core stencil kernel and tile runs a stencil at a depth, on which GPU, and its launch (grid,
shared memory, compile-time macros). Pure Python: the tests check the launches without a GPU.

Kernels (docs/kernels_stencil.md): stencil_tb2 (2D, any depth: streaming along y, EBISU's design),
stencil_cc (2D, a tile plus halo per block), stencil_tb3 (3D, any depth: streaming along z with
pipelined stage rings), stencil_cc3 (3D, depth 1: a ring of planes). TUNED holds per GPU the tiles
that tools/sweep_tb.py measured best; anything else gets DEFAULT's rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SMEM_MAX = 227 * 1024     # sm_80 / sm_90: the most dynamic shared memory one block may opt in to
MAX_DEPTH = {2: 8, 3: 4}

TB2 = dict(kernel="stencil_tb2", NT=256, CH=4, PF=1, OWNREG=1, MINB=0, WSMEM=0, WAVES=1)
_3D_TB = dict(kernel="stencil_tb3", BX=32, BY=32, BZ=128, V=4, NTHREADS=512, MINB=0, WSMEM=0)


def default_tile(dims: int, shape: str, radius: int, depth: int) -> dict:
    """The untuned choice: 2D stencil_tb2 (rows per chunk CH >= 2*radius, a thread's own column in
    registers while those queues stay within ~48 registers; 128 columns past depth 4, whose rings
    fill shared memory); 3D as the H100 sweeps of issue 13 chose (docs/kernels_stencil.md)."""
    if dims == 2:
        ch = max(4, 2 * radius) if depth > 1 else 8
        return dict(TB2, CH=ch, NT=256 if depth <= 4 else 128, OWNREG=int(2 * ch * (depth - 1) <= 24))
    if depth == 1:
        if shape == "box":
            return dict(kernel="stencil_cc3", BX=32, BY=64, BZ=32, V=8, NTHREADS=256, MINB=0, WSMEM=0)
        return dict(_3D_TB, BX=64, BY=16, BZ=32, NTHREADS=256)
    return dict(_3D_TB, BX=64, BY=16) if shape == "box" else _3D_TB


# TUNED[gpu][(dims, shape, radius, depth)]: filled from tools/sweep_tb.py's best.csv per GPU
TUNED: dict[str, dict[tuple, dict]] = {"h100": {}, "h200": {}}


def gpu_key(device_name: str) -> str | None:
    """'NVIDIA H200' -> 'h200': the TUNED entry of a device, or None."""
    name = device_name.lower()
    return next((key for key in TUNED if key in name), None)


def cc_tile(dims: int, shape: str, radius: int, depth: int, gpu: str | None = None) -> dict:
    """The tile of the CUDA-core kernel for this stencil and depth on `gpu` (a TUNED key)."""
    if not 1 <= depth <= MAX_DEPTH[dims]:
        raise ValueError(f"depth {depth}: CUDA-core {dims}D stencils run depths 1..{MAX_DEPTH[dims]}")
    return TUNED.get(gpu or "", {}).get((dims, shape, radius, depth)) or default_tile(dims, shape, radius, depth)


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
    waves: int = 0     # stencil_tb2: waves of blocks over the field (sets its segment, see `grid`)

    def grid(self, shape3: tuple, sms: int, blocks_per_sm: int) -> tuple[tuple[int, int, int], tuple]:
        """The grid over a (nz, ny, nx) field and the kernel's arguments after (.., nz, ny, nx):
        stencil_tb2 takes `seg`, the output rows per block, so that the blocks over all columns
        make about `waves` waves of sms * blocks_per_sm."""
        nz, ny, nx = shape3
        m = self.macros
        if self.name != "stencil_tb2":
            return (math.ceil(nx / m["BX"]), math.ceil(ny / (m["BY"] * m.get("TPB", 1))), math.ceil(nz / m["BZ"])), ()
        columns = math.ceil(nx / (m["NT"] - 2 * m["DEPTH"] * m["RAD"]))
        seg = math.ceil(ny / max(1, self.waves * sms * blocks_per_sm // columns))
        return (columns, math.ceil(ny / seg), 1), (seg,)


def plan(tile: dict, shape: str, radius: int, depth: int, shape3: tuple, what: str) -> Launch:
    """The launch of `tile` for this stencil on a (nz, ny, nx) field. Refuses (ValueError naming
    `what`) a tile whose shared memory exceeds SMEM_MAX or a field too small for it."""
    name, r = tile["kernel"], radius
    macros = dict(RAD=r, STAR=int(shape == "star"), DEPTH=depth, **{k: v for k, v in tile.items()
                                                                     if k not in ("kernel", "WAVES")})
    halo = depth * r
    ny = shape3[1]
    if name == "stencil_tb2":
        ch, pf = tile["CH"], tile["PF"]
        hc = -(-2 * r // ch)
        p_in, p_st = pf + 1 + hc, 2 + hc
        p_st = p_st if p_in % p_st == 0 else p_in
        words = (p_in + (depth - 1) * p_st) * ch * (tile["NT"] + 2 * r)
        threads = tile["NT"]
        if tile["NT"] <= 2 * halo or ny < ch:
            raise ValueError(f"{what}: tile NT={tile['NT']}, CH={ch} does not fit depth {depth} (halo {halo}) "
                             f"or {ny} rows; choose another tile in stencil_tuning")
    else:
        sx, sy = tile["BX"] + 2 * halo, tile["BY"] + 2 * halo
        threads = tile["NTHREADS"]
        if name == "stencil_cc3":    # a ring of 2r+1 planes
            words = (2 * r + 1) * sy * sx
        elif name == "stencil_tb3":  # `depth` stages of 2r+2 planes, V rows of slack
            words = depth * (2 * r + 2) * sy * sx + tile["V"] * sx
        else:  # stencil_cc: one input tile (two when a block walks several) and, blocked, the ping-pong partner
            words = (1 + (tile["TPB"] > 1) + (depth > 1)) * (sy + (tile["V"] if depth > 1 else 0)) * sx
    if 8 * words > SMEM_MAX:
        raise ValueError(f"{what}: {name} with tile {tile} needs {8 * words / 1024:.0f} KB of shared memory at "
                         f"depth {depth}, more than {SMEM_MAX // 1024} KB; use a smaller depth or tile")
    return Launch(f"{name}.cu", name, macros, 8 * words, threads, tile.get("WAVES", 0))
