"""Run a CUDA-core stencil kernel's own source on the CPU (tests/emulated_cuda.h, compiled with g++):
its index logic, ring slots, cp.async waits and barriers are checked without a GPU."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from membound.kernels import source_text  # noqa: F401 (tests patch it)

HEADER = Path(__file__).with_name("emulated_cuda.h")
CACHE = Path(tempfile.gettempdir()) / "membound-emulated"
DRIVER = r"""
#include <cstdio>
int main() {
  int a[11];
  if (fread(a, sizeof(int), 11, stdin) != 11) return 1;
  const int nz = a[0], ny = a[1], nx = a[2], nw = a[9];
  Weights wts;
  std::vector<double> in((size_t)nz * ny * nx), out(in.size(), std::numeric_limits<double>::quiet_NaN());
  if (nw != NW || fread(wts.w, 8, NW, stdin) != NW || fread(in.data(), 8, in.size(), stdin) != in.size()) return 2;
  const int seg = a[8];
  (void)seg;
  emu::launch({(unsigned)a[3], (unsigned)a[4], (unsigned)a[5]}, {(unsigned)a[6], 1, 1}, a[7], a[10],
              [&] { KERNEL(in.data(), out.data(), wts, nz, ny, nx EXTRA); });
  fwrite(out.data(), 8, out.size(), stdout);
}
"""


def available() -> bool:
    return shutil.which("g++") is not None


def build(source: str, macros: dict, seg_arg: bool) -> Path:
    """The emulator binary of SOURCES/<source> with `macros` (cached by its text)."""
    kernel = source.removesuffix(".cu")
    text = source_text(source).replace("extern __shared__ double smem[];", "double* smem = emu::shared_mem;")
    text = re.sub(r"extern __shared__ double (\w+)\[\];", r"double* \1 = emu::shared_mem;", text)
    defines = "".join(f"#define {k} {v}\n" for k, v in sorted(macros.items()))
    code = (f'{defines}#include "{HEADER}"\n{text}\n#define KERNEL {kernel}\n#define EXTRA {", seg" if seg_arg else ""}\n'
            + DRIVER)
    CACHE.mkdir(exist_ok=True)
    binary = CACHE / hashlib.sha256((code + HEADER.read_text()).encode()).hexdigest()[:16]
    if not binary.exists():
        src = binary.with_suffix(".cpp")
        src.write_text(code)
        subprocess.run(["g++", "-std=c++17", "-O1", "-w", "-o", str(binary), str(src)], check=True)
    return binary


def run(binary: Path, x: np.ndarray, w: np.ndarray, grid: tuple, threads: int, smem: int, seg: int,
        reverse: bool) -> np.ndarray:
    """One launch on field x (2D or 3D) with weights w; the output field (NaN where not written)."""
    shape3 = (1,) * (3 - x.ndim) + x.shape
    header = np.array([*shape3, *grid, threads, smem, seg, w.size, int(reverse)], dtype=np.int32)
    data = header.tobytes() + np.ascontiguousarray(w, dtype=np.float64).tobytes() + x.astype(np.float64).tobytes()
    done = subprocess.run([str(binary)], input=data, capture_output=True, check=True)
    return np.frombuffer(done.stdout, dtype=np.float64).reshape(x.shape)
