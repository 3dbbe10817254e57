"""Run one membound CLI in-process and record where its time goes (for tools/time_breakdown.py).

    python tools/breakdown_probe.py OUT.json MODULE [ARGS...]

MODULE is a module with main(argv): membound.kernels.<family>, membound.kernels.batch or
membound.counters.ncu. The probe times its imports and the CUDA context, then wraps the functions
each phase runs in (by name, where they exist: a renamed one merges its time into 'other') and runs
main(ARGS). Times are exclusive: a phase inside another counts for the inner one only; the device
is synchronized when a phase ends, so that its queued GPU work counts for it. The kernels' timed
calls themselves are not wrapped. BREAKDOWN_T0 (epoch seconds, set by the caller before it started
this process) gives the interpreter's start-up time.
"""

import functools
import importlib
import json
import os
import re
import sys
import time
from collections import Counter, defaultdict
from contextlib import contextmanager

T_ENTER = time.time()
SECONDS, CALLS, STACK = defaultdict(float), Counter(), []
PASSES = re.compile(r'==PROF== Profiling "([^"]+)".*?(\d+) pass(?:es)?')


def _sync():
    cupy = sys.modules.get("cupy")
    if cupy is not None and cupy.cuda.runtime.getDeviceCount():
        cupy.cuda.Device().synchronize()


@contextmanager
def phase(name):
    now = time.perf_counter()
    if STACK:
        SECONDS[STACK[-1][0]] += now - STACK[-1][1]
    STACK.append([name, now])
    CALLS[name] += 1
    try:
        yield
    finally:
        _sync()
        now = time.perf_counter()
        done, since = STACK.pop()
        SECONDS[done] += now - since
        if STACK:
            STACK[-1][1] = now


def wrap(owner, attr, name):
    """Replace owner.attr by a version timed as phase `name` (a function of the call's arguments, or
    a string); nothing if owner lacks it."""
    fn = getattr(owner, attr, None)
    if fn is None or getattr(fn, "_probed", False):
        return

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        with phase(name(*args, **kwargs) if callable(name) else name):
            return fn(*args, **kwargs)

    timed._probed = True
    setattr(owner, attr, timed)


def wrap_ncu(ncu, passes):
    """Time each ncu call by what it does, and keep ncu's passes per profiled kernel from its output."""
    run = ncu._ncu

    def timed(binary, args, what):
        with phase(f"ncu {what.split()[0]}"):
            out = run(binary, args, what)
        passes.extend(PASSES.findall(out.stdout + out.stderr))
        return out

    ncu._ncu = timed


def _imported(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def patch_kernels(family):
    """Wrap the harness, the timing functions, the run info and `family`'s own steps."""
    harness = importlib.import_module("membound.kernels.harness")
    family_mod = importlib.import_module(f"membound.kernels.{family}")
    timing = sys.modules[harness.time_kernel.__module__]
    wrap(harness, "check", "check (compare with the reference)")
    wrap(harness, "write_result", "write rows")
    wrap(getattr(harness, "runinfo", None), "describe", "run info (nvidia-smi, device properties)")
    for attr, name in (("time_graph", "timed: CUDA graph replays"), ("time_batched", "timed: batched launches"),
                       ("time_cpu", "timed: CPU")):
        wrap(timing, attr, name)
    original = timing.time_gpu

    def time_gpu(run, warmup, reps):
        with phase("warm-up launches"):
            for _ in range(warmup):
                run()
        with phase("timed: launches one by one"):
            return original(run, 0, reps)

    timing.time_gpu = time_gpu
    for attr, name in (("load_matrix", "load matrix file"), ("plan", "plan (tensor-core SpMV)"),
                       ("_device_csr", "upload matrix"), ("reference", "reference (stencil)"),
                       ("sampled_reference", "reference (stencil)"), ("_check_cuda", "check on the small domain")):
        wrap(family_mod, attr, name)
    wrap(_imported("membound.kernels.batch"), "_free_device_memory", "free device memory between cases")
    run_jobs = family_mod.run_jobs

    def timed_jobs(backend, jobs, *args, **kwargs):
        def timed_prepare(prepare):
            def inner():
                with phase("prepare (data, upload, reference)"):
                    case = prepare()
                output = case.output
                case.output = lambda result: _timed_output(output, result)
                return case
            return inner
        return run_jobs(backend, [(impl, timed_prepare(p)) for impl, p in jobs], *args, **kwargs)

    family_mod.run_jobs = timed_jobs


def _timed_output(output, result):
    with phase("check (device run, copy to host)"):
        return output(result)


def patch_compiler():
    """CuPy's kernel cache: NVRTC compiles, the cache key's empty-file compile, lookup and module load."""
    compiler = _imported("cupy.cuda.compiler")
    wrap(_imported("cupy._core.core"), "compile_with_cache", "compile: cache lookup and module load")  # RawModule's
    wrap(compiler, "compile_with_cache", "compile: cache lookup and module load")
    wrap(compiler, "_compile_module_with_cache", "compile: cache lookup and module load")
    wrap(compiler, "compile_using_nvrtc", "compile: NVRTC (cache miss)")
    wrap(compiler, "_preprocess", "compile: cache key (NVRTC of an empty file)")


def main():
    out, module_name, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    counters = module_name.endswith("counters.ncu")
    report = {"start": T_ENTER - float(os.environ.get("BREAKDOWN_T0", T_ENTER)), "passes": []}
    for name, modules in (("import numpy", ["numpy"]), ("import scipy", ["scipy.sparse", "scipy.ndimage"]),
                          ("import pandas", ["pandas"]), ("import cupy", [] if counters else ["cupy"])):
        with phase(name):
            for m in modules:
                _imported(m)
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        with phase("CUDA context"):
            cupy.cuda.runtime.getDeviceCount()
            cupy.zeros(1)
    family = None if counters else args[0] if module_name.endswith(".batch") else module_name.rsplit(".", 1)[1]
    with phase("import membound"):
        module = importlib.import_module(module_name)
        if family:
            importlib.import_module(f"membound.kernels.{family}")
    if counters:
        wrap(module, "summarize", "parse ncu CSV")
        wrap_ncu(module, report["passes"])
    else:
        patch_kernels(family)
        patch_compiler()
    code = 0
    t_main = time.perf_counter()
    try:
        module.main(args)
    except SystemExit as err:
        code = err.code if isinstance(err.code, int) else int(err.code is not None)
        if isinstance(err.code, str):
            print(err.code, file=sys.stderr)
    main_s = time.perf_counter() - t_main
    inside = sum(s for n, s in SECONDS.items() if not n.startswith(("import", "CUDA context")))
    SECONDS["other (in main)"] += max(main_s - inside, 0.0)
    report.update(seconds=dict(SECONDS), calls=dict(CALLS), end_epoch=time.time(), code=code)
    with open(out, "w") as f:
        json.dump(report, f)
    sys.exit(code)


if __name__ == "__main__":
    main()
