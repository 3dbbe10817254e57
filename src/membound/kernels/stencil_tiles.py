"""The CUDA-core stencil kernels' tiles: each kernel's base tile, and per GPU the tile measured best for
each stencil shape and depth (data only; stencil_plan.py decides and checks, docs/kernels_stencil.md).

Tile keys are the kernels' compile-time macros (the .cu headers say what each means), and `kernel`, the .cu
file: stencil_cc (2D, a tile plus halo per block: BX x BY output tile, V points per thread along y, TPB tiles
per block along y, VEC 16-byte copies, VS the sums in vector strips, NOWRAP the interior tiles copied without
the wrap), stencil_tb2 (2D, streaming along y: NT columns, chunks of CH rows, PF chunks in flight, OWNREG a
thread's own column in registers, WAVES waves of blocks over the field), stencil_cc3 (3D at depth 1, a ring of
planes; VEC and VS as stencil_cc), stencil_tb3 (3D, streaming along z: BX x BY x BZ per block), stencil_stream
(2D and 3D at depth 1, streaming with the sums in registers: NTX threads along x of UV 16-byte vectors each,
BY rows in 3D, VY of them a thread, chunks of CH slices, CPY the copies (0 cp.async, 1 the same through L1, 2
staged in registers), PF chunks in flight, WAVES waves of blocks, BAL 1 the field cut into equal runs of slices
across column and row blocks, one a block); stencil_cc3's PF: planes in flight by
cp.async (0: one, through registers), stencil_tb3's VEC and PF: its input planes in 16-byte copies, PF in
flight; MINB minimum blocks per SM (0: the compiler's choice), WSMEM weights in shared memory.

TUNED[gpu][(dims, shape, radius, depth)], gpu a profile name (config/gpus/<gpu>.yaml): the best checked
variant of `tools/sweep_depths.py --tiles` on that GPU at 10240^2 / 512^3, which prints these entries;
a key with a fifth item, the element size in bytes (8, 4, 2: fp64, fp32, fp16), holds the tile of
that precision where the precisions' best tiles differ.
"""

CC2 = dict(kernel="stencil_cc", BX=64, BY=32, BZ=1, V=8, NTHREADS=256, TPB=1, MINB=0, WSMEM=0, VEC=0, VS=0, NOWRAP=0)
CC3 = dict(kernel="stencil_cc3", BX=32, BY=64, BZ=32, V=8, NTHREADS=256, MINB=0, WSMEM=0, VEC=0, VS=0, PF=0)
TB2 = dict(kernel="stencil_tb2", NT=256, CH=4, PF=1, OWNREG=1, MINB=0, WSMEM=0, WAVES=1)
TB3 = dict(kernel="stencil_tb3", BX=32, BY=32, BZ=128, V=4, NTHREADS=512, MINB=0, WSMEM=0, VEC=0, PF=1)
ST = dict(kernel="stencil_stream", NTX=64, UV=1, BY=1, VY=1, CH=3, PF=2, CPY=0, MINB=0, WAVES=1, BAL=0)
BASES = {"CC2": CC2, "CC3": CC3, "TB2": TB2, "TB3": TB3, "ST": ST}

