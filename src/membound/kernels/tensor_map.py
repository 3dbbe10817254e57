"""Tensor maps for the tensor copies (TMA, `cp.async.bulk.tensor`, sm_90+) of stencil_stream with CPY 3:
the driver's cuTensorMapEncodeTiled through ctypes (CuPy does not wrap it). A map describes one array,
so a runner that alternates two output buffers keeps one map per buffer; the kernel reads the map from
global memory (a device copy of its 128 bytes, written before the launch)."""

import ctypes

import numpy as np

UINT8, NONE, L2_256B = 0, 0, 3   # CUtensorMapDataType, Interleave/Swizzle/OOBfill NONE, L2promotion
PANEL = 128                      # bytes of a box row: the kernel's 128-byte panels


def encode(address: int, dim: tuple, strides: tuple, box: tuple) -> np.ndarray:
    """The 128 bytes of a tiled map of a 3D tensor of bytes at `address`: `dim` (innermost first), the
    `strides` of dims 1 and 2 in bytes, boxes of `box`. RuntimeError naming the driver's code."""
    cuda = ctypes.CDLL("libcuda.so.1")
    raw = np.zeros(128 + 64, np.uint8)               # CUtensorMap: 128 bytes, 64-byte aligned
    out = raw[-raw.ctypes.data % 64:][:128]
    u64, u32 = ctypes.c_uint64 * 3, ctypes.c_uint32 * 3
    rc = cuda.cuTensorMapEncodeTiled(
        ctypes.c_void_p(out.ctypes.data), UINT8, ctypes.c_uint32(3), ctypes.c_void_p(address), u64(*dim),
        (ctypes.c_uint64 * 2)(*strides), u32(*box), u32(1, 1, 1), NONE, NONE, L2_256B, NONE)
    if rc:
        raise RuntimeError(f"cuTensorMapEncodeTiled returned {rc} for dim {dim}, strides {strides}, box {box}")
    return out


def stream_map(x, dims: int, rows: int, slices: int):
    """A device copy of the map of field x (a C-ordered CuPy array, 2D or 3D) that stencil_stream's tensor
    copies read: its rows as bytes x rows x slices (2D: x 1 x rows, the slices being rows), boxes of one
    128-byte panel x `rows` x `slices`; None where a row is not whole panels (the kernel copies by cp.async)."""
    import cupy as cp

    row = x.shape[-1] * x.itemsize
    if row % PANEL:
        return None
    if dims == 3:
        dim, strides = (row, x.shape[1], x.shape[0]), (row, row * x.shape[1])
    else:
        dim, strides = (row, 1, x.shape[0]), (row, row)
    return cp.asarray(encode(x.data.ptr, dim, strides, (PANEL, rows, slices)))
