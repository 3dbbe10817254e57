"""Table 3, the appendix's run times and text, and the manifest (checked with sha256sum -c)."""

import json
import re
import shutil
import subprocess

import pandas as pd
import pytest

import membound
from membound import ae
from membound.ae import tables
from membound.ae.__main__ import main as ae_main
from membound.analysis import claims, reproduced, table3
from membound.analysis.claims import report
from membound.run import config, measure

STENCILS = {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3},
            "3d27pt": {"shape": "box", "dims": 3, "radius": 1, "depth": 3}}
ROLES = (("cc_naive", "cuda_core", "Brick"), ("cc_tb", "cuda_core", "EBISU"), ("tc", "tensor_core", "ConvStencil"))
RUN = {"device": "NVIDIA H100 80GB HBM3", "host": "gpu1", "date": "2026-01-02T03:04:05Z"}


def stencil_rows(name, domain, depth, t_tc=1.2):
    return [{"kernel": "stencil", "impl": impl, "unit": unit, "role": role, "problem": name, "domain": domain,
             "depth": 1 if role == "Brick" else depth, "steps": 12, "n": 1000, "source": "synthetic",
             "t_median_s": t_tc if unit == "tensor_core" else 1.0, **RUN} for impl, unit, role in ROLES]


def spmv_rows(name, source):
    return [{"kernel": "spmv", "impl": impl, "unit": unit, "role": role, "problem": name, "rows": 10, "cols": 10,
             "nnz": 50, "source": source, "t_median_s": 1.0, **RUN}
            for impl, unit, role in (("cusparse_csr", "cuda_core", "cuSPARSE"), ("dasp_tc", "tensor_core", "DASP"))]


def rows(*groups):
    return pd.DataFrame([r for g in groups for r in g]).reindex(columns=measure.ROW_COLUMNS)


def test_table3_reads_what_ran_and_names_the_differences(tmp_path):
    raw = rows(stencil_rows("2d5pt", "10240x10240", 3), stencil_rows("3d27pt", "512x512x512", 3))
    t = table3.table(raw, STENCILS).set_index("stencil")
    assert t.loc["2d5pt", "K"] == 5 and t.loc["3d27pt", "K"] == 27
    assert t.loc["2d5pt", "ConvStencil"] == "10240x10240 (3)" == t.loc["2d5pt", "ConvStencil (paper)"]
    assert t.loc["2d5pt", "Brick (paper)"] == "-" and t.loc["3d27pt", "Brick"] == "512x512x512 (1)"
    assert t.loc["3d27pt", "EBISU (paper)"] == "234x312x2560 (3)" and t.loc["2d5pt", "steps"] == "12"
    diffs = table3.differences(table3.runs(raw, STENCILS))
    assert "ConvStencil ran 512x512x512 (paper 1024x1024x1024)" in diffs
    assert "EBISU ran 10240x10240 (paper 9000x9000) and 512x512x512 (paper 234x312x2560)" in diffs
    assert "Brick also ran 2d5pt (not in the paper)" in diffs
    table3.write(raw, STENCILS, tmp_path / "t.csv", tmp_path / "t.md", "NVIDIA H100")
    md = (tmp_path / "t.md").read_text()
    assert md.startswith("# Table 3: the stencils and the domains (depth) run on NVIDIA H100")
    assert "Brick also ran 2d5pt" in md and len(pd.read_csv(tmp_path / "t.csv")) == 2


def test_table3_marks_a_stencil_that_did_not_run():
    t = table3.table(rows(stencil_rows("2d5pt", "64x64", 3)), STENCILS).set_index("stencil")
    assert t.loc["3d27pt", "ConvStencil"] == "-"
    assert "ConvStencil did not run 3d27pt" in table3.differences(table3.runs(rows(stencil_rows("2d5pt", "64x64", 3)), STENCILS))


