"""Run a stencil kernel's own source on the CPU (tests/emulated_cuda.h, compiled with g++): its index
logic, ring slots, cp.async waits and alignment, barriers and (the sparse tensor-core kernels) each
lane's part of mma.sp are checked without a GPU."""

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
  std::vector<real> in((size_t)nz * ny * nx), out(in.size());
  memset(out.data(), 0xff, out.size() * sizeof(real));   // NaN in every precision
  if (nw != NW || fread(wts.w, sizeof(acc_t), NW, stdin) != NW || fread(in.data(), sizeof(real), in.size(), stdin) != in.size())
    return 2;
  const int seg = a[8];
  (void)seg;
  emu::launch({(unsigned)a[3], (unsigned)a[4], (unsigned)a[5]}, {(unsigned)a[6], 1, 1}, a[7], a[10],
              [&] { KERNEL(in.data(), out.data(), wts, nz, ny, nx EXTRA); });
  fwrite(out.data(), sizeof(real), out.size(), stdout);
}
"""


SP_DRIVER = r"""
#include <cstdio>
int main() {   // stencil_sp / stencil_sp3: the fragment tables beside the field (kernels/stencil_sp.operands)
  int a[11];
  if (fread(a, sizeof(int), 11, stdin) != 11) return 1;
  const int nz = a[0], ny = a[1], nx = a[2], nfrag32 = a[9], noffs = a[10];
  std::vector<uint4> afrag(nfrag32);
  std::vector<unsigned> meta(nfrag32);
  std::vector<int> offs(noffs);
  std::vector<real> in((size_t)nz * ny * nx), out(in.size());
  memset(out.data(), 0xff, out.size() * sizeof(real));
  const size_t n = nfrag32;
  if (fread(afrag.data(), 16, n, stdin) != n || fread(meta.data(), 4, n, stdin) != n ||
      fread(offs.data(), 4, noffs, stdin) != (size_t)noffs || fread(in.data(), sizeof(real), in.size(), stdin) != in.size())
    return 2;
  emu::launch({(unsigned)a[3], (unsigned)a[4], (unsigned)a[5]}, {(unsigned)a[6], 1, 1}, a[7], a[8],
              [&] { KERNEL(in.data(), out.data(), afrag.data(), meta.data(), offs.data(), ARGS); });
  fwrite(out.data(), sizeof(real), out.size(), stdout);
}
"""


def available() -> bool:
    return shutil.which("g++") is not None


def build(source: str, macros: dict, seg_arg: bool = False, kernel: str | None = None) -> Path:
    """The emulator binary of SOURCES/<source> with `macros` (cached by its text); `kernel` (the sparse
    tensor-core kernels' name) takes SP_DRIVER."""
    text = re.sub(r"extern __shared__ (?:__align__\(\d+\) )?([\w ]+?) (\w+)\[\];",
                  r"\1* \2 = reinterpret_cast<\1*>(emu::shared_mem);", source_text(source))
    defines = "".join(f"#define {k} {v}\n" for k, v in sorted(macros.items()))
    if kernel is None:
        tail = f'#define KERNEL {source.removesuffix(".cu")}\n#define EXTRA {", seg" if seg_arg else ""}\n{DRIVER}'
    else:
        args = "nz, ny, nx" if kernel.endswith("3") else "ny, nx"
        tail = f'#define KERNEL {kernel}\n#define ARGS {args}\n{SP_DRIVER}'
    code = f'{defines}#include "{HEADER}"\n{text}\n{tail}'
    CACHE.mkdir(exist_ok=True)
    binary = CACHE / hashlib.sha256((code + HEADER.read_text()).encode()).hexdigest()[:16]
    if not binary.exists():   # built in a folder of its own, then renamed: a concurrent test never runs half a binary
        ub = [] if kernel is None else ["-fsanitize=alignment", "-fno-sanitize-recover=alignment"]   # vector loads
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            src, out = Path(tmp) / "kernel.cpp", Path(tmp) / "kernel"
            src.write_text(code)
            subprocess.run(["g++", "-std=c++17", "-O1", "-w", *ub, "-o", str(out), str(src)], check=True)
            out.replace(binary)
    return binary


def run(binary: Path, x: np.ndarray, w: np.ndarray, grid: tuple, threads: int, smem: int, seg: int,
        reverse: bool) -> np.ndarray:
    """One launch on field x (2D or 3D; its dtype the storage of the binary's ELEM) with weights w; the
    output field (NaN where not written)."""
    shape3 = (1,) * (3 - x.ndim) + x.shape
    header = np.array([*shape3, *grid, threads, smem, seg, w.size, int(reverse)], dtype=np.int32)
    acc = np.float64 if x.dtype == np.float64 else np.float32
    data = header.tobytes() + np.ascontiguousarray(w, dtype=acc).tobytes() + np.ascontiguousarray(x).tobytes()
    done = subprocess.run([str(binary)], input=data, capture_output=True, check=True)
    return np.frombuffer(done.stdout, dtype=x.dtype).reshape(x.shape)


def run_sp(binary: Path, x: np.ndarray, afrag: np.ndarray, meta: np.ndarray, offs: np.ndarray, grid: tuple,
           threads: int, smem: int, reverse: bool) -> np.ndarray:
    """One launch of a sparse tensor-core kernel (build's `kernel`) on field x with its fragment tables;
    the output field (NaN where not written)."""
    shape3 = (1,) * (3 - x.ndim) + x.shape
    header = np.array([*shape3, *grid, threads, smem, int(reverse), len(meta.ravel()), offs.size], dtype=np.int32)
    data = b"".join(np.ascontiguousarray(a).tobytes() for a in (header, afrag.astype(np.uint32), meta.astype(np.uint32),
                                                                 offs.astype(np.int32), x))
    done = subprocess.run([str(binary)], input=data, capture_output=True)
    if done.returncode:
        raise RuntimeError(f"emulated kernel exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return np.frombuffer(done.stdout, dtype=x.dtype).reshape(x.shape)
