"""Summarise tools/sweep_tc.py --profile's ncu CSV (--page raw): per case (kernels after each
`marker` launch), DRAM bytes, time, registers and the main stall reasons, summed or maxed over its kernels."""
import io
import json
import sys

import pandas as pd

METRICS = {"dram__bytes_read.sum": "read_MB", "dram__bytes_write.sum": "write_MB", "gpu__time_duration.sum": "t_us",
           "launch__registers_per_thread": "regs", "sm__warps_active.avg.pct_of_peak_sustained_active": "occ%",
           "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "st_long",
           "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio": "st_short",
           "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio": "st_mio",
           "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "st_bar",
           "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio": "st_math",
           "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": "st_wait"}

text = "".join(line for line in open(sys.argv[1]) if line.startswith('"'))   # ncu's ==PROF== lines dropped
raw = pd.read_csv(io.StringIO(text), thousands=",")
if not str(raw.iloc[0]["ID"]).strip().isdigit():   # the units row
    raw = raw.iloc[1:]
cases = json.load(open(sys.argv[2]))
raw["case"] = (raw["Kernel Name"] == "marker").cumsum() - 1
raw = raw[raw["Kernel Name"] != "marker"]
out = []
for i, g in raw.groupby("case"):
    v = {short: pd.to_numeric(g[m].astype(str).str.replace(",", ""), errors="coerce") for m, short in METRICS.items()
         if m in g}
    row = {"case": cases[i], "kernels": len(g)}
    for k in ("read_MB", "write_MB"):
        row[k] = v[k].sum() / 1e6
    row["t_us"] = v["t_us"].sum() / 1e3
    for k in v:
        if k not in row:
            row[k] = v[k].max() if k == "regs" else (v[k] * v["t_us"]).sum() / v["t_us"].sum()
    out.append(row)
f = pd.DataFrame(out)
f["dram_MB"] = f.read_MB + f.write_MB
print(f.round(2).to_string(index=False))
f.to_csv(sys.argv[3], index=False)