def test_run_times_sum_each_family(tmp_path):
    """Benchmark files of the generic rules (<rule>_<family>/<case>) and of the old per-family rules
    (<rule>-<case>, as the committed reference runs have them)."""
    tsv = "s\th:m:s\tmax_rss\n{}\t0:00:00\t10\n"
    for name, s in (("bench_scale", 100), ("bench_spmv-webbase-1M", 20), ("bench_spmv/dc2.rep1", 30),
                    ("bench_sp", 4), ("convert_matrix-cant", 5), ("counters_stencil/2d5pt", 7), ("inventory", 1)):
        (tmp_path / f"{name}.tsv").parent.mkdir(exist_ok=True)
        (tmp_path / f"{name}.tsv").write_text(tsv.format(s))
    t = ae.run_times(tmp_path).set_index("part")
    assert t.loc["SpMV", "jobs"] == 2 and t.loc["SpMV", "seconds"] == 50 and t.loc["other", "jobs"] == 2
    assert t.loc["SCALE", "wall time"] == "0:01:40" and t.loc["matrices", "seconds"] == 5
    assert t.loc["counters", "seconds"] == 7 and t.loc["other", "seconds"] == 5
    assert t.loc["stencils", "wall time"] == "not recorded"


def test_run_times_leave_out_families_the_run_has_not():
    parts = set(ae.run_times("/nonexistent", ["scale", "spmv", "stencil"])["part"])
    assert "GEMV" not in parts and {"SCALE", "SpMV", "stencils"} <= parts


def test_run_times_without_benchmark_files(tmp_path):
    t = ae.run_times(tmp_path / "missing")
    assert list(t["part"]) == ["matrices", "GEMV", "SCALE", "SpMV", "stencils", "counters"]
    assert (t["wall time"] == "not recorded").all()


INVENTORY = {
    "date": "2026-01-02T00:00:00Z",
    "gpus": {"status": "present", "devices": [{"index": "0", "name": "NVIDIA H100 80GB HBM3", "driver_version": "550",
                                                "memory.total": "81559 MiB", "clocks.max.sm": "1980 MHz",
                                                "clocks.max.mem": "2619 MHz", "clocks.sm": "", "clocks.mem": "",
                                                "power.limit": "700.00 W"}]},
    "cuda": {"status": "present", "api": "CUDA", "runtime": "12.4", "driver": "12.4", "cupy": "13.3.0", "devices": []},
    "nvcc": {"status": "present", "version": "12.4", "output": []},
    "ncu": {"status": "absent", "why": "ncu not found or failed"},
    "rocm_smi": {"status": "absent", "why": "rocm-smi not found or failed"},
    "rocprof": {"status": "present", "version": "", "output": ["x"]},
    "cpu": {"model": "Xeon", "arch": "x86_64", "logical_cpus": 16, "usable_cpus": 16},
    "memory": {"status": "present", "total_GiB": 128.0},
    "system": {"os": "Linux", "distribution": "Ubuntu 22.04", "kernel": "5.15", "host": "gpu1"},
    "python": {"version": "3.11.7", "implementation": "CPython", "executable": "/x/python"},
    "packages": {"snakemake": "9.27.1", "cupy": "13.3.0"},
    "workflow": {"status": "present", "commit": "abc123", "dirty": True},
}


