# Configuration, validation and the small helpers every stage uses.
import atexit
import os
import sys
from pathlib import Path

from snakemake.utils import min_version

from membound import families
from membound.kernels import stencil as stencil_kernels
from membound.originals import check as originals_check
from membound.plots import compare as compare_plots
from membound.run import config as mbconfig
    # go to a cluster (the login node has no GPU: the nodes that run the jobs have), nor with --touch,
    # which runs no job.
    if MEASURES and runs_here() and not is_touch():
        try:
            detect.require(GPU_NAME, GPU)
        except mbconfig.ConfigError as err:
            raise WorkflowError(str(err))
    # The command and its --config, one JSON line per run that runs jobs (rule archive bundles the log).
    commands.record(f"{RESULTS}/logs/commands.jsonl", invocation())


onsuccess:
    # Where the claims, figures and appendix are, and the report and archive commands.
    _folders = [RESULTS, *(f"results/reference/{gpu}" for gpu in REFERENCE_GPUS[1:])]
    sys.stderr.write(summary.text(_folders, "reference" if REFERENCE else GPU_NAME))
    runlock.release(RESULTS)


onerror:
    runlock.release(RESULTS)


# A dry run (-n) runs no onstart: where the real run would stop there, one line says so and why (at
# exit, below the plan: Snakemake knows that a run is dry only once the Snakefile is read).
if MEASURES and plans_local_jobs() and is_main_snakefile():
    atexit.register(lambda: is_dry_run() and detect.dry_run_note(GPU_NAME, GPU))

# Every job's command ends with this Snakemake should it be killed (membound.run.supervise, gpu_slot).
os.environ[supervise.ENV] = str(os.getpid())


def compared(name):
    """Rule compare's inputs `name` (e.g. 'claims.json'): under the reference profile, each of its GPUs';
    otherwise every profile's that exists."""
    if REFERENCE_GPUS:
        return [f"results/reference/{gpu}/{name}" for gpu in REFERENCE_GPUS]
    return lambda wildcards: compare_plots.found("results", name)


include: "registry.smk"
