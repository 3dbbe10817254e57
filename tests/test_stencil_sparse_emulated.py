"""The sparse tensor-core kernels' own source (stencil_sp.cu, stencil_sp3.cu) run on the CPU
(tests/emulated.py): the tile's columns and rows, the plane window and its buffers, cp.async waits,
the alignment of the copies and of the 16-byte B loads (g++'s -fsanitize=alignment), and every lane's
fragments of mma.sp against the numpy product of the same operands (stencil_sp.emulate), with the
threads of each barrier interval forward and in reverse. Needs g++."""

import emulated
import numpy as np
import pytest

from membound.kernels.stencil import sp as SP
from membound.kernels.stencil import sp_layout as SPL
from membound.model import sparse24
from membound.model import sparse24_banks as BANKS
from membound.model.geometry import support
from membound.model.precision import decode, fmt, quantize, rounded

pytestmark = [pytest.mark.skipif(not emulated.available(), reason="no g++ here"),
              pytest.mark.slow]  # g++ builds a binary for each case: minutes in all

CASES = [  # (shape, dims, radius, depth, precision, field): 3D over two z blocks (BZ 64), nx even and odd
    ("box", 3, 1, 3, "fp16", (70, 11, 20)),       # PAIR, pairs of halves by 4-byte cp.async
    ("box", 3, 1, 2, "fp16", (70, 11, 19)),       # PAIR, nx odd: element by element
    ("box", 3, 1, 1, "fp16", (66, 9, 20)),
    ("star", 3, 1, 3, "fp16", (70, 11, 20)),      # one plane through registers
    ("box", 3, 1, 3, "fp32", (70, 11, 19)),       # PAIR, 4-byte elements
    ("star", 3, 1, 1, "fp32", (66, 9, 20)),
    ("star", 2, 1, 5, "fp16", (45, 71)),          # XO odd
    ("box", 2, 3, 2, "fp32", (37, 53)),
    ("star", 2, 3, 3, "fp16", (45, 140)),         # 64-row tiles (RF 9), two blocks along x
    ("star", 2, 1, 1, "fp32", (19, 400)),         # blocks inside the field along x (copied without the wrap)
    ("box", 2, 1, 4, "fp16", (21, 390)),
    ("box", 3, 1, 3, "bf16", (70, 11, 20)),       # bf16: the fp16 paths with the bf16 MMA and rounding
    ("star", 2, 1, 5, "bf16", (45, 71)),
]


def _run(shape, dims, radius, depth, precision, field, reverse=False):
    rng = np.random.default_rng(7)
    w = rounded(rng.random((2 * radius + 1,) * dims) * support(shape, dims, radius), precision)
    form = sparse24.transform(shape, dims, radius, depth, precision, w, SPL.LAYOUT)
    macros, smem, afrag, meta, offs = SP.operands(form, dims)
    grid, threads = SP.launch_shape(form, dims, field)
    binary = emulated.build(SPL.source(dims)[0], macros, kernel=SPL.source(dims)[1])
    x = quantize(rng.random(field), precision)
    return emulated.run_sp(binary, x, afrag, meta, offs, grid, threads, smem, reverse), SP.emulate(form, x, 1), form


@pytest.mark.parametrize("shape, dims, radius, depth, precision, field", CASES)
def test_emulated_sparse_kernel_matches_the_product(shape, dims, radius, depth, precision, field):
    """Every output point written and equal to the numpy product up to the order of the fp32 sums (K^(t)
    terms, each at most the accumulator's unit roundoff of the sum: fields and weights nonnegative) and
    the one rounding to storage that may then differ."""
    for reverse in (False, True):
        out, want, form = _run(shape, dims, radius, depth, precision, field, reverse)
        f = fmt(precision)
        rtol = 2 * f.u + form.points * f.tc_acc_u
        assert out.dtype == want.dtype == f.dtype
        np.testing.assert_allclose(decode(out, precision), decode(want, precision), rtol=rtol, err_msg=f"reverse={reverse}")


@pytest.mark.parametrize("through_l1", [2, None])
def test_emulated_2d_fragments_split_between_shared_memory_and_l1(monkeypatch, through_l1):
    """2D: the first NFS fragments from shared memory, the rest through L1 (each one loaded ahead): all
    but two in shared memory, or none; FRAG_SMEM lowered to make the split."""
    form = sparse24.transform("box", 2, 3, 2, "fp32", layout=SPL.LAYOUT)
    nfs = len(form.a) - through_l1 if through_l1 else 0
    monkeypatch.setitem(SPL.FRAG_SMEM, (2, "fp32"), nfs * 32 * 24)   # a lane's 24 bytes a fragment
    assert SPL.module(form, 2)[0]["NFS"] == nfs < len(form.a)
    for reverse in (False, True):
        out, want, form = _run("box", 2, 3, 2, "fp32", (37, 53), reverse)
        rtol = 2 * fmt("fp32").u + form.points * fmt("fp32").tc_acc_u
        np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64), rtol=rtol)


def test_emulation_catches_a_misaligned_pair_copy(monkeypatch):
    """Pairs copied where nx is odd (the check on nx removed) read from 2-byte aligned addresses: stopped."""
    text = emulated.source_text("stencil_sp3.cu")
    assert "XO % 2 == 0 && nx % 2 == 0" in text
    monkeypatch.setattr(emulated, "source_text", lambda source: text.replace("&& nx % 2 == 0", ""))
    with pytest.raises(RuntimeError, match="misaligned"):
        _run("box", 3, 1, 2, "fp16", (66, 9, 19))


def test_emulation_catches_a_misaligned_b_load(monkeypatch):
    """A tile origin XO one column off (the global columns shifted with it) moves every lane's 16-byte
    run off its alignment: stopped."""
    module = SP.module
    monkeypatch.setattr(SP, "module", lambda form, dims: (dict(module(form, dims)[0], XO=BANKS.x_origin(form) + 1),
                                                          module(form, dims)[1]))
    with pytest.raises(RuntimeError, match="misaligned"):
        _run("star", 2, 1, 2, "fp32", (37, 53))