def test_appendix_has_inventory_commands_times_and_verdicts(tmp_path):
    result = claims.check(rows(stencil_rows("2d5pt", "64x64", 3, t_tc=0.5)), config.load_gpu("h100"), STENCILS, 0.02, 0.6)
    result = json.loads(report.to_json(result))                      # as rule ae reads it
    (tmp_path / "bench_stencil-2d5pt.tsv").write_text("s\n3725\n")
    text = ae.appendix(INVENTORY, result, ae.run_times(tmp_path), "h100", "h100", "results/h100",
                       platforms=["cpu", "h100", "h100_pcie"])
    assert "NVIDIA H100 80GB HBM3; driver 550; memory 81559 MiB" in text and "(profiles: cpu, h100, h100_pcie;" in text
    assert "absent (ncu not found or failed)" in text and "present (its output is in inventory.json)" in text
    assert "abc123 (dirty: tracked files modified)" in text and "CUDA 12.4 / 12.4 (CuPy 13.3.0)" in text
    assert "make run" in text and "snakemake --profile h100 all" in text and "--profile reference all" in text
    assert re.search(r"\| stencils +\| +1 \| 1:02:05 +\|", text) and re.search(r"\| SCALE +\| +0 \| not recorded \|", text)
    assert re.search(r"\| C4 +\| fp64 +\| Sec. 5.4, Figure 8 +\| INCONCLUSIVE +\| 0.5 ", text)   # one ratio: no interval
    assert re.search(r"\| C4 +\| fp16 +\| Sec. 5.4, Figure 8 +\| NO DATA +\| no data", text) and "SURROGATE" not in text
    assert "sha256sum -c results/h100/ae/manifest.sha256" in text


def test_appendix_says_surrogate_and_not_recorded():
    raw = rows(stencil_rows("2d5pt", "64x64", 3), spmv_rows("dc2", "surrogate"))
    result = json.loads(report.to_json(claims.check(raw, config.load_gpu("cpu"), STENCILS, 0.02, 0.6)))
    text = ae.appendix({**INVENTORY, "gpus": {"status": "absent", "why": "nvidia-smi not found or failed"}},
                       result, ae.run_times("/nonexistent"), "cpu", "cpu", "results/cpu")
    assert "SURROGATE MATRICES" in text and "NO TENSOR CORES" in text
    assert "not recorded (no Snakemake benchmark files)" in text
    assert "| GPU  " in text and "absent (nvidia-smi not found or failed)" in text
    text = ae.appendix(None, result, ae.run_times("/x"), "reference", "h100", "results/reference/h100")
    assert "not recorded (this run's raw/ has no inventory.json)" in text
    assert "--profile h100 bench_scale --forcerun bench" in text and "--profile reference fig6" in text


def test_appendix_names_the_slurm_jobs_that_measured_or_the_local_executor():
    raw = rows(stencil_rows("2d5pt", "64x64", 3))
    local = json.loads(report.to_json(claims.check(raw, config.load_gpu("h100"), STENCILS, 0.02, 0.6)))
    assert "Executor: local" in ae.appendix(INVENTORY, local, ae.run_times("/x"), "h100", "h100", "results/h100")
    raw["slurm_job"] = [17 + i % 2 for i in range(len(raw))]
    raw.loc[0, "slurm_job"] = None                                   # a row from a run outside SLURM
    remote = json.loads(report.to_json(claims.check(raw, config.load_gpu("h100"), STENCILS, 0.02, 0.6)))
    text = ae.appendix(INVENTORY, remote, ae.run_times("/x"), "h100", "h100", "results/h100")
    assert "Executor: SLURM (snakemake-executor-plugin-slurm" in text and "SLURM jobs 17, 18." in text
    assert "`snakemake --profile h100 --profile slurm all`" in text


CHECKLIST = ["Algorithm", "Program", "Compilation", "Binary", "Data set", "Run-time environment", "Hardware",
             "Execution", "Metrics", "Output", "Experiments", "How much disk space required (approximately)?",
             "How much time is needed to prepare workflow (approximately)?",
             "How much time is needed to complete experiments (approximately)?", "Publicly available?",
             "Code licenses (if publicly available)?", "Workflow framework used?", "Archived (provide DOI)?"]


