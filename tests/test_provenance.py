"""Provenance (issue 70): every config key that changes what a benchmark, counter or original-code job
measures reruns that job (and, through Snakemake, everything built from it); a key that changes
nothing measured reruns none. One row per key: the dry-run plan (-n) of `all` with that key changed,
on a results folder whose every output is present and recorded (made once, by --touch)."""

import fnmatch
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from membound import families
from membound.run import config

REPO = Path(__file__).resolve().parents[1]
PROFILE = "h100"  # a GPU profile: its DAG has the counter jobs (a dry run needs no GPU)
RAW = f"results/{PROFILE}/raw/"
# The prepared run: 2 repetitions, 2 matrices and 2 precisions keep its plan small; every original
# code named (each with a stub executable, never run), so that their keys have rows too.
CODES = {"dasp": None, "babelstream": None, "ebisu": "2d5pt", "convstencil": "2d9pt", "lorastencil": "2d5pt",
         "brick": "3d7pt"}
# The fusion sweep of 2d5pt alone (the start-up check of every depth's shared memory is most of a dry run's time).
BASE = {"repeats": 2, "matrices": ["dc2", "mip1"], "precisions": ["fp64", "fp32"],
        "stencil": {"kernels": {name: {"depths": [1, 2, 3] if name == "2d5pt" else [spec["depth"]]}
                                for name, spec in yaml.safe_load((REPO / "config" / "config.yaml").read_text())
                                ["stencil"]["kernels"].items()}}}


def every_rep(*stems: str) -> set[str]:
    return {f"{stem}{rep}" for stem in stems for rep in ("", ".rep1")}


COUNTERS = {f"counters/{f}" for f in families.FAMILIES}
STUB = "STUB"  # a second stub executable's path (the fixture's)
STENCIL = {*every_rep("stencil"), "counters/stencil"}
SPMV_INPUTS = every_rep("spmv", "originals/dasp/dc2", "originals/dasp/mip1") | {"counters/spmv", "matrices"}
STENCIL_ORIGINALS = every_rep(*(f"originals/{code}/{case}" for code, case in CODES.items() if case))

