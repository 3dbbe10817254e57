"""Recovery (issue 70): every recipe that README or an error message gives, followed as printed, ends
with a complete and consistent results folder (every raw file present and recorded, raw_check's list
and the manifest matching the disk); and what start-up refuses before any job: reversed ranges, an
`originals` executable that is not a program, a second run on a folder one is writing."""

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
RESULTS = "results/cpu"
# A tiny cpu run (minutes on two cores): one precision, matrix and repetition, small problems.
STENCILS = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["stencil"]["kernels"]
TINY = {"repeats": 1, "matrices": ["dc2"], "precisions": ["fp64"], "scale": {"log2_min": 10, "log2_max": 11},
        "gemv": {"sizes": [64]},
        "stencil": {"domain_2d": [64, 64], "domain_3d": [16, 16, 16],
                    "kernels": {name: {"depths": [spec["depth"]]} for name, spec in STENCILS.items()}}}


def environment(copy: Path) -> dict:
    return {**os.environ, "XDG_CONFIG_HOME": str(copy / ".no-user-profiles"), "PYTHONPATH": str(copy / "src"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def command(*extra: str) -> list[str]:
    """`snakemake --profile cpu all` on the tiny run, as a user types it (with `extra` options)."""
    return [sys.executable, "-m", "snakemake", "all", *extra, "--cores", "2", "--profile", "profiles/cpu",
            "--configfile", "profiles/cpu/membound.yaml", "tiny.yaml"]


def run(copy: Path, *extra: str, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run(command(*extra), cwd=copy, env=environment(copy), capture_output=True, text=True,
                          timeout=timeout)


def said(out: str) -> list[str]:
    """The lines membound printed about a file (raw_check's) or a run."""
    return [line for line in out.splitlines() if line.startswith("membound: ") and " from config/" not in line]


def assert_complete(copy: Path, *extra: str) -> None:
    """Every raw file present, recorded and listed by raw_check, the manifest matching the disk, and
    nothing left to do for the command (with `extra` options)."""
    from membound.run import raw

    results = copy / RESULTS
    csvs = {p.relative_to(copy).as_posix() for p in (results / "raw").rglob("*.csv")
            if "benchmarks" not in p.parts and p.name != "matrices.csv"}
    with open(results / "tables" / "raw_inputs.csv") as fh:
        listed = {row["file"]: row for row in csv.DictReader(fh)}
    assert set(listed) == csvs
    for path, row in listed.items():
        rows = raw.read(copy / path, recorded=True)  # benchmark rows: the cpu profile has no counters
        meta = json.loads(Path(f"{copy / path}.meta.json").read_text())
        assert meta["sha256"] == row["sha256"] == hashlib.sha256((copy / path).read_bytes()).hexdigest(), path
        assert len(rows) == meta["rows"] == int(row["rows"]) > 0, path
    lines = (results / "ae" / "manifest.sha256").read_text().splitlines()
    manifest = dict(reversed(line.split(None, 1)) for line in lines)
    on_disk = {p.relative_to(copy).as_posix() for d in ("raw", "tables", "figures") for p in (results / d).rglob("*")
               if p.is_file()}
    assert on_disk <= set(manifest), sorted(on_disk - set(manifest))[:5]
    for path, digest in manifest.items():
        assert hashlib.sha256((copy / path).read_bytes()).hexdigest() == digest, path
    assert "Nothing to be done" in run(copy, "-n", *extra).stdout


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    """A copy of the checkout after the tiny run's `all`."""
    copy = tmp_path_factory.mktemp("recovery") / "membound"
    skip = shutil.ignore_patterns(".git", ".venv", ".snakemake", "data", "results", "__pycache__", ".pytest_cache")
    shutil.copytree(REPO, copy, ignore=skip)
    (copy / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    done = run(copy)
    assert done.returncode == 0, done.stderr[-3000:]
    assert_complete(copy)
    return copy


def edit_a_value(path: Path) -> None:
    """Change the last row's measured value (still a number: the file stays well-formed)."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    rows[-1]["value"] = str(float(rows[-1]["value"]) * 1.5)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def refusal(copy: Path) -> str:
    """The one line membound printed when `all` stopped (rule raw_check's), failing if it did not stop."""
    refused = run(copy)
    lines = said(refused.stdout + refused.stderr)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr and len(lines) == 1, lines
    return lines[0]


@pytest.mark.slow
def test_raw_checks_fixes_followed_as_printed_complete_the_folder(tiny_run):
    """A changed raw file, then one without its record (a file from another machine): each stops `all`
    at raw_check with one line naming the file and the fix; followed as printed (delete it and run
    `all`; record it on purpose), `all` ends with the folder complete."""
    scale, gemv = (tiny_run / RESULTS / "raw" / f"{f}.csv" for f in ("scale", "gemv"))  # raw_check's order
    edit_a_value(scale)
    edit_a_value(gemv)
    Path(f"{gemv}.meta.json").unlink()
    line = refusal(tiny_run)
    assert line.startswith(f"membound: {RESULTS}/raw/scale.csv: not the file its job wrote")
    assert line.endswith("; delete it and run `all` again (rule bench writes it anew)"), line
    scale.unlink()  # as printed
    record = f"python tools/record_raw.py {RESULTS}/raw/gemv.csv"
    assert refusal(tiny_run) == (
        f"membound: {RESULTS}/raw/gemv.csv: no record gemv.csv.meta.json beside it, so not a file its job wrote "
        f"(one brought from another machine is used once recorded: {record}); delete it and run `all` again "
        "(rule bench writes it anew)")
    recorded = subprocess.run(record.split(), cwd=tiny_run, env=environment(tiny_run), capture_output=True, text=True)
    assert recorded.returncode == 0, recorded.stderr
    again = run(tiny_run)
    assert again.returncode == 0, again.stderr[-3000:]
    assert_complete(tiny_run)


def batch_running(folder: Path) -> bool:
    """True while a benchmark process runs in `folder`."""
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if b"membound.kernels.batch" in (proc / "cmdline").read_bytes() and (proc / "cwd").resolve() == folder:
                return True
        except OSError:
            continue
    return False


@pytest.mark.slow
def test_a_second_run_waits_and_a_killed_run_unlocked_then_rerun_as_printed_completes_the_folder(tiny_run):
    """A rerun (a changed stencil.reps) killed with -9 during the stencil job: meanwhile a second run
    names the first and says to wait (no --unlock); after the kill, Snakemake's text says --unlock, and
    --unlock then the same command complete the folder, stencil.csv included."""
    change = ["--config", "stencil={reps: 40}"]
    first = subprocess.Popen(command(*change), cwd=tiny_run, env=environment(tiny_run),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while not batch_running(tiny_run) and time.time() < deadline:
        time.sleep(0.2)
    assert batch_running(tiny_run), "the stencil job never started"
    second = run(tiny_run, *change)
    out = second.stdout + second.stderr
    assert second.returncode != 0 and "--unlock argument" not in out
    lines = said(out)
    assert len(lines) == 1 and lines[0].startswith(f"membound: another run (pid {first.pid}, started ")
    assert f"is writing {RESULTS}/; wait until it ends" in lines[0]
    first.kill()
    first.wait()
    while batch_running(tiny_run):
        time.sleep(0.5)
    locked = run(tiny_run, *change)
    assert locked.returncode != 0 and "--unlock" in locked.stdout + locked.stderr
    unlocked = run(tiny_run, *change, "--unlock")
    assert unlocked.returncode == 0, unlocked.stderr[-3000:]
    done = run(tiny_run, *change)
    assert done.returncode == 0, done.stderr[-3000:]
    assert_complete(tiny_run, *change)


def dry_run(*config: str, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snakemake", "--profile", "profiles/cpu", "all", "-n", "--config",
                           *config], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "XDG_CONFIG_HOME": str(REPO / ".no-user-profiles")})


@pytest.mark.parametrize("value, message", [
    ("scale={log2_min: 30, log2_max: 10}",
     "scale.log2_min 30 is above scale.log2_max 10, an empty range: set scale.log2_min <= scale.log2_max"),
    ("ncu={scale_log2_min: 28, scale_log2_max: 20}",
     "ncu.scale_log2_min 28 is above ncu.scale_log2_max 20, an empty range: set ncu.scale_log2_min <= "
     "ncu.scale_log2_max"),
])
def test_a_reversed_range_stops_the_run_at_start_naming_the_key_and_the_fix(value, message):
    run = dry_run(value)
    out = run.stdout + run.stderr
    assert run.returncode != 0 and message in out.splitlines() and "Job stats" not in out, out[-2000:]


ELF_AARCH64 = b"\x7fELF\x02\x01\x01" + bytes(9) + (2).to_bytes(2, "little") + (183).to_bytes(2, "little") + bytes(40)


@pytest.mark.parametrize("content, why", [
    (b"echo a text file marked executable\n", "is neither an ELF binary nor a script with a #! line"),
    (b"#!/no/such/interpreter\n", "is a script whose interpreter '/no/such/interpreter' (its #! line) is not here"),
    pytest.param(ELF_AARCH64, "is an ELF binary for another architecture (e_machine 183, not x86_64)",
                 marks=pytest.mark.skipif(os.uname().machine != "x86_64", reason="an aarch64 binary runs here")),
])
def test_an_original_that_is_no_program_of_this_machine_stops_the_run_at_start(tmp_path, content, why):
    program = tmp_path / "spmv_double"
    program.write_bytes(content)
    program.chmod(0o755)
    run = dry_run(f"originals={{dasp: {{executable: {program}}}}}")
    line = f"originals.dasp.executable: {program} {why}"
    out = run.stdout + run.stderr
    assert run.returncode != 0 and any(s.startswith(line) for s in out.splitlines()) and "Job stats" not in out, out


def test_a_run_record_names_a_live_snakemake_of_this_folder_and_never_a_gone_one(tmp_path, monkeypatch):
    from membound.run import runlock

    monkeypatch.chdir(tmp_path)
    assert runlock.refuse_second("results/cpu") == ""  # no record
    stand_in = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "snakemake"])
    while b"snakemake" not in Path(f"/proc/{stand_in.pid}/cmdline").read_bytes():   # until it has started
        assert stand_in.poll() is None
        time.sleep(0.05)
    try:
        monkeypatch.setattr(os, "getpid", lambda: stand_in.pid)
        runlock.hold("results/cpu")
        monkeypatch.undo()
        monkeypatch.chdir(tmp_path)
        line = runlock.refuse_second("results/cpu")
        assert line.startswith(f"membound: another run (pid {stand_in.pid}, started ") and "--unlock argument" not in line
        assert line.endswith("is writing results/cpu/; wait until it ends, then run again (not --unlock: that is only "
                             "for the lock a killed run left)")
        assert runlock.refuse_second("results/h100") == ""  # another folder
    finally:
        stand_in.kill()
        stand_in.wait()
    assert runlock.refuse_second("results/cpu") == ""  # a killed run: Snakemake's own text (--unlock) is right