def test_appendix_carries_the_acm_check_list_from_the_inventory_config_and_timings(tmp_path):
    raw = rows(stencil_rows("2d5pt", "64x64", 3), spmv_rows("dc2", "surrogate"))
    result = json.loads(report.to_json(claims.check(raw, config.load_gpu("h100"), STENCILS, 0.02, 0.6)))
    (tmp_path / "bench_stencil-2d5pt.tsv").write_text("s\n3725\n")
    (tmp_path / "convert_matrix-dc2.tsv").write_text("s\n65\n")
    setup = {"families": ["SpMV", "stencils"], "precisions": ["fp64", "fp16"], "repeats": 5, "matrices": 21,
             "license": "BSD-3-Clause", "disk_bytes": 3 * 2**20, "gpu": "h100"}
    table = ae.checklist(INVENTORY, result, ae.run_times(tmp_path), setup)
    assert list(table["item"]) == CHECKLIST
    value = dict(zip(table["item"], table["value"]))
    assert value["Hardware"] == ("1 x NVIDIA H100 80GB HBM3 (81559 MiB); host CPU Xeon, 16 logical CPUs, 128.0 GiB"
                                 ) and "CuPy 13.3.0" in value["Compilation"]
    assert f"with its {result['statistics']['interval']};" in value["Metrics"] and "bootstrap" not in value["Metrics"]
    assert "geometric-mean ratio" not in value["Metrics"]    # the estimand is the interval's: a median over problems
    assert value["Run-time environment"] == "Ubuntu 22.04 (Linux), kernel 5.15, Python 3.11.7"
    assert value["Data set"].startswith("21 SpMV matrices: SURROGATE stand-ins")
    assert "SpMV, stencils in fp64, fp16, 5 repetitions" in value["Experiments"]
    assert value["How much disk space required (approximately)?"].startswith("3 MiB")
    assert value["How much time is needed to prepare workflow (approximately)?"].startswith("matrices 0:01:05")
    assert value["How much time is needed to complete experiments (approximately)?"].startswith("1:02:05")
    assert value["Code licenses (if publicly available)?"] == "BSD-3-Clause"
    assert value["Workflow framework used?"] == "Snakemake 9.27.1"
    assert value["Archived (provide DOI)?"].startswith("not yet: CITATION.cff names no DOI")
    doi = ae.checklist(INVENTORY, result, ae.run_times(tmp_path), {**setup, "doi": "10.5281/zenodo.123"})
    assert dict(zip(doi["item"], doi["value"]))["Archived (provide DOI)?"] == "doi:10.5281/zenodo.123"
    text = ae.appendix(INVENTORY, result, ae.run_times(tmp_path), "h100", "h100", "results/h100", setup=setup)
    assert "## ACM artifact check-list" in text and all(item in text for item in CHECKLIST)
    assert "ACM artifact check-list" not in ae.appendix(INVENTORY, result, ae.run_times(tmp_path), "h100", "h100",
                                                        "results/h100")


