"""Fake executables of the original codes for tests without a GPU: small Python scripts that read
their arguments as each code does and print what its source prints (docs/originals.md), with times
made from a fixed rate, so that a test knows what the parsers must find. Written by the tests into
a temporary folder; none is any code's output.

RATE: GStencil/s (stencils, counting each code's own steps and points), GFlop/s (DASP; cuSPARSE at
half of it) and GB/s (BabelStream's Mul).
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

RATE = 100.0
START_S = 1e-5   # ConvStencil and LoRAStencil: the cold start their single timed region includes

COMMON = f"""import math, sys
RATE, START_S = {RATE}, {START_S}
argv = sys.argv[1:]
"""

TC = """
shape, *sizes, times = argv
sizes, times = [int(v) for v in sizes], int(times)
per_launch = PER_LAUNCH
counted = COUNTED
secs = START_S + math.prod(sizes) * times * per_launch / (RATE * 1e9)
names = "hmn"[3 - len(sizes):]
print(f"INFO: shape = {shape}, " + ", ".join(f"{k} = {v}" for k, v in zip(names, sizes)) + f", times = {times}")
print(f"TITLE: \\nTime = {int(secs * 1e3)}[ms]")
print(f"GStencil/s = {math.prod(sizes) * times * counted / secs / 1e9:f}")
"""

FAKES = {
    # DASP: ./spmv_double matrix.mtx; reads the Matrix Market size line; appends to data/ as DASP does
    "dasp": """
path = argv[0]
with open(path) as f:
    line = next(l for l in f if not l.startswith("%"))
rows, cols, nnz = (int(v) for v in line.split())
open("data/spmv_f64_record.csv", "a").write(path + "\\n")
print(f"\\n==={path}===\\n\\nINIT DONE")
for label, rate in (("cusparse", RATE / 2), ("SpMV_X", RATE)):
    ms = 2 * nnz / (rate * 1e6)
    print(f"{label}:{ms:8.4f} ms, {rate:8.4f} {'Gflop' if label == 'cusparse' else 'GFlop'}/s, {1.0:9.4f} GB/s, {1.0:9.4f} GB/s")
""",
    # EBISU: 2D: y x --iter=N [--warmup] [--check]; 3D: x y z ...; depth 3 compiled in, radius 1
    "ebisu": """
sizes = [int(a) for a in argv if not a.startswith("--")]
it = int(next(a for a in argv if a.startswith("--iter=")).split("=")[1])
depth, halo = 3, 1
domain = [sizes[1], sizes[0]] if len(sizes) == 2 else sizes          # x, y(, z)
steps = math.ceil(it / depth) * depth
interior = math.prod(n - 2 * halo for n in domain)
ms = interior * steps / (RATE * 1e9) * 1e3
mid = ["256", "232", "<12,33,1>"] if len(sizes) == 2 else ["256", "4", "<12,11,2>"]   # bdim, tiling or ILP, grid
fields = ["900", "2", *map(str, domain), str(it), str(depth), *mid, "1.000/2", "98.008/227.000", "16/15",
          f"{ms:f}", f"{interior * it / ms / 1e6:f}"]
print("\\t".join(fields) + "\\t")
if "--check" in argv:
    print("[Test] Max Error : 0.000000e+00 @ (,0,0)")
    print("[Test] RMS Error : 0.000000e+00")
""",
    # ConvStencil / LoRAStencil: shape m n times (2D) or shape h m n times (3D); no warm-up; PER_LAUNCH steps
    # per launch, COUNTED steps per launch in its GStencil/s (LoRAStencil's box2d3r: 1 and 3)
    "convstencil": TC.replace("TITLE", "ConvStencil({len(sizes)}D)").replace("PER_LAUNCH", '3 if "1r" in shape else 1')
                     .replace("COUNTED", "per_launch"),
    "lorastencil": TC.replace("TITLE", "LoRAStencil({len(sizes)}D {shape})")
                     .replace("PER_LAUNCH", '3 if shape in ("star2d1r", "box2d1r") else 1')
                     .replace("COUNTED", '3 if shape in ("star2d1r", "box2d1r", "box2d3r") else 1'),
    # Brick weak/cuda: -d x,y,z; the array section, then the brick section
    "brick": """
points = math.prod(int(v) for v in argv[argv.index("-d") + 1].split(","))
step = points / (RATE * 1e9)
print("d3pt7 MPI decomp")
for name, calc in (("Arr", step * 1.1), ("Bri", step)):
    total = calc + 0.001
    print(f"{name}: {total}")
    print(f"calc [{calc}, {calc}, {calc}] (\\u03c3: 0)")
    print("move [0.001, 0.001, 0.001] (\\u03c3: 0)")
    print(f"perf {points / total / 1e9} GStencil/s")
    print()
""",
    # BabelStream: -s N -n NUM --csv; the classic kernels' CSV
    "babelstream": """
n, num = int(argv[argv.index("-s") + 1]), int(argv[argv.index("-n") + 1])
print("function,num_times,n_elements,sizeof,max_mbytes_per_sec,min_runtime,max_runtime,avg_runtime")
for label, weight in (("Copy", 2), ("Mul", 2), ("Add", 3), ("Triad", 3), ("Dot", 2)):
    t = weight * 8 * n / (RATE * 1e9)
    print(f"{label},{num},{n},8,{weight * 8 * n / (0.9 * t) / 1e6},{0.9 * t},{1.2 * t},{t}")
""",
}


def write(folder: Path, code: str, body: str | None = None) -> str:
    """A fake executable of `code` (or one running `body`) in `folder`; its path."""
    path = Path(folder) / f"fake_{code}"
    path.write_text(f"#!{sys.executable}\n{COMMON}{body if body is not None else FAKES[code]}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)
