"""The record of the commands that ran a workflow: one JSON line per Snakemake run that runs jobs
(its onstart), with the date, the membound version, the command line and its --config values."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import membound


def record(path, invocation: dict) -> None:
    """Append `invocation` (command, config, configfiles) to the JSON-lines file `path`, dated."""
    line = {"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "membound": membound.__version__, **invocation}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as log:
        log.write(json.dumps(line, default=str) + "\n")


def config_args(overrides: dict) -> list[str]:
    """`--config` words that give Snakemake `overrides` again (each value as JSON, which YAML reads)."""
    return [f"{key}={json.dumps(value)}" for key, value in overrides.items()]