def test_the_license_is_pyprojects_else_mit(tmp_path):
    assert tables.license_of(tmp_path) == "MIT"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nlicense = "BSD-3-Clause"\n')
    assert tables.license_of(tmp_path) == "BSD-3-Clause"
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nlicense = {text = "MIT"}\n')
    assert tables.license_of(tmp_path) == "MIT"


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="no sha256sum here")
def test_manifest_checks_with_sha256sum(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                       # paths are relative to the repository root
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("gpu: cpu\n")
    raw = tmp_path / "results" / "cpu" / "raw" / "spmv"
    raw.mkdir(parents=True)
    (raw / "dc2.csv").write_text("a,b\n1,2\n")
    (raw.parent / "scale.csv").write_text("n\n1\n")
    (tmp_path / "results" / "cpu" / "claims.md").write_text("# claims\n")
    text = ae.manifest(["config/config.yaml", "results/cpu/claims.md", "results/cpu/raw/scale.csv"],
                       ["results/cpu/raw", "results/cpu/figures"])
    names = [line.split("  ", 1)[1] for line in text.splitlines()]
    assert names == ["config/config.yaml", "results/cpu/claims.md", "results/cpu/raw/scale.csv",
                     "results/cpu/raw/spmv/dc2.csv"]
    (tmp_path / "manifest.sha256").write_text(text)
    assert subprocess.run(["sha256sum", "-c", "manifest.sha256"], capture_output=True, check=False).returncode == 0
    (raw / "dc2.csv").write_text("changed\n")
    assert subprocess.run(["sha256sum", "-c", "manifest.sha256"], capture_output=True, check=False).returncode != 0


def test_bandwidth_sets_each_depth_1_stencil_against_b_and_the_copy_of_its_arrays(tmp_path):
    from membound.analysis import bandwidth

    def stencil(precision, domain, n, value, rep=0, impl="cc_naive"):
        return {"kernel": "stencil", "impl": impl, "unit": "cuda_core", "role": "Brick", "problem": "2d5pt",
                "domain": domain, "depth": 1, "n": n, "precision": precision, "value": value, "rep": rep, **RUN}

    def copy(precision, n, value, rep=0, role="STREAM", steps=12):
        return {"kernel": "scale", "impl": "cuda_core", "unit": "cuda_core", "role": role, "problem": f"n={n}",
                "n": n, "precision": precision, "value": value, "rep": rep, "steps": steps, **RUN}

    st = rows([stencil("fp64", "100x100", 10**4, v, r) for r, v in enumerate((200.0, 250.0, 260.0))]
              + [stencil("fp16", "100x100", 10**4, 900.0), stencil("fp64", "10x10x10", 1000, 1.0)]
              + [{**stencil("fp64", "100x100", 10**4, 300.0), "depth": 3, "impl": "cc_tb", "role": "EBISU"}])
    sc = rows([copy("fp64", 10**4, v, r) for r, v in enumerate((4000.0, 4200.0, 4100.0))]
              + [copy("fp64", 10**4, 9999.0, role="STREAM twin"), copy("fp16", 10**4, 3600.0),
                 copy("fp16", 10**4, 3000.0, steps=None), copy("fp64", 1000, 5000.0, steps=None)])
    t = bandwidth.table(st, sc, 4.8).set_index(["precision", "domain"])
    assert len(t) == 3                                    # depth 3 left out
    fp64 = t.loc[("fp64", "100x100")]                     # the medians over repetitions: 250 GStencil/s, 4100 GB/s
    assert fp64["GBs"] == pytest.approx(4000.0) and fp64["share_of_B"] == pytest.approx(4000 / 4800)
    assert fp64["copy_GBs"] == pytest.approx(4100.0) and fp64["share_of_copy"] == pytest.approx(4000 / 4100)
    fp16 = t.loc[("fp16", "100x100")]                     # 2-byte elements: 900 x 4 bytes; the 12-launch copy
    assert fp16["GBs"] == pytest.approx(3600.0) and fp16["share_of_copy"] == pytest.approx(1.0)
    assert fp16["copy_launches"] == 12 and t.loc[("fp64", "10x10x10"), "copy_launches"] == 1   # else launch by launch
    assert t.loc[("fp64", "10x10x10"), "copy_GBs"] == pytest.approx(5000.0)
    bandwidth.write(st, sc, {"name": "NVIDIA H200", "memory_bandwidth_TBs": 4.8}, tmp_path / "b.csv", tmp_path / "b.md")
    assert "No SCALE row" not in (tmp_path / "b.md").read_text()
    bandwidth.write(st, sc[sc["n"] != 1000], {"name": "NVIDIA H200", "memory_bandwidth_TBs": 4.8}, tmp_path / "b.csv",
                    tmp_path / "b.md")
    assert "No SCALE row of the fields 10x10x10" in (tmp_path / "b.md").read_text()


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


def test_the_archive_holds_the_code_at_its_commit_and_the_runs_files(tmp_path):
    import tarfile

    from membound.run import artifact
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "code.py").write_text("x = 1\n")
    (repo / "scratch.txt").write_text("untracked\n")
    with pytest.raises(artifact.ArtifactError, match="not a git checkout"):
        artifact.commit(repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "src")
    _git(repo, "commit", "-q", "-m", "code")
    raw = repo / "results" / "cpu" / "raw"
    raw.mkdir(parents=True)
    (raw / "scale.csv").write_text("n\n1\n")
    (repo / "results" / "cpu" / "manifest.sha256").write_text("x  results/cpu/raw/scale.csv\n")
    out = tmp_path / "bundle.tar.gz"
    names = artifact.write(out, repo, ["results/cpu/raw/scale.csv", "results/cpu/manifest.sha256"],
                           {artifact.RECORD: '{"profile": "cpu"}\n'})
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout[:12]
    with tarfile.open(out) as bundle:
        assert set(bundle.getnames()) == set(names)
        assert bundle.extractfile(f"membound-{sha}/ARCHIVE.json").read() == b'{"profile": "cpu"}\n'
        assert bundle.extractfile(f"membound-{sha}/src/code.py").read() == b"x = 1\n"
        assert bundle.extractfile(f"membound-{sha}/results/cpu/raw/scale.csv").read() == b"n\n1\n"
    assert f"membound-{sha}/scratch.txt" not in names             # untracked: not the code at its commit
    (repo / "src" / "code.py").write_text("x = 2\n")
    with pytest.raises(artifact.ArtifactError, match="uncommitted changes in src/code.py"):
        artifact.write(tmp_path / "again.tar.gz", repo, [])
    assert not (tmp_path / "again.tar.gz").exists()


