"""Several cases of a family in one process (membound.kernels.batch): each case's own rows and file."""

import subprocess
import sys

import pandas as pd
import pytest

from membound.run import measure
from membound.kernels import batch

SHARED = ["--backend", "cpu", "--warmup", "0", "--reps", "2", "--rep", "3"]


def stencil(name, shape, out):
    return ["--stencil", name, "--shape", shape, "--dims", "2", "--radius", "1", "--depth", "3", "--domain", "24x40",
            "--steps", "3", "--out", str(out)]


def test_split_takes_shared_arguments_then_one_group_per_case():
    assert batch.split(["-a", "1", "--", "-b", "--", "-c", "2", "--"]) == (["-a", "1"], [["-b"], ["-c", "2"]])
    assert batch.split(["-a"]) == (["-a"], [])


def test_each_case_writes_its_own_checked_rows_in_one_process(tmp_path):
    a, b = tmp_path / "2d5pt.rep3.csv", tmp_path / "2d9pt.rep3.csv"
    run = subprocess.run([sys.executable, "-m", "membound.kernels.batch", "stencil", *SHARED,
                          "--", *stencil("2d5pt", "star", a), "--", *stencil("2d9pt", "box", b)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    for path, name in ((a, "2d5pt"), (b, "2d9pt")):
        frame = pd.read_csv(path)
        assert list(frame.columns) == measure.ROW_COLUMNS
        assert set(frame.problem) == {name} and (frame.rep == 3).all() and (frame.rel_err < 1e-10).all()
    assert len({pd.read_csv(p).host.iloc[0] for p in (a, b)}) == 1


def test_a_bad_case_fails_the_job_naming_it(tmp_path):
    with pytest.raises(SystemExit, match="--domain"):
        batch.main(["stencil", *SHARED, "--", *stencil("2d5pt", "star", tmp_path / "a.csv")[:-4], "--domain", "24",
                    "--steps", "3", "--out", str(tmp_path / "a.csv")])
    with pytest.raises(SystemExit, match="no kernel family 'nosuch'"):
        batch.main(["nosuch", "--", "-x"])
