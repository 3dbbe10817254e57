"""The committed reference runs say which code measured them: every raw row names one membound
version and one clean git commit, the inventory's, and that commit holds that version."""

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / "results" / "reference"
GPUS = sorted(p.parent.name for p in ROOT.glob("*/raw"))


def rows(gpu: str) -> pd.DataFrame:
    raw = ROOT / gpu / "raw"
    paths = [p for p in raw.rglob("*.csv") if raw / "counters" not in p.parents and p.name != "matrices.csv"]
    return pd.concat([pd.read_csv(p, dtype=str).assign(file=str(p)) for p in paths], ignore_index=True)


def test_there_are_reference_runs():
    assert "h100" in GPUS


@pytest.mark.parametrize("gpu", GPUS)
def test_every_row_names_one_clean_commit_and_one_version(gpu):
    raw = rows(gpu)
    assert "commit" in raw, f"{gpu}: the raw rows predate the commit column"
    missing = raw.loc[raw["commit"].isna(), "file"].unique()
    assert not len(missing), f"{gpu}: rows without a commit in {missing[:3]}"
    assert raw["commit"].nunique() == 1 and raw["membound"].nunique() == 1, (gpu, raw["commit"].unique())
    commit = raw["commit"].iloc[0]
    assert not commit.endswith("+dirty"), f"{gpu}: measured with uncommitted changes"
    inventory = json.loads((ROOT / gpu / "raw" / "inventory.json").read_text())["workflow"]
    assert (inventory["commit"], inventory["dirty"]) == (commit, False)


@pytest.mark.parametrize("gpu", GPUS)
def test_the_commit_holds_the_version_the_rows_name(gpu):
    raw = rows(gpu)
    commit, version = raw["commit"].iloc[0], raw["membound"].iloc[0]
    init = subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:src/membound/__init__.py"],
                          capture_output=True, text=True)
    if init.returncode:
        pytest.skip(f"commit {commit} is not in this clone's history (a shallow clone?)")
    assert f'__version__ = "{version}"' in init.stdout