def test_the_hardware_is_the_inventorys_gpus_counted(tmp_path):
    two = {**INVENTORY, "gpus": {"status": "present", "devices": [INVENTORY["gpus"]["devices"][0]] * 2}}
    assert ae.hardware(two).startswith("2 x NVIDIA H100 80GB HBM3 (81559 MiB); host CPU Xeon")
    assert ae.hardware({**INVENTORY, "gpus": {"status": "absent", "why": "x"}}) == "" == ae.hardware(None)


def _cpu_claims(source="surrogate"):
    raw = rows(stencil_rows("2d5pt", "64x64", 3), spmv_rows("dc2", source))
    return json.loads(report.to_json(claims.check(raw, config.load_gpu("h100"), STENCILS, 0.02, 0.6)))


def test_the_appendix_states_the_interval_method_the_claims_record_and_the_datas_licenses():
    result = _cpu_claims()
    result["statistics"]["interval"] = "99% made-up interval of the claims module"
    text = ae.appendix(INVENTORY, result, ae.run_times("/x"), "h100", "h100", "results/h100")
    assert "Each estimate's interval: the 99% made-up interval of the claims module." in text
    assert "bootstrap" not in text and f"membound {membound.__version__} from" in text
    assert ae.SURROGATE_DATA in text and "CC BY 4.0" not in text and "doi:10.1145/3725798.3725803" in text
    real = ae.appendix(INVENTORY, _cpu_claims("real"), ae.run_times("/x"), "h100", "h100", "results/h100")
    assert "the SuiteSparse Matrix Collection (Davis and Hu" in real and "licensed CC BY 4.0" in real


