"""The workflow on a real SLURM (marker `slurm`): a one-node cluster on localhost (slurm_cluster.py)
runs the cpu profile through the cluster overlay profiles/slurm, its site block set for that
cluster, beside a local run of the same profile; then a job killed with scancel is rerun."""

import collections
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from cpu_workflow import RESULTS, WORKLOAD
from slurm_cluster import Cluster, ClusterError, missing_programs
from test_workflow import REPO, SNAKEMAKE, copy_checkout, snakemake

pytestmark = pytest.mark.slurm

OVERLAY = REPO / "profiles" / "slurm" / "config.v8+.yaml"


def gpu_rules() -> set[str]:
    """The rules of workflow/rules/*.smk that ask for a GPU (resource gpu=1)."""
    rules = set()
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        for block in re.split(r"^rule ", smk.read_text(), flags=re.MULTILINE)[1:]:
            if re.search(r"^\s+gpu=1,", block, re.MULTILINE):
                rules.add(block.split(":", 1)[0])
    return rules


def test_overlay_gives_every_gpu_rule_a_gpu_and_the_counters_the_whole_node():
    overlay = yaml.safe_load(OVERLAY.read_text())
    jobs = overlay["set-resources"]
    assert overlay["executor"] == "slurm"
    assert gpu_rules() | {"inventory"} <= set(jobs)  # inventory: the GPU node's, not the login node's
    for rule, resources in jobs.items():
        assert resources["gpu"] == 1 and resources["gpu_model"] and resources["runtime"], rule
        assert ("--exclusive" in resources.get("slurm_extra", "")) == rule.startswith("counters"), rule


def test_a_gpu_profile_with_the_overlay_submits_gpu_jobs_for_its_gpu_and_cpu_jobs_for_the_rest():
    run = snakemake("--profile", "profiles/a100", "--profile", "profiles/slurm", "all", "-n")
    assert run.returncode == 0, run.stderr[-3000:]
    jobs = re.findall(r"^rule (\w+):\n(?:    .*\n)*?    resources: (.*)$", run.stdout, re.MULTILINE)
    for rule, resources in jobs:
        gpu = rule in gpu_rules() | {"inventory"}
        assert ("gpu=1, gpu_model=a100" in resources and "slurm_partition=gpu" in resources) == gpu, rule
        assert ("slurm_partition=cpu" in resources) == (not gpu), rule
        assert ("slurm_extra=--exclusive" in resources) == rule.startswith("counters"), rule
    assert {rule for rule, _ in jobs} >= {"bench", "counters", "fig7", "surrogate_matrix", "inventory"}


def site_overlay(folder: Path) -> Path:
    """profiles/slurm with its site block set for the test cluster, as a user sets it for theirs:
    partition `debug`, no account (the plugin then looks for one in sacct and goes on without) or QoS, and no GPU (the test node has none; the cpu profile needs none)."""
    overlay = yaml.safe_load(OVERLAY.read_text())
    for key in ("slurm-qos",):
        overlay.pop(key)
    overlay["slurm-init-seconds-before-status-checks"] = 2
    overlay["default-resources"] = {**overlay["default-resources"], "slurm_partition": "debug", "mem_mb": 1000}
    del overlay["default-resources"]["slurm_account"]
    for resources in overlay["set-resources"].values():
        resources.update(slurm_partition="debug", gpu=0, cpus_per_task=1, mem_mb=1000)
        resources.pop("gpu_model", None)  # aliases (YAML anchors) share one mapping
    folder.mkdir()
    (folder / "config.v8+.yaml").write_text(yaml.safe_dump(overlay))
    return folder


@pytest.fixture(scope="module")
def cluster():
    if os.geteuid() != 0:
        pytest.skip("the SLURM test needs root (slurmd runs jobs as their users)")
    if missing := missing_programs():
        pytest.skip(f"no {', '.join(missing)}: `make test` installs the SLURM packages where apt-get works as root")
    cluster = Cluster()
    try:
        cluster.start()
    except ClusterError as err:
        cluster.stop()
        pytest.skip(f"the SLURM daemons cannot start here: {err}")
    yield cluster
    cluster.stop()


def fresh_copy(dest: Path) -> Path:
    copy = copy_checkout(dest)
    shutil.rmtree(copy / RESULTS, ignore_errors=True)
    return copy


@pytest.fixture(scope="module")
def runs(cluster, cpu_run, tmp_path_factory):
    """The cpu profile's `all` through SLURM in a copy of its own, beside the suite's local run of it."""
    base = tmp_path_factory.mktemp("slurm")
    remote = fresh_copy(base / "slurm")
    overlay = site_overlay(base / "overlay")
    # the shell rules run `python`: this interpreter's, on the node too (sbatch --export=ALL)
    env = {**cluster.env, "XDG_CONFIG_HOME": str(base), "PYTHONPATH": str(remote / "src"),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), cluster.env["PATH"]])}
    run = subprocess.run([*SNAKEMAKE, "--profile", "profiles/cpu", "--profile", str(overlay), "all", *WORKLOAD],
                         cwd=remote, env=env, capture_output=True, text=True, timeout=3600)  # a hang, not a slow run
    assert run.returncode == 0, run.stderr[-5000:]
    return {"local": cpu_run, "slurm": remote, "log": run.stderr, "overlay": overlay, "env": env}