TUNED = {
    # H100 SXM, 2026-11-24 (tools/sweep_tb.py at tb-speed 9247e06, the same kernels; its best_tb.csv);
    # stencil_cc's 16-byte copies (VEC=1) at 2D depths 1-2: H100 and H200, 2026-11-25 (sweep_depths.py
    # --tiles in fp64, fp32 and fp16; docs/kernels_stencil.md); stencil_cc3's (3D depth 1, 3d7pt too) in
    # fp32 and fp16 but not fp64: H100, 2026-11-25; the depth-1 shapes (sweep_depths.py CC_SHAPES), H100,
    # 2026-11-25, where the best beat the entry before by >= 3%; the vector kernels at depth 1 (stencil_cc and
    # stencil_cc3 with VS, stencil_stream), H100, 2026-11-26, where the best beat the entry before by >= 3%; stencil_tb3
    # with 16-byte copies (VEC) and PF planes in flight at 3D depths 1-4, H100, 2026-11-26, the same rule; the
    # vector strips with more blocks per SM (MINB) at 2D depth 1, and stencil_tb3 tiles of 3 blocks an SM at
    # 3D depth 2 in fp64, H100, 2026-11-26, the same rule (fp16 2d13pt, fp64 3d7pt and 3d27pt); stencil_cc3
    # over segments of 3-4 planes all in flight at once (PF = BZ - 1), 3D depth 1, H100, 2026-11-27, the same rule
    # (3d7pt: fp64 172.4 -> 183.2, fp32 342.9 -> 356.8 GStencil/s), and fp16 3d7pt at depth 2 over 64 planes
    # (360.7 -> 375.3)
    "h100": {
        (2, "star", 1, 1): dict(CC2, VEC=1),
        (2, "star", 1, 1, 2): dict(CC2, BX=256, BY=16, V=4, NTHREADS=128, VEC=1, VS=1),
        (2, "star", 1, 2): dict(CC2, VEC=1),
        (2, "star", 1, 3): dict(TB2, PF=2, MINB=2),
        (2, "star", 1, 4): dict(TB2, NT=128),
        (2, "star", 1, 5): dict(TB2, NT=128),
        (2, "star", 1, 6): dict(TB2, NT=128),
        (2, "star", 1, 7): dict(TB2, OWNREG=0),
        (2, "star", 1, 8): dict(TB2, OWNREG=0),
        (2, "box", 1, 1): dict(CC2, VEC=1),
        (2, "box", 1, 1, 2): dict(CC2, BX=256, BY=16, V=4, NTHREADS=128, VEC=1, VS=1),
        (2, "box", 1, 2): dict(CC2, VEC=1),
        (2, "box", 1, 3): dict(TB2, PF=2, MINB=2),
        (2, "box", 1, 4): dict(TB2, NT=128),
        (2, "box", 1, 5): dict(TB2, NT=128),
        (2, "box", 1, 6): dict(TB2, NT=128),
        (2, "box", 1, 7): dict(TB2, OWNREG=0),
        (2, "box", 1, 8): dict(TB2, OWNREG=0),
        (2, "star", 3, 1): dict(CC2, BX=128, V=16, TPB=4, VEC=1),
        (2, "star", 3, 1, 2): dict(CC2, BX=256, BY=16, V=4, NTHREADS=128, MINB=8, VEC=1, VS=1),
        (2, "star", 3, 1, 4): dict(CC2, BX=256, BY=16, V=4, VEC=1, VS=1),
        (2, "star", 3, 1, 8): dict(CC2, BX=128, BY=16, VEC=1),
        (2, "star", 3, 2): dict(TB2, NT=128, CH=6),
        (2, "star", 3, 3): dict(TB2, NT=128, CH=6),
        (2, "star", 3, 4): dict(TB2, CH=6, WAVES=2),
        (2, "star", 3, 5): dict(TB2, NT=128, CH=6),
        (2, "star", 3, 6): dict(TB2, CH=6, OWNREG=0),
        (2, "star", 3, 7): dict(TB2, NT=128, CH=6, OWNREG=0),
        (2, "star", 3, 8): dict(TB2, NT=128, CH=6, OWNREG=0),
        (2, "box", 3, 1): dict(CC2, BX=128, V=16, VEC=1),
        (2, "box", 3, 1, 2): dict(CC2, BX=256, V=4, MINB=3, VEC=1, VS=1),
        (2, "box", 3, 1, 4): dict(CC2, BX=128, BY=16, V=4, NTHREADS=128, VEC=1, VS=1),
        (2, "box", 3, 2): dict(TB2, CH=12),
        (2, "box", 3, 3): dict(TB2, CH=6, OWNREG=0),
        (2, "box", 3, 4): dict(TB2, CH=6, WAVES=2),
        (2, "box", 3, 5): dict(TB2, CH=6, OWNREG=0),
        (2, "box", 3, 6): dict(TB2, CH=6, OWNREG=0),
        (2, "box", 3, 7): dict(CC2, V=16, NTHREADS=128, TPB=4, WSMEM=1),
        (2, "box", 3, 8): dict(TB2, NT=128, CH=6, OWNREG=0),
        (3, "star", 1, 1): dict(CC3, BX=128, BY=16, VEC=1),
        (3, "star", 1, 1, 2): dict(ST, NTX=32, UV=2, BY=8, CPY=2),
        (3, "star", 1, 1, 4): dict(CC3, BX=128, BY=16, BZ=3, V=2, VEC=1, VS=1, PF=2),
        (3, "star", 1, 1, 8): dict(CC3, BX=128, BY=8, BZ=4, V=4, VEC=1, PF=3),
        (3, "star", 1, 2): dict(TB3, NTHREADS=256, VEC=1),
        (3, "star", 1, 2, 2): dict(TB3, BZ=64, NTHREADS=256, VEC=1),
        (3, "star", 1, 2, 4): dict(TB3, BX=64, BZ=64, V=8, NTHREADS=256, VEC=1),
        (3, "star", 1, 2, 8): dict(TB3, BY=24, BZ=64, NTHREADS=256, MINB=3, VEC=1),
        (3, "star", 1, 3): dict(TB3, NTHREADS=256, VEC=1),
        (3, "star", 1, 3, 8): dict(TB3, BZ=256),
        (3, "star", 1, 4): dict(TB3, BZ=256, VEC=1),
        (3, "star", 1, 4, 2): dict(TB3, NTHREADS=256, VEC=1),
        (3, "star", 1, 4, 8): dict(TB3, BZ=256),
        (3, "box", 1, 1): dict(CC3, VEC=1),
        (3, "box", 1, 1, 2): dict(ST, NTX=32, BY=16, PF=1),
        (3, "box", 1, 1, 4): dict(CC3, BX=128, BY=16, V=4, NTHREADS=128, VEC=1, VS=1),
        (3, "box", 1, 1, 8): dict(CC3, BX=64, BY=16, V=4, VEC=1),
        (3, "box", 1, 2): dict(TB3, BX=64, BY=16, NTHREADS=256, VEC=1),
        (3, "box", 1, 2, 8): dict(TB3, BX=64, BY=16, BZ=64, NTHREADS=256, MINB=2, VEC=1),
        (3, "box", 1, 3): dict(TB3, BX=64, BY=16, NTHREADS=256, VEC=1),
        (3, "box", 1, 3, 8): dict(TB3, BX=64, BY=16, BZ=256, VEC=1),
        (3, "box", 1, 4): dict(TB3, BX=64, BY=16, NTHREADS=256, VEC=1),
        (3, "box", 1, 4, 8): dict(TB3, BX=64, BY=16, BZ=256),
    },
}
# H200: the H100's tiles (the same GH100 chip, more and faster HBM), with its own sweeps' entries over them
TUNED["h200"] = TUNED["h100"]
# h200: tools/sweep_depths.py --tiles --apply, 2026-11-26: tiles >= 3% faster than the ones before
TUNED["h200"] = {
    **TUNED.get("h200", {}),
    (2, "star", 1, 1, 2): dict(CC2, BX=256, NTHREADS=128, MINB=6, VEC=1, VS=1),  # fp16: 838.3 -> 921.7 GStencil/s
    (2, "box", 1, 1, 2): dict(ST, NTX=256, CPY=2),  # fp16: 824.6 -> 898.3 GStencil/s
    (2, "star", 3, 1, 2): dict(CC2, BX=256, V=4, TPB=2, VEC=1, VS=1),  # fp16: 817.9 -> 847.2 GStencil/s
    (2, "star", 1, 1, 4): dict(CC2, BX=256, BY=16, V=4, MINB=3, VEC=1, VS=1),  # fp32: 493.2 -> 517.4 GStencil/s
    (2, "box", 1, 1, 4): dict(CC2, BX=256, BY=16, V=4, MINB=4, VEC=1, VS=1),  # fp32: 435.7 -> 516.5 GStencil/s
    (2, "star", 3, 1, 4): dict(CC2, BX=128, V=4, MINB=4, VEC=1, VS=1),  # fp32: 484.9 -> 510.7 GStencil/s
    (2, "box", 3, 1, 4): dict(CC2, BX=128, V=4, TPB=2, VEC=1, VS=1),  # fp32: 354.0 -> 381.7 GStencil/s
    (3, "star", 1, 1, 4): dict(CC3, BX=64, BY=16, V=2, NTHREADS=128, MINB=8, VEC=1, VS=1),  # fp32: 416.9 -> 440.4 GStencil/s
    (3, "box", 1, 1, 4): dict(ST, NTX=32, BY=16, WAVES=4),  # fp32: 327.8 -> 372.3 GStencil/s
    (2, "box", 1, 1, 8): dict(CC2, BY=16, V=4, NTHREADS=128, VEC=1, VS=1),  # fp64: 250.5 -> 260.6 GStencil/s
    (2, "star", 3, 1, 8): dict(CC2, BX=128, VEC=1, VS=1),  # fp64: 240.1 -> 253.4 GStencil/s
    (3, "star", 1, 1, 8): dict(CC3, BX=128, BY=16, VEC=1, PF=2),  # fp64: 216.4 -> 223.4 GStencil/s
    (3, "box", 1, 1, 8): dict(ST, NTX=32, BY=16, WAVES=8),  # fp64: 182.6 -> 196.1 GStencil/s
    # the same lease, --depths 2 3 --precisions fp64
    (2, "star", 1, 2, 8): dict(TB2, CH=8),  # fp64: 405.5 -> 455.6 GStencil/s
    (2, "box", 1, 2, 8): dict(TB2, CH=8),  # fp64: 387.3 -> 453.6 GStencil/s
    # 2026-11-26, sweep_depths.py --tiles --stencils 3d7pt --depths 2 3 with stencil_tb3 tiles of four blocks an SM
    (3, "star", 1, 3, 8): dict(TB3, BY=20, BZ=64, NTHREADS=256, MINB=4, VEC=1),  # fp64: 166.7 -> 190.0 GStencil/s
}
# h200: tools/sweep_depths.py --tiles --apply, 2026-11-27, 3D depth 1 with 9876306 (stencil_stream cp.async slices at
# offsets wrapped once): tiles >= 3% faster than the ones before (through L1, CPY 1)
TUNED["h200"] = {
    **TUNED.get("h200", {}),
    (3, "box", 1, 1, 8): dict(ST, NTX=32, BY=16, CPY=1),  # fp64: 202.0 -> 219.4 GStencil/s
    (3, "box", 1, 1, 4): dict(ST, NTX=32, BY=16, CPY=1),  # fp32: 390.9 -> 443.2 GStencil/s
    (3, "star", 1, 1, 2): dict(ST, NTX=32, BY=16, CPY=1),  # fp16: 719.1 -> 918.0 GStencil/s
}
# h100: tools/sweep_depths.py --tiles, 2026-11-27, 3D depth 1 with stencil_stream's VY rows a thread (each input row
# read once for VY output rows): tiles >= 3% faster than the ones before, in the same call
TUNED["h100"] = {
    **TUNED.get("h100", {}),
    (3, "box", 1, 1, 8): dict(ST, NTX=128, BY=8, VY=4, CPY=1),  # fp64: 170.8 -> 179.9 GStencil/s
    (3, "box", 1, 1, 4): dict(ST, BY=16, VY=2, CPY=1),  # fp32: 345.2 -> 367.0 GStencil/s
    (3, "box", 1, 1, 2): dict(ST, NTX=32, BY=32, VY=2, CPY=1),  # fp16: 590.0 -> 660.9 GStencil/s
}
# h200: tools/sweep_depths.py --tiles --apply, 2026-11-27: tiles >= 3% faster than the ones before
TUNED["h200"] = {
    **TUNED.get("h200", {}),
    (3, "box", 1, 1, 8): dict(ST, NTX=128, BY=8, VY=4, PF=1, CPY=1),  # fp64: 221.0 -> 231.5 GStencil/s
    (3, "star", 1, 1, 8): dict(ST, BY=16, VY=2, CPY=1),  # fp64: 234.5 -> 248.8 GStencil/s
    (3, "box", 1, 1, 4): dict(ST, NTX=128, BY=8, VY=4, PF=1, CPY=1),  # fp32: 443.6 -> 482.7 GStencil/s
    (3, "star", 1, 1, 4): dict(ST, BY=16, VY=2, CPY=1),  # fp32: 462.8 -> 500.7 GStencil/s
    (3, "box", 1, 1, 2): dict(ST, BY=16, VY=2, PF=1, CPY=1),  # fp16: 632.6 -> 683.5 GStencil/s
    (3, "star", 1, 1, 2): dict(ST, BY=16, VY=2, CPY=1),  # fp16: 907.4 -> 952.6 GStencil/s
}
# h200: tools/sweep_depths.py --tiles --apply, 2026-11-27: tiles >= 3% faster than the ones before
TUNED["h200"] = {
    **TUNED.get("h200", {}),
    (2, "box", 3, 1, 4): dict(ST, NTX=128, CH=7, PF=1),  # fp32: 379.7 -> 406.8 GStencil/s
}
# h100 and h200: the same tiles with NOWRAP (the interior tiles copied without the wrap), A/B/A in one call per GPU,
# 2026-11-27 (the kernel before against the new; docs/kernels_stencil.md): where it gained >= 3% in both passes
TUNED["h100"] = {
    **TUNED.get("h100", {}),
    (2, "box", 3, 1, 4): dict(CC2, BX=128, BY=16, V=4, NTHREADS=128, VEC=1, VS=1, NOWRAP=1),  # fp32: 332.0 -> 342.0
    (2, "box", 3, 1, 2): dict(CC2, BX=256, V=4, MINB=3, VEC=1, VS=1, NOWRAP=1),  # fp16: 404.0 -> 421.0
    (2, "star", 1, 2, 2): dict(CC2, VEC=1, NOWRAP=1),  # fp16: 793.7 -> 834.9
}
TUNED["h200"] = {
    **TUNED.get("h200", {}),
    (2, "star", 1, 1, 2): dict(CC2, BX=256, NTHREADS=128, MINB=6, VEC=1, VS=1, NOWRAP=1),  # fp16: 925.3 -> 984.5
    (2, "star", 1, 2, 2): dict(CC2, VEC=1, NOWRAP=1),  # fp16: 810.5 -> 846.7
    (2, "box", 3, 1, 2): dict(CC2, BX=256, V=4, MINB=3, VEC=1, VS=1, NOWRAP=1),  # fp16: 412.7 -> 429.3
}
# h200: tools/sweep_depths.py --tiles --depths 1 --variants tuned tuned_bal1 ..., 2026-11-28, three calls of two
# passes each (docs/kernels_stencil.md, "Equal runs a block"): the fp16 3d27pt tile cut into equal runs (BAL)
TUNED["h200"] = {
    **TUNED.get("h200", {}),
    (3, "box", 1, 1, 2): dict(ST, BY=16, VY=2, PF=1, CPY=1, BAL=1),  # fp16: 686.1 -> 715.3 GStencil/s
}
# h200: tools/sweep_depths.py --tiles --depths 1 --variants tuned st_x256y4v4_c1_pf1 ..., 2026-11-28, two calls of two
# passes each (docs/kernels_stencil.md, "Whole rows"): fp64 3d27pt streaming whole 4 KB rows of the 512^3 field
TUNED["h200"] = {
    **TUNED.get("h200", {}),
    (3, "box", 1, 1, 8): dict(ST, NTX=256, BY=4, VY=4, PF=1, CPY=1),  # fp64: 235.2 -> 246.6 GStencil/s
}