def test_the_appendix_gives_each_reference_runs_time_and_what_counts_as_reproduced(tmp_path):
    for gpu, seconds in (("h100", (3000, 600)), ("h200", (1200,))):
        bench = tmp_path / gpu / "raw" / "benchmarks"
        bench.mkdir(parents=True)
        for i, s in enumerate(seconds):
            (bench / f"bench_scale.rep{i}.tsv").write_text(f"s\n{s}\n")
        (bench / "convert_matrix-dc2.tsv").write_text("s\n99\n")         # matrices: not the measurement
    (tmp_path / "h100" / "raw" / "inventory.json").write_text(json.dumps(INVENTORY))
    refs = {gpu: str(tmp_path / gpu) for gpu in ("h100", "h200")}
    table = ae.reference_times(refs).set_index("GPU")
    assert table.loc["h100", "jobs"] == 2 and table.loc["h100", "summed job time"] == "1:00:00"
    assert table.loc["h100", "hardware"].startswith("1 x NVIDIA H100") and table.loc["h200", "hardware"] == "not recorded"
    text = ae.appendix(INVENTORY, _cpu_claims(), ae.run_times("/x"), "h100", "h100", "results/h100", references=refs)
    assert re.search(r"\| h100 +\| 1 x NVIDIA H100 .*\| +2 \| 1:00:00 ", text) and "## Results Reproduced" in text
    assert reproduced.criteria() in text
    assert "`python -m membound.ae reproduced results/h100 results/reference/h100` checks them" in text
    cpu = ae.appendix(INVENTORY, _cpu_claims(), ae.run_times("/x"), "cpu", "cpu", "results/cpu", references=refs)
    assert "No reference run of `cpu` is committed" in cpu and "committed: h100, h200" in cpu
    itself = ae.appendix(INVENTORY, _cpu_claims(), ae.run_times("/x"), "reference", "h100", "results/reference/h100",
                         references=refs)
    assert ("This is the committed reference run of `h100`: `python -m membound.ae reproduced results/h100 "
            "results/reference/h100` checks a run of it") in itself and "reproduced results/reference/h100 results" not in itself


def test_the_doi_is_citation_cffs(tmp_path):
    assert tables.doi_of(tmp_path) is None
    (tmp_path / "CITATION.cff").write_text("cff-version: 1.2.0\ndoi: 10.5281/zenodo.42\n")
    assert tables.doi_of(tmp_path) == "10.5281/zenodo.42"


def _run_folder(folder, verdicts, values):
    (folder / "figures").mkdir(parents=True)
    (folder / "claims.json").write_text(json.dumps({"claims": [{"id": c, "precision": p, "verdict": v}
                                                               for (c, p), v in verdicts.items()]}))
    pd.DataFrame([{"n": n, "precision": "fp64", "unit": u, "role": "STREAM", "impl": u, "metric": "GB/s", "value": v,
                   "gpu": "H100", "date": "2026"} for (n, u), v in values.items()]).to_csv(folder / "figures" / "fig6_scale.csv",
                                                                                        index=False)


VERDICTS = {("C1", "fp64"): "SUPPORTED", ("C2", "fp64"): "LEVEL", ("C3", "fp16"): "CONTRADICTED"}
VALUES = {(1024, "cuda_core"): 100.0, (1024, "tensor_core"): 100.0, (2**20, "cuda_core"): 3000.0}


