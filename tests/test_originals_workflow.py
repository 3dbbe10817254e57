"""The original codes through the workflow, without a GPU: fake executables (tests/originals_fakes.py)
named in config `originals` are planned, run and shown in Figures 7-8, Table 3, the claims and the
appendix; without them nothing changes."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

import originals_fakes as fakes
from membound import ae, families
from membound.analysis import claims
from membound.analysis.claims import report
from membound.run import config, raw
from membound.plots import fig8
from test_workflow import REPO, SNAKEMAKE, copy_checkout, snakemake

CPU = ["--profile", "profiles/cpu"]

pytestmark = pytest.mark.slow  # Snakemake started anew in each test, seconds at least


def originals_file(tmp_path, **extra) -> str:
    """A config file naming a fake executable of every code (stencils: a few each)."""
    exe = {code: fakes.write(tmp_path, code) for code in fakes.FAKES}
    block = {"dasp": {"executable": exe["dasp"], "commit": "8ce8363"},
             "ebisu": {"executables": {"2d5pt": exe["ebisu"], "3d7pt": exe["ebisu"]}, "commit": "9b6183a"},
             "convstencil": {"executables": {"2d5pt": exe["convstencil"], "3d7pt": exe["convstencil"]}},
             "lorastencil": {"executables": {"2d49pt": exe["lorastencil"]}},
             "brick": {"executables": {"3d7pt": exe["brick"]}},
             "babelstream": {"executable": exe["babelstream"]}, **extra}
    path = tmp_path / "originals.yaml"
    path.write_text(yaml.safe_dump({"originals": block}))
    return str(path)


def dry_run(*args):
    run = snakemake(*CPU, "all", "-n", "--forceall", *args)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def inputs(out: str, rule: str) -> str:
    return re.search(rf"^rule {rule}:\n    input: (.*)$", out, re.MULTILINE)[1]


def test_without_originals_no_job_and_no_rule_reads_one():
    out = dry_run()
    assert "rule original:" not in out and "raw/originals" not in out


def test_with_originals_every_code_case_is_a_job_and_the_outputs_read_them(tmp_path):
    out = dry_run("--configfile", "profiles/cpu/membound.yaml", originals_file(tmp_path), "--config", "matrices=[dc2, mip1]")
    jobs = set(re.findall(r"wildcards: code=(\w+), case=([^,]+), rep=", out))
    assert {("dasp", "dc2"), ("dasp", "mip1"), ("ebisu", "2d5pt"), ("ebisu", "3d7pt"), ("lorastencil", "2d49pt"),
            ("brick", "3d7pt"), ("babelstream", "2^10"), ("babelstream", "2^22")} <= jobs and len(jobs) == 8 + 13
    assert "raw/originals/ebisu/3d7pt.csv" in inputs(out, "fig8") and "raw/originals/dasp/dc2.csv" in inputs(out, "fig7")
    assert "raw/originals/dasp/mip1.csv" in inputs(out, "claims") and "raw/originals/brick/3d7pt.csv" in inputs(out, "table3")
    assert "raw/originals/babelstream/2^12.json" in inputs(out, "ae")
    assert "--shape star --dims 3 --radius 1 --depth 3 --domain 48x48x48 --steps 6" in out


def test_paper_problems_put_table3s_domains_on_the_command_lines(tmp_path):
    out = dry_run("--configfile", "profiles/cpu/membound.yaml", originals_file(tmp_path),
                  "--config", "originals={problems: paper}")
    assert "--domain 2560x234x312" in out and "--domain 1024x1024x1024" in out and "--domain 9000x9000" in out


def test_a_bad_executable_stops_the_run_before_any_job_in_one_line(tmp_path):
    run = snakemake(*CPU, "-n", "--configfile", "profiles/cpu/membound.yaml",
                    originals_file(tmp_path, dasp={"executable": str(tmp_path / "nowhere")}))
    assert run.returncode != 0
    assert (f"originals.dasp.executable: {tmp_path / 'nowhere'} does not exist; build DASP by its own instructions "
            "(docs/originals.md)") in run.stdout + run.stderr


def test_outputs_without_original_rows_are_those_of_the_in_house_rows_alone():
    rows = raw.read(REPO / "tests" / "fixtures" / "claims" / "h100_repeats.csv")   # as the rules read them
    gpu = config.load_gpu("h100")
    stencils = config.assemble([str(REPO / "profiles" / "h100" / "membound.yaml")], {}, blocks=families.config_blocks())[0]["stencil"]["kernels"]
    ebisu = rows[(rows["kernel"] == "stencil") & (rows["role"] == "EBISU")].assign(impl="ebisu_original")
    both = pd.concat([rows, ebisu], ignore_index=True)
    alone, with_originals = (claims.check(r, gpu, stencils, 0.02, 0.6, precisions=["fp64"]) for r in (rows, both))
    assert report.to_json(alone) == report.to_json({**with_originals, "claims": with_originals["claims"][:7],
                                                    "measured": alone["measured"]})
    assert [c["id"] for c in with_originals["claims"]] == ["C1", "C2", "C3", "C4", "C4s", "C5", "C5 summary", "C4 originals"]
    c4 = with_originals["claims"][-1]
    assert c4["sides"] == "tensor cores: tc (in-house, ConvStencil role); CUDA cores: ebisu_original"
    assert c4["estimate"] == pytest.approx(with_originals["claims"][3]["estimate"])   # the same times, as rates
    assert fig8.data(rows, gpu).equals(fig8.data(both, gpu)[lambda d: ~d["impl"].str.endswith("_original")]
                                       .reset_index(drop=True))
    assert ae.appendix(None, alone, pd.DataFrame({"part": [], "jobs": [], "wall time": [], "seconds": []}), "h100",
                       "h100", "results/h100") == ae.appendix(None, alone, pd.DataFrame(
                           {"part": [], "jobs": [], "wall time": [], "seconds": []}), "h100", "h100", "results/h100",
                           originals=[])


@pytest.mark.slow
def test_cpu_run_with_fake_originals_shows_them_in_figures_table3_claims_and_appendix(tmp_path):
    copy = copy_checkout(tmp_path / "membound")
    env = {"PYTHONPATH": str(copy / "src"), "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    run = subprocess.run([*SNAKEMAKE, *CPU, "fig7", "fig8", "table3", "ae", "--cores", "2", "--configfile",
                          "profiles/cpu/membound.yaml", originals_file(tmp_path), "--config", "matrices=[dc2, mip1]",
                          "scale={log2_min: 10, log2_max: 12}", "gemv={sizes: [64]}",
                          "stencil={domain_2d: [256, 256], domain_3d: [24, 24, 24]}"],
                         cwd=copy, capture_output=True, text=True,
                         env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "no-profiles"), **env})
    assert run.returncode == 0, run.stderr[-3000:]
    out = copy / "results" / "cpu"
    result = json.loads((out / "claims.json").read_text())
    assert [c["id"] for c in result["claims"]][-2:] == ["C3 originals", "C4 originals"]
    assert result["claims"][-2]["sides"] == "tensor cores: dasp_original; CUDA cores: cusparse_dasp_original"
    spmv = pd.read_csv(out / "figures" / "fig7_spmv.csv")
    dasp = spmv[spmv["impl"] == "dasp_original"]
    assert len(dasp) == 2 and dasp["value"].tolist() == pytest.approx([fakes.RATE] * 2)
    stencil = pd.read_csv(out / "figures" / "fig8_stencil.csv")
    assert set(stencil["impl"]) >= {"ebisu_original", "convstencil_original", "lorastencil_original", "brick_original"}
    assert stencil.loc[stencil["impl"] == "lorastencil_original", "value"].tolist() == pytest.approx([fakes.RATE], rel=1e-3)
    table3 = pd.read_csv(out / "tables" / "table3_stencils.csv").set_index("stencil")
    assert table3.loc["3d7pt", "EBISU original"] == "24x24x24 (3)" and table3.loc["3d7pt", "Brick original"] == "24x24x24 (1)"
    appendix = (out / "ae" / "appendix.md").read_text()
    assert "## Original codes" in appendix and "| DASP " in appendix and "9b6183a" in appendix
    assert "| original codes |" in appendix
    raw.read_all(sorted((out / "raw" / "originals").rglob("*.csv")))   # every raw file reads whole, as raw rows
