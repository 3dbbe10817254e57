"""GEMV, the family added through the harness: both implementations per backend against numpy, the
check, the analytical W and Q, and the cpu profile's rules end to end."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from membound import families
from membound.kernels import gemv, harness
from membound.model import equations
from membound.run import measure

REPO = Path(__file__).resolve().parents[1]
SHAPES = [(1, 1), (7, 5), (8, 32), (33, 70), (1000, 517)]


@pytest.mark.parametrize("impl", ["numpy", "numpy_mma"])
@pytest.mark.parametrize("shape", SHAPES)
def test_cpu_impls_match_numpy(impl, shape):
    rng = np.random.default_rng(sum(shape))
    a, x, y = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape[1]), np.full(shape[0], np.nan)
    gemv.cpu_runner(impl, a, x, y)()
    assert measure.rel_err(y, a @ x) <= gemv.TOL


def test_cli_cpu_writes_checked_rows_and_a_wrong_one_fails(tmp_path, monkeypatch):
    out = tmp_path / "gemv.csv"
    gemv.main(["--backend", "cpu", "--sizes", "16", "100", "--warmup", "1", "--reps", "2", "--rep", "2", "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(frame.columns) == measure.ROW_COLUMNS and list(frame.impl) == ["numpy", "numpy_mma"] * 2
    assert (frame.rep == 2).all() and (frame.rel_err <= gemv.TOL).all() and (frame.metric == "GB/s").all()
    row = frame.iloc[-1]
    assert row.value == pytest.approx(8 * (100 * 100 + 200) / row.t_median_s / 1e9)

    monkeypatch.setattr(gemv, "cpu_runner", lambda impl, a, x, y: lambda: y.fill(0.0))
    with pytest.raises(measure.CheckError, match="gemv numpy n=16"):
        gemv.main(["--backend", "cpu", "--sizes", "16", "--warmup", "0", "--reps", "1", "--out", str(tmp_path / "x.csv")])
    assert not (tmp_path / "x.csv").exists()


def test_analytical_w_and_q_are_eq_6_7():
    gpu = {"mma_shape": [8, 8, 4]}
    row = {"kernel": "gemv", "unit": "tensor_core", "rows": 1000, "cols": 1000, "n": 10**6}
    a = families.analytical_row(row, gpu)
    assert (a["W"], a["Q"]) == equations.gemv_wq(1000, 1000) and a["W_exec"] == 8 * a["W"]
    assert a["I"] == pytest.approx(2e6 / (8 * (10**6 + 2000)))


@pytest.mark.slow
def test_cpu_profile_measures_and_plots_gemv(tmp_path):
    copy = tmp_path / "membound"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(".git", ".venv", ".snakemake", "data", "results",
                                                                "__pycache__", ".pytest_cache"))
    target = "results/cpu/figures/gemv.csv"
    run = subprocess.run([sys.executable, "-m", "snakemake", "--profile", "profiles/cpu", "--cores", "2", target],
                         cwd=copy, capture_output=True, text=True, timeout=300,
                         env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "PYTHONPATH": str(copy / "src"),
                              "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert run.returncode == 0, run.stderr[-3000:]
    plotted = pd.read_csv(copy / target)
    assert set(plotted.unit) == {"cuda_core", "tensor_core"} and sorted(plotted.n.unique()) == [64, 256, 1024]
    assert (copy / "results/cpu/figures/gemv.png").stat().st_size > 0


@pytest.mark.gpu
@pytest.mark.parametrize("impl", ["cublas_dgemv", "gemv_tc"])
@pytest.mark.parametrize("shape", SHAPES + [(4097, 4099)])
def test_gpu_impls_match_numpy(impl, shape):
    import cupy as cp

    if reason := harness.skip_reason(next(i for i in gemv.IMPLS if i.name == impl), "cuda"):
        pytest.skip(reason)
    rng = np.random.default_rng(sum(shape))
    a, x = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape[1])
    y = cp.full(shape[0], np.nan)
    runner = gemv.cublas_runner if impl == "cublas_dgemv" else gemv.tc_runner
    runner(cp.asarray(a), cp.asarray(x), y)()
    assert measure.rel_err(y.get(), a @ x) <= gemv.TOL


@pytest.mark.gpu
def test_gpu_cli_rows(tmp_path):
    out = tmp_path / "gemv.csv"
    gemv.main(["--backend", "cuda", "--sizes", "256", "2048", "--warmup", "2", "--reps", "5", "--out", str(out)])
    frame = pd.read_csv(out)
    assert list(frame.impl) == ["cublas_dgemv", "gemv_tc"] * 2 and (frame.rel_err <= gemv.TOL).all()