def test_reproduced_checks_the_verdicts_and_each_figures_ratios(tmp_path, capsys):
    _run_folder(tmp_path / "ref", VERDICTS, VALUES)
    _run_folder(tmp_path / "same", {**VERDICTS, ("C2", "fp64"): "SUPPORTED", ("C1", "bf16"): "LEVEL"},
                {k: v * 1.1 for k, v in VALUES.items()})              # LEVEL may move; 10% off: within both ratios
    assert reproduced.misses(tmp_path / "same", tmp_path / "ref") == []
    assert ae_main(["reproduced", str(tmp_path / "same"), str(tmp_path / "ref")]) == 0
    _run_folder(tmp_path / "off", {**VERDICTS, ("C3", "fp16"): "INCONCLUSIVE"},
                {(1024, "cuda_core"): 100.0 * reproduced.CASE_RATIO * 1.01, (2**20, "cuda_core"): 3000.0})
    lines = reproduced.misses(tmp_path / "off", tmp_path / "ref")
    assert lines[0] == "claim C3 (fp16): INCONCLUSIVE, the reference CONTRADICTED"
    assert lines[1].startswith("fig6_scale: precision fp64, unit cuda_core, role STREAM, impl cuda_core, metric GB/s, "
                               "n 1024: 151.5, 1.51 times the reference's 100")
    assert lines[2] == ("fig6_scale: precision fp64, unit tensor_core, role STREAM, impl tensor_core, metric GB/s, "
                        "n 1024: not plotted")
    assert lines[3] == f"fig6_scale: geometric mean ratio 1.23, outside a factor {reproduced.FIGURE_RATIO:g}"
    assert len(lines) == 4
    old = pd.read_csv(tmp_path / "same" / "figures" / "fig6_scale.csv")
    old.drop(columns="role").to_csv(tmp_path / "same" / "figures" / "fig6_scale.csv", index=False)
    assert reproduced.misses(tmp_path / "same", tmp_path / "ref") == [
        "fig6_scale: the run's figure data has no column role: render both with one membound version"]
    _run_folder(tmp_path / "slow", VERDICTS, {k: v / 1.3 for k, v in VALUES.items()})   # each within 1.5, all 1.3 off
    assert reproduced.misses(tmp_path / "slow", tmp_path / "ref") == [
        f"fig6_scale: geometric mean ratio 0.769, outside a factor {reproduced.FIGURE_RATIO:g}"]
    capsys.readouterr()
    assert ae_main(["reproduced", str(tmp_path / "slow"), str(tmp_path / "none")]) == 1
    assert capsys.readouterr().out.startswith(f"{tmp_path / 'none' / 'claims.json'}: missing; render it first")


def test_verify_names_a_folder_that_is_no_unpacked_archive_and_each_differing_file(tmp_path, capsys):
    from membound.run import verify
    assert ae_main(["verify", str(tmp_path)]) == 1
    assert capsys.readouterr().out.startswith(f"{tmp_path / 'ARCHIVE.json'}: missing: run this in the folder")
    (tmp_path / "a.csv").write_text("a\n")
    (tmp_path / "b.csv").write_text("b\n")
    (tmp_path / "m.sha256").write_text(ae.manifest([tmp_path / "a.csv", tmp_path / "b.csv"], []).replace(f"{tmp_path}/", ""))
    (tmp_path / "b.csv").write_text("changed\n")
    (tmp_path / "a.csv").unlink()
    assert verify.differing(verify.manifest(tmp_path / "m.sha256"), tmp_path, "as unpacked") == [
        "a.csv: missing (as unpacked)", "b.csv: differs from the manifest (as unpacked)"]
    record = {"profile": "cpu", "config": {"matrices": ["dc2"], "counters": False}}
    assert verify.render_command(record)[3:] == ["--profile", "profiles/cpu", "all", "--forceall", "--config",
                                                 'matrices=["dc2"]', "counters=false", "render_only=true"]
    record["configfiles"] = ["profiles/cpu/membound.yaml", "configfiles/1-originals.yaml"]
    assert verify.render_command(record)[7:11] == ["--configfile", *record["configfiles"], "--config"]


def test_the_archive_keeps_each_configfile_in_order_copying_those_outside_the_checkout(tmp_path):
    from membound.run import artifact
    repo, elsewhere = tmp_path / "repo", tmp_path / "originals.yaml"
    (repo / "profiles").mkdir(parents=True)
    (repo / "profiles" / "mine.yaml").write_text("counters: false\n")
    elsewhere.write_text("originals: {dasp: {executable: /opt/dasp}}\n")
    inside, texts, paths = artifact.configfiles(repo, ["profiles/mine.yaml", str(elsewhere), str(repo / "profiles/mine.yaml")])
    assert inside == ["profiles/mine.yaml"] * 2 and paths == ["profiles/mine.yaml", "configfiles/1-originals.yaml",
                                                            "profiles/mine.yaml"]
    assert texts == {"configfiles/1-originals.yaml": elsewhere.read_text()}
