"""Every case of a family in one process (membound.kernels.batch): each case checked and measured as
its CLI does, every row in the job's one CSV, none where a case fails."""

import subprocess
import sys

import pandas as pd
import pytest

from membound.kernels import batch
from membound.run import measure

SHARED = ["--backend", "cpu", "--warmup", "0", "--reps", "2", "--rep", "3"]


def stencil(name, shape, domain="24x40"):
    return ["--stencil", name, "--shape", shape, "--dims", "2", "--radius", "1", "--depth", "3", "--domain", domain,
            "--steps", "3"]


def test_split_takes_shared_arguments_then_one_group_per_case():
    assert batch.split(["-a", "1", "--", "-b", "--", "-c", "2", "--"]) == (["-a", "1"], [["-b"], ["-c", "2"]])
    assert batch.split(["-a"]) == (["-a"], [])


def test_every_case_checked_in_one_process_and_one_csv(tmp_path):
    out = tmp_path / "stencil.rep3.csv"
    run = subprocess.run([sys.executable, "-m", "membound.kernels.batch", "stencil", "--out", str(out), *SHARED,
                          "--", *stencil("2d5pt", "star"), "--", *stencil("2d9pt", "box")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    frame = pd.read_csv(out)
    assert list(frame.columns) == measure.ROW_COLUMNS and (frame.rep == 3).all() and (frame.rel_err < 1e-10).all()
    assert frame.problem.tolist() == ["2d5pt"] * 4 + ["2d9pt"] * 4 and frame.host.nunique() == 1


def test_a_bad_case_fails_the_job_naming_it_and_writes_nothing(tmp_path):
    out = tmp_path / "x.csv"
    with pytest.raises(SystemExit, match="--domain"):
        batch.main(["stencil", "--out", str(out), *SHARED, "--", *stencil("2d5pt", "star"),
                    "--", *stencil("2d9pt", "box", domain="24")])
    assert not out.exists()
    with pytest.raises(SystemExit, match="no kernel family 'nosuch'"):
        batch.main(["nosuch", "--out", str(out), "--", "-x"])
    with pytest.raises(SystemExit, match="usage"):
        batch.main(["stencil", *SHARED, "--", *stencil("2d5pt", "star")])
