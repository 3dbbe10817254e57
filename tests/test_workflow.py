"""The workflow as a user drives it: dry runs for every profile, lint, start-up errors."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from report_data import report_data

from membound.run import config, detect

REPO = Path(__file__).resolve().parents[1]
OVERLAYS = {"slurm"}  # profiles that go after a device profile (tests/test_slurm.py), not device profiles
WORKFLOW_PROFILE = REPO / "profiles" / "default"  # Snakemake's workflow profile, read on every run
PROFILES = sorted(p.name for p in (REPO / "profiles").iterdir()
                  if p.is_dir() and p.name not in OVERLAYS and p != WORKFLOW_PROFILE)
FIGURES = ["fig2_roofline", "fig3_4_breakdown", "fig6_scale", "fig7_spmv", "fig8_stencil", "fusion", "classification"]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]

pytestmark = pytest.mark.slow  # Snakemake started anew in each test, seconds at least


def snakemake(*args, cwd=REPO, env=None):
    # no timeout: a full reference `all` (reference_run) on a busy machine takes minutes, and ends
    return subprocess.run([*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "XDG_CONFIG_HOME": str(REPO / ".no-user-profiles"), **(env or {})})


def test_every_gpu_has_a_profile():
    specs = {p.stem for p in (REPO / "config" / "gpus").glob("*.yaml")}
    assert specs | {"reference"} == set(PROFILES)


@pytest.mark.parametrize("profile", PROFILES)
def test_dry_run_of_all_succeeds_for_every_profile(profile):
    run = snakemake("--profile", f"profiles/{profile}", "all", "-n", "--forceall")
    assert run.returncode == 0, run.stderr[-3000:]
    target = "results/reference/h100" if profile == "reference" else f"results/{profile}"
    for product in ("tables/bounds.csv", "tables/table3_stencils.csv", "tables/bandwidth_stencils.csv", "claims.json",
                    "ae/appendix.md", "ae/manifest.sha256"):
        assert f"{target}/{product}" in run.stdout + run.stderr, product
    for figure in FIGURES:
        for ext in ("pdf", "png", "csv"):
            assert f"{target}/figures/{figure}.{ext}" in run.stdout + run.stderr


def test_a_bare_snakemake_runs_this_machines_profile():
    run = snakemake("-n")
    out = run.stdout + run.stderr
    mine = detect.main()   # cpu where there is no GPU; else the profile that describes it, as make run takes
    if mine not in config.profiles():   # a GPU that no profile describes: one line, the profile to write
        assert run.returncode != 0 and "no profile describes this" in out and f"profiles/{mine} " in out
        return
    assert run.returncode == 0, out[-3000:]
    assert "workflow specific profile profiles/default" in out
    assert f"running this machine's, {mine} (python -m membound.run.detect)" in out
    assert f"membound: results/{mine}/ from config/config.yaml" in out and f"results/{mine}/claims.json" in out


def test_the_workflow_profile_changes_no_device_profile():
    """profiles/default is read after any --profile and wins key by key: it holds only what every
    device profile sets alike, so a bare `snakemake` runs as --profile <this machine's> does."""
    default = yaml.safe_load((WORKFLOW_PROFILE / "config.v8+.yaml").read_text())
    for name in PROFILES:
        profile = yaml.safe_load((REPO / "profiles" / name / "config.v8+.yaml").read_text())
        assert {key: profile.get(key) for key in default} == default, name


