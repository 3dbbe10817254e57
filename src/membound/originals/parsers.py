"""Each original code's printed output read into the time of its timed work, in the format its own
source prints (docs/originals.md, where each normalisation is argued):

- DASP: the `SpMV_X:` and `cusparse:` lines (ms, GFlop/s, GB/s, GB/s; each the mean of 1000 calls
  after 100 warm-up calls); the time is taken from the GFlop/s figure, 2 nnz / (GFlop/s), since
  the ms figure has four decimals only.
- EBISU: its tab-separated result line (ptx, data size, domain, iterations, depth, ..., runtime in
  ms, GCells/s). It launches ceil(iter / depth) times, depth steps each: the steps are counted so,
  and the points are the interior ones (a halo of the radius on each side), whatever it printed.
- ConvStencil, LoRAStencil: `GStencil/s = ` after an `INFO:` line. They time from a cold start with
  no warm-up: two runs, of L and 2L launches, and the difference is the time of L launches.
  LoRAStencil's box2d3r counts 3 steps per launch of a 1-step kernel (codes.LAUNCH_STEPS).
- Brick (bricklib weak/cuda): the brick section (`Bri:`); the time per step is its kernel time
  `calc` (its `perf` also counts the host round trip of the ghost exchange).
- BabelStream: the `Mul` row of its CSV (--csv); its average time (it prints min, max and average,
  the first run not counted).

A code's own correctness check, where it has one, is read too: a failed check raises CheckFailed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from membound.originals.codes import LAUNCH_STEPS, Problem, shape_name

TOLERANCE_EBISU = 1e-5   # its driver's TOLERANCE on the RMS error against its CPU reference


class ParseError(ValueError):
    """The output lacks what the code prints (another code, another version, or a crash)."""


class CheckFailed(ValueError):
    """The code's own correctness check failed: no row counts."""


@dataclass
class Measured:
    seconds: float               # the timed work: a stencil's `steps` steps, one SpMV or SCALE call
    checked: bool | None         # True: its own check passed; None: it has none here (`check` says why)
    check: str
    printed: str                 # the code's own figure, as printed
    normalised: str              # what was read and how
    t_min: float | None = None
    t_max: float | None = None
    steps: int = 0               # stencils: the steps `seconds` covers
    depth: int = 0
    points: int = 0              # stencils: the points updated per step
    warmup: int | None = None
    reps: int | None = None      # timed calls or runs behind `seconds`
    precision: str = "fp64"


def _search(pattern: str, text: str, what: str, code: str, case: str) -> re.Match:
    found = re.search(pattern, text, re.MULTILINE)
    if found is None:
        raise ParseError(f"{code} {case}: no {what} in its output (is the executable that code, run as documented?)")
    return found


def dasp(outs: list[str], p: Problem, nnz: int) -> list[Measured]:
    """DASP's two rows: its own SpMV (SpMV_X) and cuSPARSE CSR timed by its driver."""
    out = outs[0]
    if "please check your code" in out:
        raise CheckFailed(f"DASP {p.case}: its check against cuSPARSE failed ('please check your code')")
    passed = "compute succeed" in out
    check = ("DASP's verify_new against cuSPARSE: passed" if passed else
             "DASP's driver runs no check (verify_new is commented out in main_f64.cu)")
    rows = []
    for label in ("SpMV_X", "cusparse"):
        found = _search(rf"^{label}:\s*([\d.]+) ms,\s*([\d.]+) G[Ff]lop/s", out, f"'{label}: ... ms, ... GFlop/s' line",
                        "DASP", p.case)
        gflops = float(found[2])
        if not gflops > 0:
            raise ParseError(f"DASP {p.case}: {label} printed {gflops} GFlop/s")
        how = "mean of 1000 calls after 100 warm-up calls; time = 2 nnz / its GFlop/s (its ms has 4 decimals)"
        if label == "SpMV_X":
            how += "; its y stays in its sorted row order, not A x's"
        rows.append(Measured(2 * nnz / (gflops * 1e9), passed or None, check,
                             f"{label}: {found[1]} ms, {found[2]} GFlop/s", how, warmup=100, reps=1000))
    return rows


def ebisu(outs: list[str], p: Problem) -> list[Measured]:
    """EBISU's result line; the interior points times the steps of its ceil(iter / depth) launches."""
    out = outs[0]
    line = _search(r"^.*\t<\d+,\d+,\d+>\t.*$", out, "tab-separated result line", "EBISU", p.case)[0]
    f = line.strip().split("\t")
    dims = next(i for i, v in enumerate(f) if v.startswith("<")) - 6   # 2D: field 8, 3D: field 9
    printed = tuple(int(v) for v in f[2:2 + dims])[::-1]
    if printed != p.domain:
        raise ParseError(f"EBISU {p.case}: it ran {'x'.join(map(str, printed))}, not {'x'.join(map(str, p.domain))} "
                         f"(a {dims}D executable for a {p.dims}D stencil?)")
    iteration, depth = int(f[2 + dims]), int(f[3 + dims])
    steps = math.ceil(iteration / depth) * depth
    rms = re.search(r"\[Test\] RMS Error : (\S+)", out)
    if rms and not float(rms[1]) < TOLERANCE_EBISU:
        raise CheckFailed(f"EBISU {p.case}: RMS error {rms[1]} against its CPU reference (tolerance {TOLERANCE_EBISU:g})")
    check = (f"EBISU's --check against its CPU reference: RMS error {rms[1]} < {TOLERANCE_EBISU:g}" if rms else
             "EBISU's --check printed no RMS error")
    return [Measured(float(f[-2]) / 1e3, bool(rms) or None, check, f"{f[-2]} ms, {f[-1]} GCells/s",
                     f"{math.ceil(iteration / depth)} launches of {depth} steps; interior points (halo {p.radius}) x "
                     "steps / its ms", steps=steps, depth=depth, reps=1,
                     points=math.prod(n - 2 * p.radius for n in p.domain),
                     precision={"2": "fp64", "1": "fp32"}.get(f[1], f"size {f[1]}"))]


