# What the rules know of the kernel families, all from the registry (membound.families): raw paths,
# repetitions and the code each rule runs (membound.run.codedeps); and of the original codes the
# user built (membound.originals, rule original in originals.smk).
import glob
import os
from pathlib import Path

from membound import families
from membound.originals import problems as originals
from membound.originals.codes import CODES
from membound.run import codedeps, progress

FAMILY = families.FAMILIES
# Independent repetitions of every benchmark job (raw/<stem>.csv, then <stem>.rep<r>.csv). The
# reference profile renders what is committed: repetitions beyond the first where their files exist.
REPEATS = config["repeats"]
# SpMV's matrices in raw CSVs of one per matrix, the layout of runs before a job ran every case, which
# the reference profile reads where a run committed them (those with a file of any repetition).
SPMV_MATRICES = (
    [m for m in MATRICES if any(os.path.exists(FAMILY["spmv"].raw(RESULTS, m["name"], r)) for r in range(REPEATS))]
    if REFERENCE
    else MATRICES
)


# Every raw file the tables, figures and claims read, checked by raw_check (analysis.smk); each of those
# rules takes this as an input, so that a damaged file stops the run before any of them runs.
RAW_CHECKED = f"{RESULTS}/tables/raw_inputs.csv"

FAMILY_NAMES = "|".join(FAMILY)  # the `family` wildcard of the generic rules bench and counters


def raw(family=None, prefix="", repeats=None):
    """The raw CSVs of one family (every family if None), every case and repetition (counter runs:
    one). The reference profile takes only the committed ones (a family measured after the
    reference run, e.g. gemv, has none)."""
    paths = families.raw_paths(
        RESULTS,
        config,
        SPMV_MATRICES,
        prefix,
        repeats or REPEATS,
        os.path.exists if REFERENCE else None,
        [family] if family else None,
    )
    return [p for p in paths if os.path.exists(p)] if REFERENCE else paths


def code(*scripts_or_modules):
    """The code of a job: the scripts or modules and every membound module they import (codedeps)."""
    return codedeps.code(workflow.basedir, *scripts_or_modules)


def bench_code(family):
    """A family's benchmark code: its module's imports and its CUDA sources (the registry's), the
    GPU slot wrapper and the batch runner every GPU job runs through."""
    run = code(f"membound.kernels.{family}", "membound.run.gpu_slot", "membound.kernels.batch")
    return sorted({*run, *FAMILY[family].code})


ORIGINAL_JOBS = [] if REFERENCE else originals.jobs(config, MATRICES)  # (code, case) of config `originals`


def originals_raw(kernel=None, ext="csv"):
    """The originals' raw CSVs (ext json: their run records) of `kernel` (every kernel if None), every
    job and repetition; the reference profile takes the committed ones."""
    if REFERENCE:
        paths = [p for p in sorted(glob.glob(f"{RESULTS}/raw/originals/*/*.{ext}")) if not p.endswith(".meta.json")]
    else:
        paths = [originals.raw(RESULTS, code, case, rep, ext) for code, case in ORIGINAL_JOBS for rep in range(REPEATS)]
    return [p for p in paths if kernel is None or CODES[p.split("/")[-2]].kernel == kernel]


def bench_inputs(wildcards, counters=False):
    """Inputs of a family's job (`counters`: its counter job): its benchmark code (with ncu's runner)
    and, for a family with a `case_file` option, every case's CSR file, and with a `plan_file` option
    its plans (matrices.smk)."""
    family = FAMILY[wildcards.family]
    files = {*bench_code(family.name), *(code("membound.counters.ncu") if counters else [])}
    cases = families.cases(family.name, config, MATRICES) if family.case_file else []
    return {
        "code": sorted(files),
        "case_files": [csr_file(case) for case in cases],
        "plan_files": [plan_file(case) for case in cases] if family.plan_file else [],
    }


def bench_args(wildcards, counters=False):
    """A family's job runs every case in one process (membound.kernels.batch): each case's problem
    arguments (and its case file). A function of the wildcards alone, not of `input`: Snakemake
    compares only such params with the last run's (a param derived from input or output is not a
    rerun trigger), so that a config change of the problem reruns the job (tests/test_provenance.py)."""
    family = FAMILY[wildcards.family]
    cases = families.cases(family.name, config, MATRICES)
    rep = 0 if counters else families.rep_index(wildcards.rep)
    case_files = [csr_file(case) for case in cases] if family.case_file else []
    plan_files = [plan_file(case) for case in cases] if family.plan_file else []
    return families.batch_args(family.name, config, cases, case_files, counters, rep, plan_files)


# What the logger plugin `membound` says is left after each job (membound.run.progress).
progress.configure(
    progress.expected_from(Path(f"results/reference/{GPU_NAME}/raw/benchmarks"), FAMILY, config["precisions"]),
    gpu_rule_names,
    resource_asked("gpu"),
    cores(),
    on_gpus=BACKEND == "cuda",
    families=FAMILY,
)
