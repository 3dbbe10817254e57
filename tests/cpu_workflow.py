"""The cpu profile's workflow in a copy of the checkout, for the tests that run it: `run_all` is the
suite's one run of `all` and its HTML report (fixture `cpu_run` of conftest.py, shared by the tests
that only read it); `snakemake` runs further targets in such a copy. No timeout: a loaded machine
only makes a run slower, and a failed one says why."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from test_workflow import copy_checkout

# The cpu profile on one matrix, smaller SCALE sizes and stencil fields: every rule and precision, fewer
# and shorter jobs (its own workload's benchmarks take 3 minutes of CPU time).
WORKLOAD = ["--config", "matrices=[dc2]", "scale={log2_min: 10, log2_max: 18}",
            "stencil={domain_2d: [256, 256], domain_3d: [24, 24, 24]}"]
RESULTS = "results/cpu"
REPORT = f"{RESULTS}/report.html"  # where rule archive takes the report from


def snakemake(copy: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m snakemake *args` in `copy`, its own code imported and no user profile read."""
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "XDG_CONFIG_HOME": str(copy / ".no-user-profiles"),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=copy, env=env, capture_output=True,
                          text=True)


def run_all(dest: Path) -> Path:
    """A copy of the checkout at `dest` (without results/cpu) after the cpu profile's `all` on WORKLOAD
    and its HTML report, REPORT."""
    copy = copy_checkout(dest)
    shutil.rmtree(copy / RESULTS, ignore_errors=True)
    for args in (["all", "--cores", "2"], ["--report", REPORT]):
        run = snakemake(copy, "--profile", "profiles/cpu", *args, *WORKLOAD)
        assert run.returncode == 0, run.stderr[-3000:]
    return copy