def tc_stencil(code: str, outs: list[str], p: Problem) -> list[Measured]:
    """ConvStencil or LoRAStencil: the time of L launches, the difference of its runs of 2L and L."""
    title = {"convstencil": "ConvStencil", "lorastencil": "LoRAStencil"}[code]
    per_launch, counted = LAUNCH_STEPS[code][shape_name(p)]
    points, seconds, launches, figures = math.prod(p.domain), [], [], []
    for out in outs:
        info = dict(re.findall(r"\b([hmn]|times) = (\d+)", _search(r"^INFO: .*$", out, "INFO line", title, p.case)[0]))
        if tuple(int(info[k]) for k in "hmn"[3 - p.dims:]) != p.domain:
            raise ParseError(f"{title} {p.case}: its INFO line {info} is not the domain {'x'.join(map(str, p.domain))}")
        figure = _search(r"^GStencil/s = ([\d.eE+-]+)", out, "'GStencil/s = ' line", title, p.case)[1]
        launches.append(int(info["times"]))
        figures.append(figure)
        seconds.append(points * launches[-1] * counted / (float(figure) * 1e9))
    if not seconds[1] > seconds[0]:
        raise ParseError(f"{title} {p.case}: {launches[1]} launches took no longer than {launches[0]}; rerun it")
    mismatch = re.search(r"naive = .*, (lora|output) = ", outs[0])
    if mismatch:
        raise CheckFailed(f"{title} {p.case}: its check (CHECK_ERROR) found points that differ from its CPU reference")
    checked = "Comparing naive and" in outs[0]
    check = ("its CHECK_ERROR comparison with its CPU reference: no point differs" if checked else
             f"{title}'s check is compiled out (CHECK_ERROR undefined in its main.cu)")
    return [Measured(seconds[1] - seconds[0], checked or None, check,
                     f"GStencil/s = {figures[0]} ({launches[0]} launches), {figures[1]} ({launches[1]})",
                     f"time of {launches[0]} launches = the run of {launches[1]} minus the run of {launches[0]} "
                     f"(no warm-up: both time a cold start); {per_launch} steps per launch (it counts {counted})",
                     steps=launches[0] * per_launch, depth=per_launch, points=points, reps=1)]


def brick(outs: list[str], p: Problem) -> list[Measured]:
    """Brick's brick section: its kernel time per step (calc) times the problem's steps."""
    out = outs[0]
    if "result mismatch!" in out:
        raise CheckFailed(f"Brick {p.case}: its brick result differs from its array kernel's ('result mismatch!')")
    section = _search(r"^Bri: [\s\S]*", out, "'Bri:' section", "Brick", p.case)[0]
    calc = _search(r"calc \[([^,\]]+), ([^,\]]+), ([^\]]+)\]", section, "'calc [min, avg, max]' line", "Brick", p.case)
    perf = _search(r"perf (\S+) GStencil/s", section, "'perf ... GStencil/s' line", "Brick", p.case)[1]
    low, mean, high = (float(v) * p.steps for v in calc.groups())
    return [Measured(mean, True, "Brick's comparison of its brick result with its array kernel's: no mismatch",
                     f"perf {perf} GStencil/s (Bri)", "its kernel time per step (calc, the mean over its iterations) "
                     "x stencil.steps; its perf also counts the host copies of the ghost exchange",
                     t_min=low, t_max=high, steps=p.steps, depth=1, points=math.prod(p.domain), warmup=1)]


def babelstream(outs: list[str], p: Problem) -> list[Measured]:
    """BabelStream's Mul (SCALE, b = q c) row of its CSV output."""
    found = _search(r"^Mul,(\d+),(\d+),(\d+),([^,]+),([^,]+),([^,]+),([^,\s]+)\s*$", outs[0], "'Mul,...' CSV row",
                    "BabelStream", p.case)
    num_times, n, size = (int(v) for v in found.groups()[:3])
    if n != p.n:
        raise ParseError(f"BabelStream {p.case}: it ran {n} elements, not {p.n}")
    bandwidth, low, high, mean = (float(v) for v in found.groups()[3:])
    return [Measured(mean, True, "BabelStream's validation of a, b and c against their expected values: passed",
                     f"Mul {bandwidth} MB/s (from its minimum time)",
                     "its average time over its runs but the first (it prints minimum, maximum and average)",
                     t_min=low, t_max=high, warmup=1, reps=num_times - 1,
                     precision={8: "fp64", 4: "fp32"}.get(size, f"size {size}"))]


def parse(code: str, outs: list[str], p: Problem, nnz: int = 0) -> list[Measured]:
    """The measurements of one run of `code` (outputs of its commands, in order), one per codes.Side."""
    if code == "dasp":
        return dasp(outs, p, nnz)
    if code in LAUNCH_STEPS:
        return tc_stencil(code, outs, p)
    return {"ebisu": ebisu, "brick": brick, "babelstream": babelstream}[code](outs, p)