def test_make_run_refuses_an_overlay_in_one_line():
    check = subprocess.run([sys.executable, "-m", "membound.run.profiles", "check", "slurm"], capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert check.returncode == 1 and check.stderr.count("\n") == 1
    assert "profile 'slurm' is an overlay: it goes after a device profile" in check.stderr


def test_each_figure_rule_reads_its_own_plot_module_and_the_shared_ones():
    rules = ["fig2", "fig3_4", "fig6", "fig7", "fig8", "fusion", "classification", "compare"]
    run = snakemake("--profile", "profiles/cpu", *rules, "-n", "--forceall")
    assert run.returncode == 0, run.stderr[-3000:]
    inputs = dict(re.findall(r"^rule (\w+):\n    input: (.*)$", run.stdout + run.stderr, re.MULTILINE))
    for rule in rules:
        assert f"src/membound/plots/{rule}.py" in inputs[rule]
        assert "src/membound/plots/common.py" in inputs[rule] and "src/membound/plots/style.py" in inputs[rule]


def test_snakemake_internals_are_called_only_here():
    """Every call into Snakemake beyond its documented Snakefile API is in workflow/rules/internals.smk,
    which names the versions it is tested with: pyproject's pin, which the installed Snakemake meets."""
    from importlib.metadata import version

    from packaging.specifiers import SpecifierSet
    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    outside = {(f.name, m) for f in files if f.name != "internals.smk"
               for m in re.findall(r"(?<![/\w])workflow\.(\w+)", f.read_text()) if m != "basedir"}
    assert outside == set()
    pin = re.search(r'"snakemake(>=[^"]+)"', (REPO / "pyproject.toml").read_text()).group(1)
    internals = (REPO / "workflow" / "rules" / "internals.smk").read_text()
    assert f"snakemake{pin}" in internals and version("snakemake") in SpecifierSet(pin)


def test_each_figure_rule_keeps_its_name_and_report_entry_from_the_one_table():
    run = snakemake("--profile", "profiles/reference", "fig8", "-n", "--forcerun", "fig8")
    assert run.returncode == 0, run.stderr[-3000:]
    planned = set(re.findall(r"^(?:local)?rule (\w+):", run.stdout, re.MULTILINE))
    assert "fig8" in planned and planned <= {"fig8", "raw_check"}   # and the check of the raw files, where not yet made
    text = (REPO / "workflow" / "rules" / "figures.smk").read_text()
    assert len(re.findall(r"^\s*script:\n\s*\"../../scripts/figure.py\"", text, re.MULTILINE)) == 1


def test_lint_is_clean():
    run = snakemake("--profile", "profiles/cpu", "--lint")
    assert run.returncode == 0 and "Congratulations" in run.stdout + run.stderr, run.stdout[-3000:]


def test_snakemake_files_are_formatted_with_snakefmt():
    run = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "--diff", "Snakefile", "workflow"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, "run `snakefmt .` (settings in pyproject.toml):\n" + run.stdout[-3000:]


def test_unknown_gpu_fails_at_start_with_the_valid_names(tmp_path):
    (tmp_path / "z80.yaml").write_text("gpu: z80\n")
    run = snakemake("--profile", "profiles/cpu", "--configfile", str(tmp_path / "z80.yaml"), "-n")
    assert run.returncode != 0
    assert "unknown gpu 'z80': choose one of a100, cpu, gh200, h100, h200, mi250x" in run.stdout + run.stderr


OVERRIDES = ["counters=false", "matrix_source=real", "scale={log2_min: 12, log2_max: 14}", "matrices=[dc2, mip1]"]


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_keeps_its_gpu_results_and_mode_whatever_config_adds(profile):
    run = snakemake("--profile", f"profiles/{profile}", "all", "-n", "--forceall", "--config", *OVERRIDES)  # as after `make run`
    out = run.stdout + run.stderr
    assert run.returncode == 0, run.stderr[-3000:]
    target = "results/reference/h100" if profile == "reference" else f"results/{profile}"
    assert f"membound: {target}/ from config/config.yaml" in out and "--config (counters, matrix_source, scale, matrices)" in out
    written = set(re.findall(r"^    output: (results/[^,\n]*?/(?:raw|tables|figures|ae)/)", out, re.MULTILINE))
    targets = {f"results/reference/{g}" for g in config.reference_gpus("h100")} if profile == "reference" else {target}
    assert {w.split("/raw/")[0].split("/tables/")[0].split("/figures/")[0].split("/ae/")[0] for w in written} == targets
    benchmarks = set(re.findall(r"^rule (bench|counters\w*|download_matrix):", out, re.MULTILINE))
    if profile == "reference":
        assert benchmarks == set()  # renders the committed raw results, measures nothing
    else:
        assert {"bench", "download_matrix"} <= benchmarks and not any("counters" in b for b in benchmarks)
        assert f"results/{profile}/raw/spmv.csv" in out and f"results/{profile}/raw/scale.csv" in out
        assert "/dc2.npz" in out and "/mip1.npz" in out and "/cant.npz" not in out   # the chosen matrices
        assert re.search(r"--matrix data/csr/(\S+)/dc2.npz --plans data/plans/\1/dc2.npz ", out)  # made once
        assert "--log2-min 12 --log2-max 14" in out  # the command line above the spec's workload


def test_config_cannot_change_the_profiles_gpu_or_mode():
    for key in ("gpu=cpu", "reference=false"):
        run = snakemake("--profile", "profiles/h100", "-n", "--config", key)
        assert run.returncode != 0 and f"--config {key.split('=')[0]}=...: '{key.split('=')[0]}' belongs to the profile" in run.stdout + run.stderr


def test_an_overlay_alone_stops_and_names_the_device_profiles():
    """Not this machine's profile: the slurm overlay's jobs would run it on the cluster."""
    run = snakemake("--profile", "profiles/slurm", "-n")
    assert run.returncode != 0 and "running this machine's" not in run.stderr
    assert "no gpu chosen: run with --profile <name> (a100, cpu, gh200, h100, h200, mi250x, reference), before any " \
           "overlay (--profile slurm)" in run.stdout + run.stderr


def test_the_specs_workload_sits_below_a_config_file_and_the_start_line_says_so(tmp_path):
    (tmp_path / "mine.yaml").write_text("scale: {log2_min: 11}\n")
    run = snakemake("--profile", "profiles/cpu", "results/cpu/raw/scale.csv", "-n", "--forceall",
                    "--configfile", "profiles/cpu/membound.yaml", str(tmp_path / "mine.yaml"))
    assert run.returncode == 0, run.stderr[-3000:]
    assert "--log2-min 11 --log2-max 22" in run.stdout  # log2_min from the file, log2_max from cpu's workload
    assert ("config/config.yaml < config/gpus/cpu.yaml workload (repeats, scale, spmv, stencil, gemv) < "
            f"profiles/cpu/membound.yaml (gpu) < {tmp_path / 'mine.yaml'} (scale)") in run.stdout + run.stderr


@pytest.mark.parametrize("override, message", [
    ("scale={log2_mn: 12}", "--config: scale: Additional properties are not allowed ('log2_mn' was unexpected)"),
    ("counters=maybe", "--config: counters: 'maybe' is not of type 'boolean'"),
    ("colour=red", "--config: top level: Additional properties are not allowed ('colour' was unexpected)"),
])
def test_a_bad_key_or_value_is_one_line_naming_its_layer(override, message):
    run = snakemake("--profile", "profiles/cpu", "-n", "--config", override)
    assert run.returncode != 0 and message in run.stdout + run.stderr, run.stdout[-2000:]


def test_stencil_depths_are_checked_at_start(tmp_path):
    """depths must hold the role depth; a sweep depth that does not fit the GPU's shared memory is
    refused with a note and not passed on; a role depth that does not fit stops the run."""
    (tmp_path / "lacks.yaml").write_text("stencil: {kernels: {2d5pt: {depths: [1, 2]}}}\n")
    run = snakemake("--profile", "profiles/cpu", "-n", "--configfile", "profiles/cpu/membound.yaml",
                    str(tmp_path / "lacks.yaml"))
    assert run.returncode != 0
    assert ("stencil.kernels.2d5pt: depths [1, 2] lack its depth 3 (Table 3's and the claims'): add 3 to depths"
            in run.stdout + run.stderr)
    run = snakemake("--profile", "profiles/h100", "-n", "--forceall", "results/h100/raw/stencil.csv")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "refused: 2d49pt tc fp64 at depth 8 needs 244.0 KiB of shared memory per block" in run.stderr
    assert "refused: 2d49pt tc fp32" not in run.stderr              # in fp32 and fp16 every depth fits
    assert "--depth 1 --depths 2 3 4 5 6 7 8 " in run.stdout       # the job itself refuses depth 8 (stencil.plan)
    assert "--precisions fp64 fp32 fp16 bf16" in run.stdout        # the stencils follow the config's precisions
    (tmp_path / "deep.yaml").write_text("stencil: {kernels: {2d49pt: {depth: 8}}}\n")
    run = snakemake("--profile", "profiles/h100", "-n", "--configfile", "profiles/h100/membound.yaml",
                    str(tmp_path / "deep.yaml"))
    assert run.returncode != 0 and ("stencil.kernels.2d49pt on h100 (sm_90, fp64): 2d49pt tc fp64 at depth 8 needs 244.0 KiB "
                                    "of shared memory per block, the device allows 227 KiB; the role depth must run: "
                                    "choose a smaller depth") in run.stdout + run.stderr


def test_unknown_matrix_fails_at_start_with_the_valid_names():
    run = snakemake("--profile", "profiles/cpu", "--config", "matrices=[dc2,nosuch]", "-n")
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert "unknown matrix nosuch" in out and "circuit5M" in out


@pytest.mark.skipif(bool(subprocess.run("command -v nvidia-smi", shell=True).returncode == 0),
                    reason="this machine has an NVIDIA GPU")
def test_gpu_profile_without_its_gpu_fails_before_any_job(tmp_path):
    run = snakemake("--profile", "profiles/h100", "--directory", str(REPO), "results/h100/tables/bounds.csv")
    assert run.returncode != 0
    assert "profile 'h100' needs an NVIDIA H100" in run.stdout + run.stderr
    assert not (REPO / "results" / "h100" / "tables" / "bounds.csv").exists()


@pytest.mark.skipif(bool(subprocess.run("command -v nvidia-smi", shell=True).returncode == 0),
                    reason="this machine has an NVIDIA GPU")
def test_a_dry_run_of_a_gpu_profile_without_its_gpu_says_in_one_line_that_the_real_run_would_stop():
    run = snakemake("--profile", "profiles/h100", "all", "-n")
    assert run.returncode == 0, run.stderr[-2000:]
    said = [line for line in (run.stdout + run.stderr).splitlines() if "would stop" in line]
    assert said == ["membound: this was a dry run; the real run would stop before any job: profile 'h100' needs an "
                    "NVIDIA H100 80GB HBM3 (SXM5), but no GPU answers here (nvidia-smi/rocm-smi): run on a GPU node, "
                    "or use --profile cpu (or --profile reference)"]


def copy_checkout(dest: Path) -> Path:
    """A copy of the checkout at `dest` without its git, venv, data or Snakemake state."""
    skip = shutil.ignore_patterns(".git", ".venv", ".snakemake", "data", "__pycache__", ".pytest_cache", ".whl")
    shutil.copytree(REPO, dest, ignore=skip)
    return dest


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    """A copy of the checkout (the committed reference raw results included) after a full reference `all`."""
    copy = copy_checkout(tmp_path_factory.mktemp("repo") / "membound")
    for rendered in (copy / "results").glob("*"):
        if rendered.name != "reference":
            shutil.rmtree(rendered)
    for rendered in (copy / "results" / "reference").glob("*/*"):
        if rendered.name != "raw":
            shutil.rmtree(rendered) if rendered.is_dir() else rendered.unlink()
    env = {"PYTHONPATH": str(copy / "src")}
    run = snakemake("--profile", "profiles/reference", "all", "--cores", "2", cwd=copy, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    return copy, env


def test_a_damaged_raw_file_stops_the_run_in_one_line_before_any_table(tmp_path):
    """A raw file cut mid-row (issue 62: stencil.csv) stops the run at rule raw_check, with one line that
    names the file, what is wrong and the fix, no traceback and no table."""
    copy = copy_checkout(tmp_path / "membound")
    shutil.rmtree(copy / "results" / "reference" / "h100" / "tables", ignore_errors=True)
    stencil = copy / "results" / "reference" / "h100" / "raw" / "stencil.csv"
    cut = stencil.read_bytes()[: stencil.stat().st_size // 2]
    stencil.write_bytes(cut)
    recorded = json.loads(Path(f"{stencil}.meta.json").read_text())["rows"]
    table = "results/reference/h100/tables/table3_stencils.csv"
    run = snakemake("--profile", "profiles/reference", table, "--cores", "1", cwd=copy,
                    env={"PYTHONPATH": str(copy / "src")})
    out = run.stdout + run.stderr
    assert run.returncode != 0 and "Traceback" not in out and not (copy / table).exists()
    said = [line for line in out.splitlines() if line.startswith("membound: results/reference/h100/raw/")]
    assert said == [f"membound: results/reference/h100/raw/stencil.csv: not the file its job wrote "
                    f"({len(cut.splitlines()) - 1} rows, {recorded} recorded; "
                    "SHA-256 differs from stencil.csv.meta.json); restore the committed file and its record: "
                    "git checkout -- results/reference/h100/raw/stencil.csv "
                    "results/reference/h100/raw/stencil.csv.meta.json"], out[-3000:]


def jobs_in(folder: Path) -> list[int]:
    """The pids of the benchmark processes running in `folder` (zombies aside)."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if (b"membound.kernels.batch" in (proc / "cmdline").read_bytes() and (proc / "cwd").resolve() == folder
                    and (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"):
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


@pytest.mark.slow
def test_a_killed_run_leaves_no_job_writing_and_unlock_then_the_same_command_completes(tmp_path):
    """kill -9 of snakemake during a benchmark (issue 62: the job ran on 80 s and wrote its raw file):
    the job stops within supervise.GRACE_S and writes nothing; the next run names --unlock; after it,
    the same command completes, its raw file whole."""
    from membound.run import raw, supervise

    copy = copy_checkout(tmp_path / "membound")
    shutil.rmtree(copy / "results" / "cpu", ignore_errors=True)
    env = {**os.environ, "XDG_CONFIG_HOME": str(REPO / ".no-user-profiles"), "PYTHONPATH": str(copy / "src"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    command = [*SNAKEMAKE, "--profile", "profiles/cpu", "results/cpu/raw/scale.csv", "--cores", "1",
               "--config", "scale={log2_min: 10, log2_max: 20}"]   # seconds of benchmark: killed in the first
    log, out = copy / "results" / "cpu" / "logs" / "bench_scale.log", copy / "results" / "cpu" / "raw" / "scale.csv"
    run = subprocess.Popen(command, cwd=copy, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600                                           # a busy machine starts it late
    while not (log.exists() and "== scale" in log.read_text() and jobs_in(copy)) and time.time() < deadline:
        time.sleep(0.2)
    assert jobs_in(copy), "the benchmark never started"
    run.kill()
    run.wait()
    deadline = time.time() + supervise.GRACE_S + 2
    while jobs_in(copy) and time.time() < deadline:
        time.sleep(0.2)
    assert not jobs_in(copy), "the benchmark ran on after snakemake was killed"
    assert not out.exists() and not list(out.parent.glob("*.csv")), "a job wrote after snakemake was gone"
    again = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode != 0 and "--unlock" in again.stdout + again.stderr
    subprocess.run([*command, "--unlock"], cwd=copy, env=env, check=True, capture_output=True, timeout=300)
    done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(raw.read(out)) == json.loads(Path(f"{out}.meta.json").read_text())["rows"] > 0


def planned_jobs(copy, env) -> set[str]:
    run = snakemake("--profile", "profiles/reference", "all", "-n", cwd=copy, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    return set(re.findall(r"^(?:local)?rule (\w+):", run.stdout, re.MULTILINE))


@pytest.mark.slow
def test_reference_all_then_a_rerun_does_nothing_and_a_plot_edit_reruns_that_figure_only(reference_run):
    copy, env = reference_run
    out = copy / "results" / "reference" / "h100"
    for product in ("claims.md", "ae/manifest.sha256", *(f"figures/{f}.png" for f in FIGURES)):
        assert (out / product).is_file(), product
    assert planned_jobs(copy, env) == set()
    with open(copy / "src" / "membound" / "plots" / "fig7.py", "a") as module:
        module.write("\n# an edit of Figure 7's plotting code\n")
    others = [g for g in config.reference_gpus("h100", str(copy / "results" / "reference")) if g != "h100"]
    expected = {"fig7", "manifest", "all", *(f"{g}_{rule}" for g in others for rule in ("fig7", "manifest"))}
    assert planned_jobs(copy, env) == expected | ({"compare"} if others else set())


def test_reference_profile_renders_every_gpu_with_raw_results_and_stacks_them(tmp_path):
    copy = tmp_path / "membound"
    shutil.copytree(REPO / "results" / "reference" / "h100" / "raw", copy / "results" / "reference" / "h100" / "raw")
    shutil.copytree(REPO / "results" / "reference" / "h100" / "raw", copy / "results" / "reference" / "a100" / "raw")
    for part in ("Snakefile", "workflow", "config", "scripts", "src", "profiles", "CITATION.cff", "pyproject.toml"):
        (shutil.copytree if (REPO / part).is_dir() else shutil.copy)(REPO / part, copy / part)
    run = snakemake("--profile", "profiles/reference", "all", "-n", cwd=copy, env={"PYTHONPATH": str(copy / "src")})
    assert run.returncode == 0, run.stderr[-3000:]
    jobs = set(re.findall(r"^(?:local)?rule (\w+):", run.stdout, re.MULTILINE))
    assert {"claims", "a100_claims", "a100_fig8", "compare"} <= jobs
    assert "results/reference/a100/claims.json" in run.stdout and "results/compare/fig2_roofline.png" in run.stdout


@pytest.mark.slow
def test_html_report_holds_every_rendered_figure_and_table_grouped_per_gpu(reference_run):
    """The report's own items (its categories and results, as its app reads them): per GPU every PNG under
    figures/ and every CSV under tables/, its claims and its appendix; the comparison's figures and claims;
    each with a caption."""
    copy, env = reference_run
    run = snakemake("--profile", "profiles/reference", "--report", "report.html", cwd=copy, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    data = report_data(copy / "report.html")
    gpus = config.reference_gpus("h100", str(copy / "results" / "reference"))
    assert set(data["categories"]) == {g.upper() for g in gpus} | {"GPUs compared"}

    def rendered(folder, pattern):
        return sorted(p.relative_to(copy).as_posix() for p in (copy / folder).glob(pattern))

    for gpu in gpus:
        out = f"results/reference/{gpu}"
        expected = {"Figures": rendered(f"{out}/figures", "*.png"), "Tables": rendered(f"{out}/tables", "*.csv"),
                    "Claims": [f"{out}/claims.md"], "Artifact evaluation": [f"{out}/ae/appendix.md"]}
        assert f"{out}/figures/roofline_achieved.png" in expected["Figures"]
        assert {sub: sorted(paths) for sub, paths in data["categories"][gpu.upper()].items()} == expected, gpu
    compared = {"Figures": rendered("results/compare", "*.png"), "Claims": ["results/compare/claims.md"]}
    assert {"results/compare/fig2_roofline.png", "results/compare/fig8_stencil_fp16.png"} <= set(compared["Figures"])
    assert {sub: sorted(paths) for sub, paths in data["categories"]["GPUs compared"].items()} == compared
    items = [p for subs in data["categories"].values() for paths in subs.values() for p in paths]
    assert set(items) == set(data["results"])
    for path, result in data["results"].items():
        assert len(re.sub(r"<[^>]+>", "", result["caption"]).strip()) > 80, path
    assert "H100" in data["workflow_desc"] and "H200" in data["workflow_desc"]
    from PIL import Image
    tall = {p: Image.open(copy / p).size for p in data["results"] if p.endswith(".png")}
    assert {p: size for p, size in tall.items() if size[1] > 3100} == {}         # legible on a laptop: ~3000 px


@pytest.mark.slow
def test_the_archive_rule_runs_on_the_reference_profile(reference_run):
    import tarfile
    copy, env = reference_run
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run(["git", "-C", str(copy), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                       capture_output=True)
    for args in (["--report", "results/reference/report.html"], ["archive", "--cores", "1"]):  # the report it holds
        run = snakemake("--profile", "profiles/reference", *args, cwd=copy, env=env)
        assert run.returncode == 0, run.stderr[-3000:]
    with tarfile.open(copy / "results" / "archive" / "membound-reference.tar.gz") as bundle:
        names = {n.split("/", 1)[1] for n in bundle.getnames() if "/" in n}
    assert {"results/reference/report.html", "ARCHIVE.json"} <= names
    for gpu in config.reference_gpus("h100", str(copy / "results" / "reference")):
        assert {f"results/reference/{gpu}/raw/stencil.csv", f"results/reference/{gpu}/ae/manifest.sha256",
                f"results/reference/{gpu}/ae/appendix.md"} <= names, gpu
    assert "Snakefile" in names and "workflow/rules/ae.smk" in names


@pytest.mark.slow
def test_a_model_edit_reruns_what_imports_the_model_and_nothing_else(reference_run):
    copy, env = reference_run
    before = planned_jobs(copy, env)
    with open(copy / "src" / "membound" / "model" / "equations.py", "a") as module:
        module.write("\n# an edit of the model's equations\n")
    others = "|".join(config.reference_gpus("h100")[1:]) or "-"
    rerun = {re.sub(rf"^({others})_", "", job) for job in planned_jobs(copy, env) - before}  # every GPU's rules alike
    # planned already, after the plot edit of the test before: fig7 and what gathers every figure
    pending = {"fig7", "manifest", "all"} | ({"compare"} if others != "-" else set())
    expected = {"table1", "bounds", "table2", "table3", "bandwidth", "wqi", "claims", "ae", "roofline_achieved", "fig2",
                "fig3_4", "fig6", "fig7", "fig8", "fig_gemv", "fusion", "classification", "about", "intro", "manifest",
                "all"} | pending
    assert rerun | pending == expected      # fig8: its facets say per precision why a row is empty (model.peaks)
    assert "dgemm_check" not in rerun


def test_a_python_whose_path_has_a_space_stops_at_start_naming_the_upstream_issue(tmp_path):
    venv = tmp_path / "with space" / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "parent.pth").write_text("\n".join(p for p in sys.path if p.endswith("site-packages")) + "\n")
    run = subprocess.run([str(venv / "bin" / "python"), "-m", "snakemake", "--profile", "profiles/cpu", "-n"],
                         cwd=REPO, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert run.returncode != 0 and "has a space in its path" in run.stdout + run.stderr
    assert "snakemake/snakemake#2645" in run.stdout + run.stderr


def test_profiles_install_repairs_a_dangling_link_and_says_where_each_name_points(tmp_path):
    gone = tmp_path / "deleted-checkout" / "profiles" / "cpu"
    (tmp_path / "snakemake").mkdir()
    (tmp_path / "snakemake" / "cpu").symlink_to(gone, target_is_directory=True)
    (tmp_path / "other" / "h100").mkdir(parents=True)
    (tmp_path / "snakemake" / "h100").symlink_to(tmp_path / "other" / "h100", target_is_directory=True)
    run = subprocess.run([sys.executable, "-m", "membound.run.profiles", "install"], capture_output=True, text=True,
                         env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "PYTHONPATH": str(REPO / "src")})
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "snakemake" / "cpu").resolve() == REPO / "profiles" / "cpu"
    assert f"(repaired: it pointed at {gone}, which is gone)" in run.stdout
    assert "not this checkout's, left alone; here use --profile profiles/h100" in run.stdout
    check = subprocess.run([sys.executable, "-m", "membound.run.profiles", "check", "h10"], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert check.returncode != 0 and "unknown profile 'h10': choose one of a100, cpu, gh200, h100" in check.stderr


def documented_commands() -> list[str]:
    """Every `snakemake ...` command printed in README.md, config/README.md and docs/*.md (placeholders aside)."""
    found = []
    for doc in [REPO / "README.md", REPO / "config" / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = doc.read_text()
        blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
        lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
        found += [" ".join(c.split()) for c in lines + re.findall(r"`(snakemake [^`]*)`", text)
                  if c.startswith("snakemake ")]
    return sorted({c for c in found if "<" not in c and "--report" not in c})  # --report: test_html_report


@pytest.mark.parametrize("command", documented_commands())
def test_every_documented_command_dry_runs_as_printed(command, tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-m", "membound.run.profiles", "install"], env=env, check=True, capture_output=True)
    words = shlex.split(command)
    run = subprocess.run([*SNAKEMAKE, "-n", *words[1:]], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]


TOY_MODULE = '''"""A toy family: a = b, copied with numpy (tests/test_workflow.py)."""
from functools import partial

import numpy as np

from membound.kernels import arg_parser
from membound.kernels.harness import Case, Impl, run_cli, select

IMPLS = (Impl("toy", "numpy_copy", "cuda_core", "copy", "cpu", precisions=("fp64",)),)


def prepare(impl, n, rng, precision):
    a, b = np.full(n, np.nan), rng.uniform(-1.0, 1.0, n)
    return Case(run=lambda: np.copyto(a, b), output=lambda _: a, reference=b.copy(), tol=0.0, what=f"toy n={n}",
                row={"problem": f"n={n}", "n": n, "work_items": n}, work=16 * n, metric="GB/s", precision=precision)


def main(argv=None):
    parser = arg_parser("a = b")
    parser.add_argument("--n", type=int, required=True)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    jobs = [(impl, partial(prepare, impl, args.n, rng, p)) for impl, p in select(IMPLS, args.backend, args.precisions)]
    run_cli(args, jobs, "{value:10.1f} GB/s")
'''
TOY_WQ = '''

def toy(row, gpu, stencils=None) -> dict:
    """The toy family's copy: no FLOPs counted as work but one per element, 16 bytes per element."""
    n = int(row["n"])
    return {"W": n, "Q": 16 * n, "W_exec": n, "items": n}
'''
TOY_ENTRY = '''    Family("toy", "toy copy", "copy", "copy", analytical.toy, block(n={"type": "integer", "minimum": 1}),
           args=lambda config, case, counters, rep: f"--n {config['toy']['n']}"),
)}
'''


def test_a_new_family_needs_no_rule_its_files_alone_run_it(tmp_path):
    """docs/architecture.md's worked examples: a family in its folder (module and source), registry
    entry, W and Q and config block; the generic rules, wqi and the claims pick it up with no other
    edit. Then an implementation: one Impl line and its source in the family's folder, which reruns
    the family's job and adds its rows."""
    copy = copy_checkout(tmp_path / "membound")
    src = copy / "src" / "membound"
    (src / "kernels" / "toy").mkdir()
    (src / "kernels" / "toy" / "__init__.py").write_text(TOY_MODULE)
    (src / "kernels" / "toy" / "toy.cu").write_text("// the toy's CUDA source: found by the registry in its folder\n")
    with open(src / "model" / "analytical.py", "a") as module:
        module.write(TOY_WQ)
    registry = (src / "families.py").read_text()
    assert registry.count("\n)}\n") == 1
    (src / "families.py").write_text(registry.replace("\n)}\n", "\n" + TOY_ENTRY))
    with open(copy / "config" / "config.yaml", "a") as defaults:
        defaults.write("toy:\n  n: 4096\n  warmup: 1\n  reps: 3\n")
    env = {"PYTHONPATH": str(copy / "src"), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    run = snakemake("--profile", "profiles/cpu", "all", "-n", "-p", cwd=copy, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert re.search(r"python -m membound\.run\.gpu_slot -- python -m membound\.kernels\.batch toy --out "
                     r"results/cpu/raw/toy\.csv --backend cpu --rep 0 --warmup 1 --warmup-s 0 --reps 3 -- --n 4096 "
                     r"--precisions",
                     run.stdout), run.stdout[-3000:]
    inputs = dict(re.findall(r"^rule (\w+):\n    input: (.*)$", run.stdout, re.MULTILINE))
    assert "results/cpu/raw/toy.csv" in inputs["wqi"] and "src/membound/kernels/toy/toy.cu" in run.stdout
    bench = snakemake("--profile", "profiles/cpu", "bench_toy", cwd=copy, env=env)
    assert bench.returncode == 0, bench.stderr[-3000:]
    rows = (copy / "results" / "cpu" / "raw" / "toy.csv").read_text()
    assert "toy,numpy_copy,cuda_core,copy" in rows.replace('"', "")
    module = src / "kernels" / "toy" / "__init__.py"         # an implementation: its Impl line and its source
    module.write_text(module.read_text().replace('("fp64",)),)', '("fp64",)),\n         Impl("toy", "numpy_copy_x", '
                                                 '"cuda_core", "copy", "cpu", precisions=("fp64",)))'))
    (src / "kernels" / "toy" / "toy_x.cu").write_text("// the new implementation's source\n")
    bench = snakemake("--profile", "profiles/cpu", "bench_toy", "-p", cwd=copy, env=env)
    assert bench.returncode == 0 and "src/membound/kernels/toy/toy_x.cu" in bench.stdout + bench.stderr, \
        (bench.stdout + bench.stderr)[-3000:]
    rows = (copy / "results" / "cpu" / "raw" / "toy.csv").read_text().replace('"', "")
    assert "toy,numpy_copy,cuda_core,copy" in rows and "toy,numpy_copy_x,cuda_core,copy" in rows
