# Every call this workflow makes into Snakemake beyond its documented Snakefile API, in one place.
# Tested with Snakemake 9.27.1 (pyproject pins snakemake>=9.27.1,<9.28: a newer minor version is tested
# here first); tests/test_workflow.py::test_snakemake_internals_are_called_only_here holds the rest of
# the workflow to the public API (`rules`, `config`, `workflow.basedir`, the directives).
import shlex
import sys

from snakemake_interface_executor_plugins.settings import DeploymentMethod


def is_main_snakefile():
    """False inside a module (the reference profile's other GPUs, see the Snakefile)."""
    return workflow.modifier.is_main_snakefile()


def config_layers():
    """The --configfile files and the --config values as given, before Snakemake merges them: the
    config's layers keep their order and each error names its layer (membound.run.config)."""
    return workflow.config_settings.configfiles, workflow.config_settings.config


def profile_given():
    """True where the command line or $SNAKEMAKE_PROFILE names a --profile (Snakemake keeps no record of
    it; its executor, e.g. the slurm overlay's, is not yet known while the Snakefile is read)."""
    return bool(os.environ.get("SNAKEMAKE_PROFILE")) or any(a.split("=")[0] == "--profile" for a in sys.argv)


def invocation():
    """This Snakemake's command line, and its --config values and --configfile files as given."""
    configfiles, overrides = config_layers()
    return {
        "command": shlex.join(["snakemake", *sys.argv[1:]]),
        "config": overrides,
        "configfiles": [str(f) for f in configfiles],
    }


def plans_local_jobs():
    """True in the main process of a run whose jobs run on this node (not a cluster executor)."""
    return workflow.local_exec and workflow.is_main_process


def conda_prefix():
    """None without --sdm conda; else --conda-prefix ('' where unset)."""
    settings = workflow.deployment_settings
    if DeploymentMethod.CONDA not in settings.deployment_method:
        return None
    return settings.conda_prefix or ""


def is_dry_run():
    """True in a dry run (-n) of jobs that run on this node."""
    return workflow.dryrun and workflow.local_exec


def takes_lock():
    """True in the main process of a run that locks the working directory (not a dry run)."""
    return workflow.is_main_process and not workflow.dryrun


def is_touch():
    """True in a run with --touch, which runs no job and only marks outputs up to date."""
    return workflow.touch


def runs_here():
    """True where jobs run on this node (the local executor), also in a dry run."""
    return workflow.local_exec


def resource_asked(name):
    """The value of --resources `name` (None where unset)."""
    return workflow.global_resources.get(name).value


def register_resource(name, value):
    """Sets the global resource `name` (membound.run.devices: one slot per GPU of this node)."""
    workflow.register_resource(name, value)


def gpu_rule_names():
    """The rules that hold the resource `gpu` (the benchmark and counter rules)."""
    return [r.name for r in workflow.rules if "gpu" in r.resources]


def cores():
    """The run's --cores."""
    return workflow.cores
