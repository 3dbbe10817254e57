# Configuration, validation and the small helpers every stage uses.
from pathlib import Path

from snakemake.utils import min_version, validate

from membound import config as mbconfig
from membound import detect

min_version("9.0")

validate(config, schema="../schemas/config.schema.yaml")
try:
    GPU_NAME = config["gpu"]
    GPU = mbconfig.load_gpu(GPU_NAME)
    validate(GPU, schema="../schemas/gpu.schema.yaml")
    config = mbconfig.merge(config, GPU.get("workload", {}))
    MATRICES = mbconfig.select_matrices(config["matrices"])
except mbconfig.ConfigError as err:
    raise WorkflowError(str(err))

REFERENCE = config.get("reference", False)  # the reference profile: committed raw results, no device
RESULTS = f"results/reference/{GPU_NAME}" if REFERENCE else f"results/{GPU_NAME}"
GPU_FILE = f"config/gpus/{GPU_NAME}.yaml"
PLATFORMS = mbconfig.profiles()


onstart:
    # A GPU profile on a node without its device stops here, before any job runs.
    if not REFERENCE:
        try:
            detect.require(GPU_NAME, GPU)
        except mbconfig.ConfigError as err:
            raise WorkflowError(str(err))
