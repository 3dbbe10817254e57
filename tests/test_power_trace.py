"""tools/power_trace.py: the nvidia-smi log it reads and the table it prints (on the CPU)."""

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("power_trace", REPO / "tools" / "power_trace.py")
trace = importlib.util.module_from_spec(spec)
spec.loader.exec_module(trace)

START = 1_796_385_600.0   # 2026-12-04 12:00:00 UTC
SMI = """2026/12/04 12:00:00.000, 1980 MHz, 126.00 W, 0x0000000000000000
2026/12/04 12:00:00.100, 1980 MHz, 210.50 W, 0x0000000000000000
2026/12/04 12:00:00.600, 1740 MHz, 600.00 W, 0x0000000000000004
2026/12/04 12:00:00.700, 1500 MHz, 690.00 W, 0x0000000000000004
2026/12/04 12:00:00.800, 1800 MHz, 700.00 W, 0x0000000000000000
"""


def test_parse_smi_reads_nvidia_smis_csv():
    smi = trace.parse_smi(SMI)
    assert smi.t.iloc[0] == pytest.approx(START) and smi.t.iloc[-1] == pytest.approx(START + 0.8)
    assert list(smi.clock_mhz) == [1980, 1980, 1740, 1500, 1800] and smi.power_w.iloc[1] == 210.5
    assert list(smi.reasons & trace.SW_POWER_CAP > 0) == [False, False, True, True, False]


def test_summary_gives_each_window_its_median_rate_and_the_last_windows_clock_and_caps():
    ms = [4.0] * 13 + [5.0] * 87 + [8.0] * 100            # 0.052 s, 0.435 s, then 0.8 s: ends at START + 1.287
    calls = {"2d13pt:fp64": {"start": START, "ms": ms, "points": 10**8, "elem": 8}}
    row = trace.summary(calls, trace.parse_smi(SMI), bandwidth=4.8e12).iloc[0]
    assert row["calls 1-13"] == "300.0 (100.0%)"          # 1e8 points x 12 steps in 4 ms against B/16 = 300e9
    assert row["calls 14-100"] == "240.0 (80.0%)" and row["calls 101-200"] == "150.0 (50.0%)"
    assert row["SM clock"] == "1500-1800 MHz" and row["power cap"] == "2 of 3"   # the samples from 0.487 s on
