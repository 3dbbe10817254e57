# Configuration, validation and the small helpers every stage uses.
import atexit
import os
import sys
from pathlib import Path

from snakemake.utils import min_version

from membound import families
from membound.kernels import stencil as stencil_kernels
from membound.originals import check as originals_check
from membound.run import config as mbconfig
from membound.run import commands, detect, devices, environment, gpu_slot, runlock, summary, supervise
from membound.run import profiles as mbprofiles

min_version("9.0")


include: "internals.smk"


try:  # the layers in their documented order (config/README.md, "Precedence"), each schema-checked
    mbconfig.check_interpreter(sys.executable)
    # A module (the reference profile's other GPUs, see the Snakefile) gets the same layers for its own gpu.
    MODULE_GPU = None if is_main_snakefile() else config["gpu"]
    merged, LAYERS = mbconfig.assemble(
        *config_layers(),
        gpu=MODULE_GPU,
        blocks=families.config_blocks(),  # each kernel family's config block
        detected=None if profile_given() else detect.this_machine,  # a bare `snakemake`: this machine's profile
    )
    if MODULE_GPU:
        merged["reference_gpus"] = [MODULE_GPU]
    config.clear()
    config.update(merged)
    GPU_NAME = config["gpu"]
    GPU = mbconfig.load_gpu(GPU_NAME)
    MATRICES = mbconfig.select_matrices(config["matrices"])
    if not config.get("render_only"):  # the original codes' executables, before any job runs
        originals_check.check(config)
except mbconfig.ConfigError as err:
    raise WorkflowError(str(err))

if conda_prefix() is not None:  # --sdm conda: the rules' conda env finds membound
    _why = environment.conda_prefix_problem(conda_prefix() or None, workflow.basedir)
    if _why:
        raise WorkflowError(_why)

REFERENCE = config.get("reference", False)  # the reference profile: committed raw results, no device
# --config render_only=true: the run's raw results as they are (an unpacked archive, `python -m
# membound.ae verify`): its tables, figures and claims rendered anew, nothing measured, no device.
RENDER_ONLY = config.get("render_only", False)
MEASURES = not (REFERENCE or RENDER_ONLY)  # the measuring rules (benchmarks, counters, inventory) exist
RESULTS = f"results/reference/{GPU_NAME}" if REFERENCE else f"results/{GPU_NAME}"
# The name of the run's archive (the reference profile's holds every GPU it renders) and the HTML report it bundles.
ARCHIVED = "reference" if REFERENCE else GPU_NAME
REPORT = f"results/{ARCHIVED}/report.html"
if MEASURES:  # stencil depths the kernels cannot run on this GPU: refused here, before any job
    try:
        for _why in stencil_kernels.check_config(
            config["stencil"]["kernels"], GPU_NAME, GPU["arch"], config["precisions"]
        ):
            print(f"membound: refused: {_why} on {GPU_NAME}; no row", file=sys.stderr)
    except ValueError as err:
        raise WorkflowError(str(err))
# The reference profile renders this GPU and every other one with committed raw results (the
# others as modules of the Snakefile, see there); a module's config names its one GPU.
REFERENCE_GPUS = config.get("reference_gpus") or mbconfig.reference_gpus(GPU_NAME) if REFERENCE else []
GPU_FILE = f"config/gpus/{GPU_NAME}.yaml"
# The report's grouping: a category per GPU (its name), a subcategory per kind; the comparison of
# the GPUs its own category (rule compare).
REPORT_GPU = GPU_NAME.upper()
IN_FIGURES, IN_TABLES, IN_CLAIMS, IN_AE = (
    {"category": REPORT_GPU, "subcategory": kind} for kind in ("Figures", "Tables", "Claims", "Artifact evaluation")
)
IN_COMPARED_FIGURES, IN_COMPARED_CLAIMS = (
    {"category": "GPUs compared", "subcategory": k} for k in ("Figures", "Claims")
)
PLATFORMS = mbconfig.profiles()
print(f"membound: {RESULTS}/ from {' < '.join(LAYERS)}", file=sys.stderr)
# A second run on this results folder while one is going on stops here, naming that run (membound.run.runlock).
if is_main_snakefile() and takes_lock() and (_running := runlock.refuse_second(RESULTS)):
    raise WorkflowError(_running)
BACKEND = "cpu" if GPU["vendor"] == "cpu" else "cuda"  # amd: HIP; the harness skips tensor-core impls


# One job per GPU (docs/performance.md): a local run on a GPU profile runs --resources gpu=N GPU jobs
# at once, by default one per GPU of this node, each on a GPU of its own (membound.run.gpu_slot); a
# node that mixes GPU models, or N above its GPUs, stops here. SLURM jobs ask SLURM for their GPU.
if BACKEND == "cuda" and MEASURES and plans_local_jobs():
    try:
        _asked = resource_asked("gpu")
        _gpus = devices.visible(devices.listed())
        register_resource("gpu", devices.slots(_asked, _gpus, gpu_slot.scheduler_assigned()))
    except devices.DeviceError as err:
        raise WorkflowError(str(err))
elif BACKEND == "cpu" and plans_local_jobs() and not resource_asked("gpu"):
    register_resource("gpu", 1)  # the cpu profile's benchmark jobs one at a time, as its profile asks


onstart:
    runlock.hold(RESULTS)  # this run holds Snakemake's lock now; onsuccess and onerror drop the record
    # A GPU profile on a node without its device stops here, before any job runs; not where jobs
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
    sys.stderr.write(summary.text(_folders, ARCHIVED, REPORT))
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
    return lambda wildcards: mbprofiles.found("results", name)


include: "registry.smk"
