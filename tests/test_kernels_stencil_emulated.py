"""The CUDA-core stencil kernels' own source run on the CPU (tests/emulated.py): every kernel, tile
shape and depth class against the scipy reference, with the threads of each barrier interval run
forward and in reverse (a race then shows), shared memory poisoned with NaN and cp.async copies
landing only at the thread's wait. Needs g++, not a GPU."""

import subprocess

import emulated
import numpy as np
import pytest

from membound.kernels import stencil as S
from membound.kernels.stencil import launch as P
from membound.kernels.stencil.tiles import CC3, ST, TB2, TB3
from membound.model.precision import decode, fmt, quantize
from membound.run import measure

pytestmark = [pytest.mark.skipif(not emulated.available(), reason="no g++ here"),
              pytest.mark.slow]  # g++ builds a binary for each case: minutes in all

SMALL_TB3 = dict(TB3, BX=8, BY=8, BZ=8, NTHREADS=32)
CASES = [  # (shape, dims, radius, depth, tile, field); fields ragged, several blocks and segments
    ("star", 2, 1, 3, dict(TB2, NT=32, CH=4), (45, 71)),
    ("box", 2, 1, 8, dict(TB2, NT=40, CH=2, PF=2), (37, 53)),
    ("box", 2, 1, 2, dict(TB2, NT=32, CH=8, PF=3, OWNREG=0), (64, 45)),
    ("star", 2, 3, 1, dict(TB2, NT=32, CH=8), (45, 71)),
    ("box", 2, 3, 2, dict(TB2, NT=32, CH=6), (37, 53)),
    ("star", 2, 2, 5, dict(TB2, NT=48, CH=3, OWNREG=0), (37, 53)),
    ("star", 2, 3, 4, dict(TB2, NT=64, CH=6, WAVES=2), (45, 71)),
    ("box", 2, 3, 2, dict(TB2, NT=40, CH=12, MINB=2), (37, 53)),
    ("box", 2, 1, 2, dict(kernel="stencil_cc", BX=16, BY=8, BZ=1, V=4, NTHREADS=32, TPB=2, MINB=0, WSMEM=1), (45, 71)),
    ("star", 3, 1, 3, SMALL_TB3, (21, 13, 19)),
    ("box", 3, 1, 4, dict(SMALL_TB3, WSMEM=1), (21, 13, 19)),
    ("box", 3, 1, 1, dict(CC3, BX=8, BY=16, BZ=8, V=4, NTHREADS=32), (21, 13, 19)),
]
CC = dict(kernel="stencil_cc", BX=16, BY=8, BZ=1, V=4, NTHREADS=32, TPB=1, MINB=0, WSMEM=0, VEC=1)
VEC_CASES = [  # 16-byte copies (nx a multiple of every precision's vector), and the fallback (nx odd)
    ("star", 2, 1, 1, CC, (37, 48)),
    ("box", 2, 1, 1, CC, (37, 45)),                  # TPB = 1: staged vectors, and the fallback
    ("star", 2, 3, 1, dict(CC, VEC=0), (37, 45)),    # TPB = 1, element by element
    ("box", 2, 1, 3, dict(CC, TPB=2), (45, 72)),
    ("star", 2, 3, 1, dict(CC, TPB=3), (45, 71)),
    ("star", 2, 1, 1, dict(CC, BX=32, V=8, VS=1), (37, 48)),           # vector strips
    ("box", 2, 3, 1, dict(CC, BX=32, V=4, TPB=2, VS=1), (45, 71)),
    ("star", 2, 3, 1, dict(CC, BX=16, V=8, NTHREADS=8, VS=1), (45, 72)),
    ("box", 2, 1, 1, dict(CC, NOWRAP=1), (45, 48)),                   # interior tiles without the wrap
    ("star", 2, 3, 2, dict(CC, BX=32, TPB=2, NOWRAP=1), (64, 72)),
    ("box", 2, 3, 1, dict(CC, BX=32, V=4, VS=1, NOWRAP=1), (45, 71)),    # nx odd: element copies
    ("box", 3, 1, 1, dict(CC3, BX=8, BY=16, BZ=8, V=4, NTHREADS=32, VEC=1), (21, 13, 24)),
    ("star", 3, 1, 1, dict(CC3, BX=16, BY=8, BZ=8, V=4, NTHREADS=8, VEC=1, VS=1), (21, 13, 24)),
    ("box", 3, 1, 1, dict(CC3, BX=16, BY=8, BZ=8, V=2, NTHREADS=4, VEC=1, VS=1), (21, 13, 19)),
    ("box", 3, 1, 1, dict(CC3, BX=8, BY=16, BZ=8, V=4, NTHREADS=32, VEC=1), (21, 13, 19)),
    ("star", 3, 1, 1, dict(CC3, BX=8, BY=16, BZ=8, V=4, NTHREADS=32, VEC=1, PF=2), (21, 13, 24)),   # cp.async planes
    ("box", 3, 1, 1, dict(CC3, BX=8, BY=16, BZ=5, V=4, NTHREADS=32, VEC=1, PF=1), (21, 13, 19)),
    ("box", 3, 1, 1, dict(CC3, BX=16, BY=8, BZ=8, V=2, NTHREADS=16, VEC=1, VS=1, PF=3), (21, 13, 24)),
    ("star", 3, 1, 1, dict(CC3, BX=8, BY=16, BZ=3, V=4, NTHREADS=32, VEC=1, PF=2), (21, 13, 24)),   # whole segments
    ("box", 3, 1, 1, dict(CC3, BX=16, BY=8, BZ=4, V=2, NTHREADS=16, VEC=1, VS=1, PF=3), (21, 13, 24)),
    ("star", 3, 1, 3, dict(SMALL_TB3, VEC=1, PF=2), (21, 13, 24)),   # stencil_tb3: 16-byte copies, planes in flight
    ("box", 3, 1, 2, dict(SMALL_TB3, VEC=1, PF=3), (21, 13, 19)),
    ("star", 3, 1, 1, dict(SMALL_TB3, BX=16, VEC=1), (21, 13, 24)),
    ("box", 3, 1, 2, dict(SMALL_TB3, PF=2), (21, 13, 19)),
]