# key (dotted; `*` a name the schema leaves open) -> (its --config value, the raw files the plan measures
# again, relative to raw/ without .csv; a `*` pattern matches one or more). A key the schema gains
# fails test_every_config_key_has_a_row until it has a row here.
ROWS = {
    "matrix_source": ("matrix_source=real", SPMV_INPUTS),
    "matrices": ("matrices=[dc2]", {*every_rep("spmv"), "counters/spmv", "matrices"}),
    # where the matrices lie, not what they are: the jobs that read them take the new paths (input trigger)
    "data_dir": ("data_dir=elsewhere", SPMV_INPUTS),
    "download.base_url": ("download={base_url: https://example.org/MM}", set()),
    "download.staged_dir": ("download={staged_dir: /nowhere}", set()),
    "download.retries": ("download={retries: 1}", set()),
    "download.timeout_s": ("download={timeout_s: 5}", set()),
    "lockfile": ("lockfile=elsewhere.tsv", set()),
    "counters": ("counters=false", set()),
    "ncu.options": ("ncu={options: --launch-count 10}", {*COUNTERS, "counters/dgemm"}),
    "ncu.scale_log2_min": ("ncu={scale_log2_min: 16}", {"counters/scale"}),
    "ncu.scale_log2_max": ("ncu={scale_log2_max: 24}", {"counters/scale"}),
    "ncu.scale_log2_step": ("ncu={scale_log2_step: 2}", {"counters/scale"}),
    "ncu.stencil_sweep": ("ncu={stencil_sweep: true}", {"counters/stencil"}),
    "precisions": ("precisions=[fp64]", {*every_rep(*families.FAMILIES), *COUNTERS}),
    "repeats": ("repeats=3", {f"{f}.rep2" for f in families.FAMILIES} | {"originals/*.rep2"}),
    "scale.log2_min": ("scale={log2_min: 16}", every_rep("scale")),  # babelstream's cases: 2^14, 2^15 gone
    "scale.log2_max": ("scale={log2_max: 26}", every_rep("scale")),
    "scale.warmup": ("scale={warmup: 3}", every_rep("scale")),
    "scale.reps": ("scale={reps: 7}", every_rep("scale") | {"originals/babelstream/*"}),
    "scale.warmup_s": ("scale={warmup_s: 1}", every_rep("scale")),
    "spmv.warmup": ("spmv={warmup: 3}", every_rep("spmv")),
    "spmv.reps": ("spmv={reps: 7}", every_rep("spmv")),
    "spmv.warmup_s": ("spmv={warmup_s: 1}", every_rep("spmv")),
    "spmv.surrogate_scale": ("spmv={surrogate_scale: 0.5}", SPMV_INPUTS),
    "stencil.warmup": ("stencil={warmup: 2}", every_rep("stencil")),
    "stencil.reps": ("stencil={reps: 7}", every_rep("stencil")),
    "stencil.warmup_s": ("stencil={warmup_s: 1}", every_rep("stencil")),
    # SCALE times a copy of the stencils' fields with as many launches as they have steps
    "stencil.steps": ("stencil={steps: 24}", every_rep("stencil", "scale") | STENCIL_ORIGINALS),
    "stencil.sweep_repeats": ("stencil={sweep_repeats: 1}", {"stencil.rep1"}),  # the sweep now in rep 0 only
    "stencil.domain_2d": ("stencil={domain_2d: [256, 256]}",
                          every_rep("stencil", "scale", "originals/ebisu/2d5pt", "originals/convstencil/2d9pt",
                                    "originals/lorastencil/2d5pt") | {"counters/stencil"}),
    "stencil.domain_3d": ("stencil={domain_3d: [64, 64, 64]}",
                          every_rep("stencil", "scale", "originals/brick/3d7pt") | {"counters/stencil"}),
    "stencil.kernels.*.shape": ("stencil={kernels: {2d13pt: {shape: box}}}", STENCIL),
    "stencil.kernels.*.dims": ("stencil={kernels: {2d13pt: {dims: 3, depths: [1]}}}", STENCIL),
    "stencil.kernels.*.radius": ("stencil={kernels: {2d13pt: {radius: 2}}}", STENCIL),
    "stencil.kernels.*.depth": ("stencil={kernels: {2d9pt: {depth: 2, depths: [2]}}}",
                                every_rep("stencil", "originals/convstencil/2d9pt") | {"counters/stencil"}),
    "stencil.kernels.*.depths": ("stencil={kernels: {2d9pt: {depths: [1, 3]}}}", every_rep("stencil")),
    "gemv.sizes": ("gemv={sizes: [512, 1024]}", {*every_rep("gemv"), "counters/gemv"}),
    "gemv.warmup": ("gemv={warmup: 3}", every_rep("gemv")),
    "gemv.reps": ("gemv={reps: 7}", every_rep("gemv")),
    "gemv.warmup_s": ("gemv={warmup_s: 1}", every_rep("gemv")),
    # Table 3's 2D problem of ConvStencil and LoRAStencil is the default's: theirs stay
    "originals.problems": ("originals={problems: paper}", every_rep("originals/ebisu/2d5pt", "originals/brick/3d7pt")),
    "originals.*.executable": (f"originals={{dasp: {{executable: {STUB}}}}}", every_rep("originals/dasp/*")),
    "originals.*.executables": (f"originals={{brick: {{executables: {{3d7pt: {STUB}}}}}}}",
                                every_rep("originals/brick/3d7pt")),
    "originals.*.commit": ("originals={ebisu: {commit: other}}", every_rep("originals/ebisu/2d5pt")),
    "claims.margin": ("claims={margin: 0.05}", set()),
    "claims.dram_fraction": ("claims={dram_fraction: 0.5}", set()),
    "render_only": ("render_only=true", set()),  # the raw files become sources: nothing is measured again
}
NOT_ON_THE_COMMAND_LINE = {"gpu", "reference", "reference_gpus"}  # the profile's own (--config refuses them)


