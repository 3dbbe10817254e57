"""A generated spec and its profile on disk: config/gpus/<name>.yaml and profiles/<name>/, both or neither."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import yaml

from membound.run import config

PROFILE = """\
# membound profile '{name}': measures config/gpus/{name}.yaml's device and writes results/{name}/.
# Written with that spec from the device (python -m membound.specs new); README, "Your GPU".
configfiles:          # its gpu (and mode): kept whatever --config adds (config/README.md)
  - profiles/{name}/membound.yaml
cores: all
# resources: gpu=N is left out: a GPU job per GPU of this node at once, each on its own GPU
# (membound.run.gpu_slot); --resources gpu=1 for one at a time (docs/performance.md)
logger:
  - membound         # after each job, the jobs left and an estimate of the time (membound.run.progress)
printshellcmds: true
rerun-incomplete: true
show-failed-logs: true
"""
SETTINGS = "# The profile '{name}': read through its config.v8+.yaml's `configfiles:`.\ngpu: {name}\n"


def text(spec: dict, name: str) -> str:
    """The spec as YAML, headed by what wrote it: each precision's peaks on a line, a source a line."""
    head = (f"# {spec['name']}: written from the device by `python -m membound.specs new`; every number's source is\n"
            f"# under sources. Review them (README, Your GPU), then commit this file and profiles/{name}/.\n")
    numbers = {k: v for k, v in spec.items() if k != "sources"}
    return (head + yaml.safe_dump(numbers, sort_keys=False, default_flow_style=None, width=1000)
            + yaml.safe_dump({"sources": spec["sources"]}, sort_keys=False, width=1000))


def write(spec: dict, name: str, root: Path | None = None, force: bool = False) -> list[Path]:
    """Write config/gpus/<name>.yaml and profiles/<name>/ under `root` (the checkout); FileExistsError
    where either exists (unless `force`). Checked against the spec schema first; whole or not at all."""
    root = root or config.REPO
    config.check(spec, "gpu", f"the spec written for {spec['name']}")
    spec_path, profile_dir = root / "config" / "gpus" / f"{name}.yaml", root / "profiles" / name
    if not force and (spec_path.exists() or profile_dir.exists()):
        raise FileExistsError(f"{spec_path if spec_path.exists() else profile_dir} exists: keep it, or rewrite "
                              "both with --force")
    with tempfile.TemporaryDirectory(dir=root / "profiles", prefix=f".{name}.") as tmp:
        staged = Path(tmp) / name
        staged.mkdir()
        (staged / "config.v8+.yaml").write_text(PROFILE.format(name=name))
        (staged / "membound.yaml").write_text(SETTINGS.format(name=name))
        (Path(tmp) / "spec.yaml").write_text(text(spec, name))
        if profile_dir.exists():
            shutil.rmtree(profile_dir)
        staged.rename(profile_dir)
        (Path(tmp) / "spec.yaml").replace(spec_path)
    return [spec_path, profile_dir]