STREAM_CASES = [  # stencil_stream: several column blocks and segments (WAVES); nx a multiple of a vector or not
    ("star", 2, 1, 1, dict(ST, NTX=4, CH=3, PF=1, WAVES=8), (45, 48)),
    ("box", 2, 1, 1, dict(ST, NTX=2, UV=2, CH=6, PF=2, WAVES=12), (37, 45)),
    ("box", 2, 1, 1, dict(ST, NTX=4, CH=3, CPY=2, WAVES=12), (37, 48)),
    ("star", 2, 3, 1, dict(ST, NTX=4, CH=7, CPY=2, WAVES=8), (37, 45)),
    ("box", 3, 1, 1, dict(ST, NTX=2, BY=4, CH=3, CPY=2, WAVES=16), (21, 13, 24)),
    ("star", 3, 1, 1, dict(ST, NTX=2, BY=3, CH=3, CPY=1, WAVES=16), (21, 13, 24)),
    ("star", 2, 3, 1, dict(ST, NTX=4, CH=7, PF=2, WAVES=12), (45, 72)),
    ("box", 2, 3, 1, dict(ST, NTX=3, CH=7, PF=1, WAVES=16), (37, 71)),
    ("star", 3, 1, 1, dict(ST, NTX=2, BY=4, CH=3, PF=2, WAVES=16), (21, 13, 24)),
    ("box", 3, 1, 1, dict(ST, NTX=2, UV=2, BY=3, CH=3, PF=1, WAVES=16), (21, 13, 19)),
    ("box", 3, 1, 1, dict(ST, NTX=2, BY=4, VY=2, CH=3, CPY=1, WAVES=16), (21, 13, 24)),   # VY rows a thread
    ("star", 3, 1, 1, dict(ST, NTX=2, BY=6, VY=3, CH=3, CPY=2, WAVES=16), (21, 13, 19)),
    ("star", 3, 1, 1, dict(ST, NTX=2, BY=4, VY=2, CH=3, CPY=1, BAL=1, WAVES=5), (21, 13, 24)),   # runs across blocks
    ("box", 3, 1, 1, dict(ST, NTX=2, BY=3, CH=3, CPY=2, BAL=1, WAVES=7), (21, 13, 19)),
    ("box", 2, 3, 1, dict(ST, NTX=3, CH=7, PF=1, BAL=1, WAVES=4), (37, 71)),
]


@pytest.mark.parametrize("shape, dims, radius, depth, tile, field", CASES + VEC_CASES + STREAM_CASES)
def test_emulated_kernel_matches_reference(shape, dims, radius, depth, tile, field):
    rng = np.random.default_rng(11)
    x = rng.random(field)
    w = S.random_weights(rng, shape, dims, radius)
    shape3 = (1,) * (3 - dims) + field
    launch = P.cc_launch(P.Stencil("emulated", shape, dims, radius, depth), depth, tile=tile)
    grid, after = launch.grid(shape3, sms=3, blocks_per_sm=1)
    binary = emulated.build(launch.source, launch.macros, seg_arg=bool(after))
    ref = S.reference(x, w, depth)
    for reverse in (False, True):
        out = emulated.run(binary, x, w, grid, launch.threads, launch.smem, after[0] if after else 0, reverse)
        np.testing.assert_allclose(out, ref, rtol=0, atol=S.TOL, err_msg=f"{tile['kernel']} reverse={reverse}")


