# What the rules know of the kernel families, all from the registry (membound.families): raw paths,
# repetitions and the code each rule runs (membound.run.codedeps); and of the original codes the
# user built (membound.originals, rule original in originals.smk).
import glob
import os

from membound import families
from membound.originals import problems as originals
from membound.originals.codes import CODES
from membound.run import codedeps

FAMILY = families.FAMILIES
# Independent repetitions of every benchmark job (raw/<stem>.csv, then <stem>.rep<r>.csv). The
# reference profile renders what is committed: repetitions beyond the first where their files exist.
REPEATS = config["repeats"]
# SpMV rows of the matrices the run benchmarks (reference: those with a committed raw CSV of any repetition).
SPMV_MATRICES = (
    [m for m in MATRICES if any(os.path.exists(FAMILY["spmv"].raw(RESULTS, m["name"], r)) for r in range(REPEATS))]
    if REFERENCE
    else MATRICES
)


def raw(family=None, prefix="", repeats=None):
    """The raw CSVs of one family (every family if None), every case and repetition (counter runs:
    one). The reference profile takes only the committed ones (a family measured after the
    reference run, e.g. gemv, has none)."""
    paths = families.raw_paths(
        RESULTS, config, SPMV_MATRICES, prefix, repeats or REPEATS, os.path.exists if REFERENCE else None
    )
    paths = [p for p in paths if os.path.exists(p)] if REFERENCE else paths
    return [p for p in paths if family is None or p.startswith(f"{RESULTS}/raw/{prefix}{family}")]


def code(*scripts_or_modules):
    """The code of a job: the scripts or modules and every membound module they import (codedeps)."""
    return codedeps.code(workflow.basedir, *scripts_or_modules)


def bench_code(family):
    """A family's benchmark code: its module's imports and its CUDA sources (the registry's)."""
    return sorted({*code(f"membound.kernels.{family}"), *FAMILY[family].code})


ORIGINAL_JOBS = [] if REFERENCE else originals.jobs(config, MATRICES)  # (code, case) of config `originals`


def originals_raw(kernel=None, ext="csv"):
    """The originals' raw CSVs (ext json: their run records) of `kernel` (every kernel if None), every
    job and repetition; the reference profile takes the committed ones."""
    if REFERENCE:
        paths = sorted(glob.glob(f"{RESULTS}/raw/originals/*/*.{ext}"))
    else:
        paths = [originals.raw(RESULTS, code, case, rep, ext) for code, case in ORIGINAL_JOBS for rep in range(REPEATS)]
    return [p for p in paths if kernel is None or CODES[p.split("/")[-2]].kernel == kernel]