def schema_keys(schema: dict, defs: dict, prefix: str = "") -> set[str]:
    """The dotted leaf keys of a JSON schema (`*` for a name it leaves open: additionalProperties)."""
    schema = defs[schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema
    keys = set()
    for name, sub in schema.get("properties", {}).items():
        keys |= schema_keys(sub, defs, f"{prefix}{name}.") or {prefix + name}
    if isinstance(schema.get("additionalProperties"), dict) and schema["additionalProperties"].get("properties"):
        keys |= schema_keys(schema["additionalProperties"], defs, f"{prefix}*.")
    return keys


def test_every_config_key_has_a_row():
    schema = config.schema_of("config", families.config_blocks())
    keys = schema_keys(schema, schema["$defs"])
    collapsed = {re.sub(r"^originals\.(?!problems)\w+", "originals.*", k) for k in keys}  # a row for every code
    assert collapsed - NOT_ON_THE_COMMAND_LINE == set(ROWS)


def snakemake(copy: Path, *args: str) -> subprocess.CompletedProcess:
    base = yaml.safe_dump({**BASE, "originals": {"problems": "ours", **{
        code: ({"executable": str(copy / "stub")} if case is None else {"executables": {case: str(copy / "stub")}})
        for code, case in CODES.items()}}})
    (copy / "base.yaml").write_text(base)
    env = {**os.environ, "XDG_CONFIG_HOME": str(copy / ".no-user-profiles"), "PYTHONPATH": str(copy / "src")}
    return subprocess.run([sys.executable, "-m", "snakemake", "all", *args, "--profile", f"profiles/{PROFILE}",
                           "--configfile", f"profiles/{PROFILE}/membound.yaml", "base.yaml"],
                          cwd=copy, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A checkout whose every output of `all` is present and recorded by Snakemake (--touch: no job runs)."""
    copy = tmp_path_factory.mktemp("provenance") / "membound"
    skip = shutil.ignore_patterns(".git", ".venv", ".snakemake", "data", "results", "__pycache__", ".pytest_cache")
    shutil.copytree(REPO, copy, ignore=skip)
    for stub in ("stub", "stub2"):
        (copy / stub).write_text("#!/bin/sh\nexit 0\n")
        (copy / stub).chmod(0o755)
    summary = snakemake(copy, "--summary")
    assert summary.returncode == 0, summary.stderr[-3000:]
    for line in summary.stdout.splitlines()[1:]:
        path = copy / line.split("\t")[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    touched = snakemake(copy, "--touch", "--forceall", "--cores", "1")
    assert touched.returncode == 0, touched.stderr[-3000:]
    assert "Nothing to be done" in snakemake(copy, "-n").stdout
    return copy


def measured(plan: str) -> set[str]:
    """The raw files a dry run's plan writes (each job's first output), relative to raw/ without .csv."""
    outputs = re.findall(r"^(?:local)?rule \w+:\n(?:    input: .*\n)?    output: ([^,\n]+)", plan, re.MULTILINE)
    return {o.removeprefix(RAW).removesuffix(".csv") for o in outputs if o.startswith(RAW)}


@pytest.mark.slow
@pytest.mark.parametrize("key", list(ROWS))
def test_a_config_change_reruns_exactly_what_it_measures(recorded, key):
    value, expected = ROWS[key]
    run = snakemake(recorded, "-n", "--config", value.replace(STUB, str(recorded / "stub2")))
    assert run.returncode == 0, run.stderr[-3000:]
    planned = measured(run.stdout)
    unmatched = {p for p in expected if not fnmatch.filter(planned, p)}
    unexpected = {p for p in planned if not any(fnmatch.fnmatch(p, e) for e in expected)}
    assert not unmatched and not unexpected, f"{key}: not rerun {sorted(unmatched)}, rerun {sorted(unexpected)}"
    if planned:  # everything built from a measured file follows it (raw_check first)
        assert re.search(r"^rule raw_check:", run.stdout, re.MULTILINE)