def test_emulation_catches_a_missing_wait(monkeypatch):
    """A kernel that reads its input ring before the copies landed (one chunk too few waited for) fails."""
    text = emulated.source_text("stencil_tb2.cu").replace("async_wait<PF - 1>()", "async_wait<PF>()")
    monkeypatch.setattr(emulated, "source_text", lambda source: text)
    shape, dims, radius, depth, tile, field = CASES[0]
    x = np.random.default_rng(12).random(field)
    w = S.random_weights(np.random.default_rng(13), shape, dims, radius)
    launch = P.cc_launch(P.Stencil("emulated", shape, dims, radius, depth), depth, tile=tile)
    grid, after = launch.grid((1, *field), sms=3, blocks_per_sm=1)
    out = emulated.run(emulated.build(launch.source, launch.macros, True), x, w, grid, launch.threads, launch.smem,
                       after[0], False)
    assert not np.allclose(out, S.reference(x, w, depth), atol=S.TOL, equal_nan=False)


def test_emulation_catches_a_shared_memory_overrun():
    """A launch given less shared memory than its kernel uses (one input plane of stencil_tb3's ring
    short) stops: the emulator's guard past the launch's bytes was written."""
    shape, dims, radius, depth, tile, field = next(c for c in VEC_CASES if c[4].get("PF") == 3)
    x = np.random.default_rng(14).random(field)
    w = S.random_weights(np.random.default_rng(15), shape, dims, radius)
    launch = P.cc_launch(P.Stencil("emulated", shape, dims, radius, depth), depth, tile=tile)
    grid, after = launch.grid(field, sms=3, blocks_per_sm=1)
    plane = 8 * (tile["BX"] + 2 * depth * radius + 2) * (tile["BY"] + 2 * depth * radius)
    with pytest.raises(subprocess.CalledProcessError) as err:
        emulated.run(emulated.build(launch.source, launch.macros, False), x, w, grid, launch.threads,
                     launch.smem - plane, 0, False)
    assert b"wrote past" in err.value.stderr


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("shape, dims, radius, depth, tile, field",
                         CASES[::2] + [CASES[-1]] + VEC_CASES + STREAM_CASES)
def test_emulated_kernel_in_fp32_and_fp16_within_the_bound(precision, shape, dims, radius, depth, tile, field):
    """The same sources built with ELEM 4 and 2 (stored in fp32 / fp16 / bf16 with BF16 1, summed in fp32): within the
    derived bound of the float64 reference of the same rounded input and weights, races and waits
    checked as in fp64; and the bound is tight enough that a mirrored weight array fails it."""
    rng = np.random.default_rng(21)
    x = quantize(rng.random(field), precision)
    w = S.random_weights(rng, shape, dims, radius, precision)
    st = P.Stencil("emulated", shape, dims, radius, depth)
    launch = P.cc_launch(st, depth, tile=tile, elem=fmt(precision).bytes)
    assert launch.macros["ELEM"] == fmt(precision).bytes
    grid, after = launch.grid((1,) * (3 - dims) + field, sms=3, blocks_per_sm=1)
    binary = emulated.build(launch.source, {**launch.macros, **P.format_macros(precision)}, seg_arg=bool(after))
    ref = S.reference(x, w, depth)
    tol = S.tolerance("cc_tb", st, precision, depth, w, ref, ref, float(decode(x, precision).max()))
    for reverse in (False, True):
        out = emulated.run(binary, x, w, grid, launch.threads, launch.smem, after[0] if after else 0, reverse)
        assert out.dtype == fmt(precision).dtype
        measure.check(decode(out, precision), ref, tol, f"{tile['kernel']} {precision} reverse={reverse}")
    # bf16's bound (2^-8 a step) is wider than mirrored weights' effect: there, weights 2 tol too large
    bad = w[::-1].copy() if fmt(precision).u < 2**-8 else w * (1 + 2 * tol)
    mirrored = emulated.run(binary, x, bad, grid, launch.threads, launch.smem, after[0] if after else 0, False)
    with pytest.raises(measure.CheckError):
        measure.check(decode(mirrored, precision), ref, tol, "mirrored weights")
