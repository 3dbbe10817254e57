"""Developer tool (not a workflow rule): the unblocked stencil kernels' per-call times from a cold start
beside the GPU's clock, power and slowdown reasons, to tell a kernel's own rate from the clock its GPU
holds under the load (docs/kernels_stencil.md, "The H200's 700 W limit under the depth-1 kernels").

    python tools/power_trace.py [--cases 2d13pt:fp64 2d5pt:fp64 ...] [--calls 400] [--idle 3] [--out DIR]

Each case (stencil:precision, `cc_naive` at depth 1 in this GPU's tile, on config/config.yaml's domain,
12 steps a call) is prepared and checked as the workflow checks it, the GPU is left idle for --idle
seconds, then --calls calls are timed one by one with CUDA events while `nvidia-smi` samples the SM
clock, the power and the slowdown reasons every 100 ms. Writes DIR/calls.json and DIR/smi.csv (DIR
defaults to ./out) and prints, per case, the GStencil/s (share of B/(2d)) of calls 1-13 (the workflow's
3 warm-up and 10 timed calls), 14-100 and 101 on, with the clock range and the power-cap samples of
the last window.
"""
import argparse
import json
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
SMI_FIELDS = "timestamp,clocks.sm,power.draw,clocks_event_reasons.active"
SW_POWER_CAP = 0x4        # nvidia-smi's clocks_event_reasons bit: the software power cap
WINDOWS = ((0, 13), (13, 100), (100, None))
STEPS = 12


def parse_smi(text: str) -> pd.DataFrame:
    """`nvidia-smi --query-gpu=SMI_FIELDS --format=csv,noheader` lines as t (s since the epoch), clock_mhz,
    power_w and reasons (int)."""
    rows = [[v.strip() for v in line.split(",")] for line in text.splitlines() if line.strip()]
    frame = pd.DataFrame(rows, columns=["ts", "clock", "power", "reasons"])
    stamps = pd.to_datetime(frame.ts, format="%Y/%m/%d %H:%M:%S.%f")
    return pd.DataFrame({"t": (stamps - pd.Timestamp("1970-01-01")).dt.total_seconds(),
                         "clock_mhz": frame.clock.str.split().str[0].astype(int),
                         "power_w": frame.power.str.split().str[0].astype(float),
                         "reasons": frame.reasons.map(lambda r: int(r, 16))})


def summary(calls: dict, smi: pd.DataFrame, bandwidth: float) -> pd.DataFrame:
    """A row per case of `calls` ({case: {start, ms, points, elem}}): GStencil/s and share of
    B/(2 elem) (B in bytes/s) over the median of each window of calls, and the SM clock range and the
    power-cap samples while the last window ran."""
    rows = []
    for case, c in calls.items():
        ms = np.asarray(c["ms"])
        ends = c["start"] + np.cumsum(ms) / 1e3
        row = {"case": case}
        for lo, hi in WINDOWS:
            rate = c["points"] * STEPS / (np.median(ms[lo:hi]) / 1e3) / 1e9
            label = f"calls {lo + 1}-{hi or len(ms)}"
            row[label] = f"{rate:.1f} ({rate * 1e9 / (bandwidth / (2 * c['elem'])):.1%})"
        last = smi[(smi.t >= ends[WINDOWS[-1][0] - 1]) & (smi.t <= ends[-1])]
        row["SM clock"] = f"{last.clock_mhz.min()}-{last.clock_mhz.max()} MHz" if len(last) else "no sample"
        row["power cap"] = f"{(last.reasons & SW_POWER_CAP > 0).sum()} of {len(last)}"
        rows.append(row)
    return pd.DataFrame(rows)


def trace(cases: list[str], n_calls: int, idle: float) -> dict:
    """Per-call times (ms) of each case after its check and `idle` seconds (see the module's text)."""
    import cupy as cp

    from membound.kernels import harness, stencil as S
    from membound.model.precision import fmt

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["stencil"]
    out, rng = {}, np.random.default_rng(0)
    harness.use_async_pool()
    impl = next(i for i in S.IMPLS if i.name == "cc_naive")
    for case in cases:
        name, precision = case.split(":")
        k = config["kernels"][name]
        st = S.Stencil(name, k["shape"], k["dims"], k["radius"], 1)
        domain = tuple(config["domain_2d"] if st.dims == 2 else config["domain_3d"])
        c = S.prepare(impl, st, domain, STEPS, "cuda", rng, None, precision)
        harness.check(c.output(c.run()), c.reference, c.tol, c.what)
        cp.cuda.Device().synchronize()
        time.sleep(idle)
        events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(n_calls)]
        start = time.time()
        for a, b in events:
            a.record()
            c.run()
            b.record()
        events[-1][1].synchronize()
        out[case] = {"start": start, "ms": [cp.cuda.get_elapsed_time(a, b) for a, b in events],
                     "points": int(np.prod(domain)), "elem": fmt(precision).bytes}
        del c
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["2d5pt:fp64", "2d13pt:fp64", "2d49pt:fp64", "3d27pt:fp64"])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--idle", type=float, default=3.0)
    parser.add_argument("--out", type=Path, default=Path("out"))
    args = parser.parse_args(argv)
    if args.calls <= WINDOWS[-1][0]:
        parser.error(f"--calls {args.calls}: need more than {WINDOWS[-1][0]} (the last window starts there)")
    from membound.kernels import stencil as S
    from membound.run import config

    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "smi.csv", "w") as log:
        smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader", "-lms", "100"],
                               stdout=log)
        try:
            calls = trace(args.cases, args.calls, args.idle)
        finally:
            smi.terminate()
            smi.wait()
    (args.out / "calls.json").write_text(json.dumps(calls))
    gpu = S.device_gpu()
    bandwidth = config.load_gpu(gpu)["memory_bandwidth_TBs"] * 1e12 if gpu else float("nan")
    print(f"{gpu}: B = {bandwidth / 1e12:.2f} TB/s")
    print(summary(calls, parse_smi((args.out / "smi.csv").read_text()), bandwidth).to_markdown(index=False))


if __name__ == "__main__":
    main()
