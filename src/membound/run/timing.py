"""The one place that times kernels.

Policy (as BabelStream): warm-up launches are excluded; each timed launch is measured on its own
(CUDA events on a GPU, perf_counter on the CPU); min, median, max and the coefficient of
variation are kept (measure.stats). Short kernels (under SHORT_S on the device) are then timed again
without the launch overhead, as a CUDA graph of many launches over the same resident data
(`time_kernel`); their per-launch median stays in the column t_launch_median_s.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np


def warm_up(run: Callable[[], object], calls: int, seconds: float = 0.0,
            sync: Callable[[], object] = lambda: None) -> None:
    """Call `run` `calls` times, then on until `seconds` of wall time have passed since the first call
    (`sync`, the device's, before each look at the clock). Seconds let a GPU under its power limit settle
    at the clock it sustains before the timed calls (docs/kernels_stencil.md, "The H200's 700 W limit")."""
    start = time.perf_counter()
    for _ in range(calls):
        run()
    while seconds > 0:
        sync()
        if time.perf_counter() - start >= seconds:
            return
        run()


def time_cpu(run: Callable[[], object], warmup: int, reps: int, warmup_s: float = 0.0) -> list[float]:
    """Per-call wall times of `run` on the host, after `warmup` untimed calls and `warmup_s` seconds."""
    warm_up(run, warmup, warmup_s)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def time_gpu(run: Callable[[], object], warmup: int, reps: int, warmup_s: float = 0.0) -> list[float]:
    """Per-launch device times of `run` (CUDA events around each call), after `warmup` calls and
    `warmup_s` seconds (warm_up)."""
    import cupy as cp

    warm_up(run, warmup, warmup_s, cp.cuda.Device().synchronize)
    cp.cuda.Device().synchronize()
    events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    for start, stop in events:
        start.record()
        run()
        stop.record()
    events[-1][1].synchronize()
    return [cp.cuda.get_elapsed_time(a, b) / 1e3 for a, b in events]


SHORT_S = 50e-6          # a kernel shorter than this on the device is timed as a CUDA graph
PROBE_BELOW_S = 1e-3     # a launch timed alone below this is probed in a graph for its device time
PROBE_LAUNCHES = 8
GRAPH_SAMPLE_S = 2e-3    # device time aimed at per graph replay (one timed sample)
GRAPH_LAUNCHES = (10, 1000)


@dataclass
class Timing:
    seconds: list[float]   # per-launch times of the timed samples
    launch_median: float   # median of launches timed one by one
    note: str              # how the samples were taken, when not one launch each


def time_kernel(run: Callable[[], object], backend: str, warmup: int, reps: int, short: bool = True,
                warmup_s: float = 0.0) -> Timing:
    """Per-launch times of `run` after `warmup` calls and `warmup_s` seconds of them (warm_up): on the
    CPU per call; on a GPU per launch with CUDA events, and, for
    a kernel shorter than SHORT_S on the device (when `short`), `reps` replays of a CUDA graph of many
    launches over the same buffers, divided by the launch count (falling back to as many launches
    between two events when the graph cannot be captured). Launch overhead then stays outside the
    figure, and the data stays resident in the caches as in a real repeated use. A launch timed alone
    includes the host's time to enqueue it once the GPU waits for it (a busy CPU: 27 -> 79 us, H100,
    fp32 SCALE at 2^23), so one below PROBE_BELOW_S is first timed in a small graph (the fastest of 3
    replays), and that decides."""
    if backend == "cpu":
        seconds = time_cpu(run, warmup, reps, warmup_s)
        return Timing(seconds, float(np.median(seconds)), "")
    seconds = time_gpu(run, warmup, reps, warmup_s)
    launch = float(np.median(seconds))
    if not short or launch >= PROBE_BELOW_S:
        return Timing(seconds, launch, "")
    device = launch if launch < SHORT_S else min(time_replayed(run, PROBE_LAUNCHES, 3)[0])
    if device >= SHORT_S:
        return Timing(seconds, launch, "")
    batch = int(np.clip(GRAPH_SAMPLE_S // device, *GRAPH_LAUNCHES))
    seconds, how = time_replayed(run, batch, reps)
    alone = f"{launch * 1e6:.1f} us per launch timed alone" + (
        f", {device * 1e6:.1f} us in a graph of {PROBE_LAUNCHES}" if device != launch else "")
    return Timing(seconds, launch, f"short kernel ({alone}, in t_launch_median_s): times are per launch of "
                                   f"{how}, {reps} samples, data resident")


def time_replayed(run: Callable[[], object], batch: int, reps: int) -> tuple[list[float], str]:
    """Per-launch times of `reps` samples of `batch` launches of `run` in a CUDA graph, or, where it
    cannot be captured, back to back between two events; and how they were taken."""
    try:
        return time_graph(run, batch, reps), f"a CUDA graph of {batch} launches"
    except Exception as err:  # noqa: BLE001 - any capture failure: time without the graph, say so
        return (time_batched(run, batch, reps),
                f"{batch} back-to-back launches between two events (no CUDA graph: {type(err).__name__})")


def time_graph(run: Callable[[], object], batch: int, reps: int) -> list[float]:
    """Per-launch device times of `reps` replays of a CUDA graph capturing `batch` calls of `run` on
    the current (non-default) stream, after one untimed replay."""
    import cupy as cp

    stream = cp.cuda.get_current_stream()
    stream.begin_capture()
    try:
        for _ in range(batch):
            run()
    finally:
        graph = stream.end_capture()
    graph.launch(stream)
    events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    for start, stop in events:
        start.record(stream)
        graph.launch(stream)
        stop.record(stream)
    events[-1][1].synchronize()
    return [cp.cuda.get_elapsed_time(a, b) / 1e3 / batch for a, b in events]


def time_batched(run: Callable[[], object], batch: int, reps: int) -> list[float]:
    """Per-launch device times of `reps` samples of `batch` calls of `run` between two events."""
    import cupy as cp

    events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(reps)]
    for start, stop in events:
        start.record()
        for _ in range(batch):
            run()
        stop.record()
    events[-1][1].synchronize()
    return [cp.cuda.get_elapsed_time(a, b) / 1e3 / batch for a, b in events]