def submitted(log: str) -> collections.Counter:
    """Rule -> jobs that Snakemake's log says it submitted to SLURM."""
    return collections.Counter(re.findall(r"^rule (\w+):", log, re.MULTILINE))


def sacct_jobs(cluster) -> list[dict]:
    return [{"id": int(i), "state": s, "rule": c.removeprefix("rule_").split("_wildcards_")[0]}
            for i, s, c in cluster.sacct("JobIdRaw", "State", "Comment")]


def test_every_job_but_all_went_through_sbatch_and_completed(runs, cluster):
    jobs = sacct_jobs(cluster)
    assert {j["state"] for j in jobs} == {"COMPLETED"}
    assert collections.Counter(j["rule"] for j in jobs) == submitted(runs["log"])
    assert re.findall(r"^localrule (\w+):", runs["log"], re.MULTILINE) == ["all"]
    assert {"bench", "inventory", "manifest"} <= set(submitted(runs["log"]))


def manifest(copy: Path) -> dict[str, str]:
    lines = (copy / RESULTS / "ae" / "manifest.sha256").read_text().splitlines()
    return {path: digest for digest, path in (line.split("  ", 1) for line in lines)}


def test_outputs_match_the_local_run(runs, cluster):
    local, remote = manifest(runs["local"]), manifest(runs["slurm"])
    assert set(remote) == set(local)
    # what does not depend on a timing or a date is the same byte for byte
    same = [p for p in local if p.startswith("config/") or p.endswith(("matrices.csv", "table1_platforms.csv",
                                                                        "bounds.csv", "table3_stencils.csv",
                                                                        "fig2_roofline.csv"))]
    assert len(same) >= 8
    assert {p: remote[p] for p in same} == {p: local[p] for p in same}
    for copy in (runs["local"], runs["slurm"]):
        check = subprocess.run(["sha256sum", "--quiet", "-c", f"{RESULTS}/ae/manifest.sha256"], cwd=copy,
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout[-2000:]


def test_appendix_names_the_executor_and_the_slurm_jobs_that_measured(runs, cluster):
    bench = {j["id"] for j in sacct_jobs(cluster) if j["rule"] == "bench"}
    remote = (runs["slurm"] / RESULTS / "ae" / "appendix.md").read_text()
    named = {int(i) for i in re.search(r"the benchmark jobs were SLURM jobs ([\d, ]+)\.", remote)[1].split(", ")}
    assert named == bench
    assert "Executor: local" in (runs["local"] / RESULTS / "ae" / "appendix.md").read_text()


def test_a_job_killed_with_scancel_is_reported_with_its_log_and_rerun_next_time(runs, cluster):
    args = [*SNAKEMAKE, "--profile", "profiles/cpu", "--profile", str(runs["overlay"]), f"{RESULTS}/raw/scale.csv",
            *WORKLOAD, "scale={log2_min: 10, log2_max: 20}"]  # seconds of benchmark: scancel comes first
    done = max(j["id"] for j in sacct_jobs(cluster))
    with subprocess.Popen([*args, "--forcerun", "bench"], cwd=runs["slurm"], env=runs["env"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as killed:
        try:
            deadline, victim = time.monotonic() + 120, None
            while victim is None and time.monotonic() < deadline and killed.poll() is None:
                victim = next((i for i, comment in cluster.queue().items() if comment.startswith("rule_bench_wildcards_")), None)
                time.sleep(0.2)
            assert victim is not None, killed.communicate()[0][-3000:] if killed.poll() is not None else "no job"
            subprocess.run(["scancel", str(victim)], env=cluster.env, check=True)
            out = killed.communicate(timeout=1800)[0]
        finally:
            killed.kill()
    assert killed.returncode != 0, out[-3000:]
    assert f"SLURM-job '{victim}' failed" in out and re.search(rf"\.snakemake/slurm_logs/rule_bench/\S*/{victim}\.log", out)
    assert not (runs["slurm"] / RESULTS / "raw" / "scale.csv").exists()
    rerun = subprocess.run(args, cwd=runs["slurm"], env=runs["env"], capture_output=True, text=True,
                           timeout=1800)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    states = {j["id"]: (j["rule"], j["state"]) for j in sacct_jobs(cluster) if j["id"] > done}
    rule, state = states.pop(victim)
    assert rule == "bench" and state.startswith("CANCELLED")  # sacct: "CANCELLED by <uid>"
    assert list(states.values()) == [("bench", "COMPLETED")]
    assert (runs["slurm"] / RESULTS / "raw" / "scale.csv").exists()
