"""The original codes: where each lives, the raw rows one run yields (impl, unit, role), the stencils
it can run, and the command lines the workflow gives the executable the user built.

Every command line follows the code's own README or driver (docs/originals.md); the arguments come
from a Problem. Domains are in membound's order, slowest axis first ((y, x) or (z, y, x)); each
command puts them in the order its code reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from membound.originals.rows import ORIGINAL


@dataclass(frozen=True)
class Side:
    """One raw row a run yields: the implementation, the unit the paper compares, the role it plays."""
    impl: str
    unit: str
    role: str


@dataclass(frozen=True)
class Code:
    name: str                # config key under `originals`
    title: str
    kernel: str              # the rows' kernel: spmv | stencil | scale
    per_stencil: bool        # config names one executable per stencil (`executables`), else `executable`
    sides: tuple[Side, ...]  # the rows of one run, in the order its parser returns them
    repo: str
    build: str               # its own build instructions
    dims: tuple[int, ...] = (2, 3)   # stencil dimensions its drivers run


GITHUB = "https://github.com/"
CODES = {c.name: c for c in (
    Code("dasp", "DASP", "spmv", False,
         (Side("dasp" + ORIGINAL, "tensor_core", "DASP"), Side("cusparse_dasp" + ORIGINAL, "cuda_core", "cuSPARSE")),
         GITHUB + "SuperScientificSoftwareLaboratory/DASP",
         GITHUB + "SuperScientificSoftwareLaboratory/DASP#installation"),
    Code("ebisu", "EBISU", "stencil", True, (Side("ebisu" + ORIGINAL, "cuda_core", "EBISU"),),
         GITHUB + "neozhang307/EBISU-ICS23", GITHUB + "neozhang307/EBISU-ICS23/blob/main/2dstencil/README.md"),
    Code("convstencil", "ConvStencil", "stencil", True, (Side("convstencil" + ORIGINAL, "tensor_core", "ConvStencil"),),
         GITHUB + "microsoft/ConvStencil", GITHUB + "microsoft/ConvStencil#compile"),
    Code("lorastencil", "LoRAStencil", "stencil", True, (Side("lorastencil" + ORIGINAL, "tensor_core", "LoRAStencil"),),
         GITHUB + "zondie17/LoRAStencil", GITHUB + "zondie17/LoRAStencil#compile"),
    Code("brick", "Brick", "stencil", True, (Side("brick" + ORIGINAL, "cuda_core", "Brick"),),
         GITHUB + "CtopCsUtahEdu/bricklib", GITHUB + "CtopCsUtahEdu/bricklib#building-and-running", dims=(3,)),
    Code("babelstream", "BabelStream", "scale", False, (Side("babelstream" + ORIGINAL, "cuda_core", "STREAM"),),
         GITHUB + "UoB-HPC/BabelStream", GITHUB + "UoB-HPC/BabelStream#building"),
)}

# ConvStencil and LoRAStencil: per shape argument, (steps one launch computes, steps its GStencil/s
# figure counts per launch). LoRAStencil runs box2d3r with the kernel of box2d1r's three fused steps
# and counts 3, but one launch is one step of the 49-point stencil.
LAUNCH_STEPS = {
    "convstencil": {"star2d1r": (3, 3), "box2d1r": (3, 3), "star2d3r": (1, 1), "box2d3r": (1, 1),
                    "star3d1r": (3, 3), "box3d1r": (3, 3)},
    "lorastencil": {"star2d1r": (3, 3), "box2d1r": (3, 3), "star2d3r": (1, 1), "box2d3r": (1, 3),
                    "star3d1r": (1, 1), "box3d1r": (1, 1)},
}


@dataclass(frozen=True)
class Problem:
    """What one job runs: a stencil (shape, dims, radius, the configured depth, domain, steps), a
    SCALE size (n, timed runs reps) or an SpMV matrix (its name and the Matrix Market file written
    for the code, set by the runner)."""
    case: str
    shape: str = ""
    dims: int = 0
    radius: int = 0
    depth: int = 0
    domain: tuple[int, ...] = ()
    steps: int = 0
    n: int = 0
    reps: int = 0
    matrix: str = ""


def shape_name(p: Problem) -> str:
    """ConvStencil's and LoRAStencil's shape argument, e.g. star2d1r."""
    return f"{p.shape}{p.dims}d{p.radius}r"


def commands(code: str, exe: str, p: Problem) -> list[list[str]]:
    """The command lines of one run of `code` on `p` (ConvStencil and LoRAStencil: two runs, of
    steps/s and 2 steps/s launches, s the steps per launch, whose difference is the timed steps:
    they time from a cold start, with no warm-up)."""
    if code == "dasp":
        return [[exe, p.matrix]]
    if code == "babelstream":  # the classic kernels, Mul among them; the first of num_times is not counted
        return [[exe, "-s", str(p.n), "-n", str(p.reps + 1), "--csv"]]
    if code == "ebisu":        # 2D driver: width_y width_x; 3D: width_x width_y height
        sizes = p.domain if p.dims == 2 else p.domain[::-1]
        return [[exe, *map(str, sizes), f"--iter={p.steps}", "--warmup", "--check"]]
    if code == "brick":        # weak/cuda: -d x,y,z (contiguous axis first)
        return [[exe, "-d", ",".join(map(str, p.domain[::-1]))]]
    launches = p.steps // LAUNCH_STEPS[code][shape_name(p)][0]
    args = [exe, shape_name(p), *map(str, p.domain)]   # 2D: m n (rows, columns); 3D: h m n
    return [[*args, str(launches)], [*args, str(2 * launches)]]


def supports(code: str, shape: str, dims: int, radius: int) -> str:
    """'' where `code` runs that stencil, else why not (for the config check)."""
    c = CODES[code]
    if dims not in c.dims:
        return f"{c.title} runs {' and '.join(f'{d}D' for d in c.dims)} stencils only"
    name = f"{shape}{dims}d{radius}r"
    if code in LAUNCH_STEPS and name not in LAUNCH_STEPS[code]:
        return f"{c.title} has no shape {name} (it has {', '.join(LAUNCH_STEPS[code])})"
    return ""
