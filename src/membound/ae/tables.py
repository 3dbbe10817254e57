"""The appendix's tables from a run's records: the machine inventory, its hardware in a line, and the
ACM artifact check-list (with the code's license, the DOI of CITATION.cff and the disk a run takes)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import yaml

from membound.run.inventory import ABSENT

NOT_RECORDED = "not recorded"


def hms(seconds: float) -> str:
    minutes, s = divmod(round(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{s:02d}"


def _probe(entry: dict, fmt: str) -> str:
    """A probe of the inventory as `fmt` filled from it, or 'absent (why)'."""
    return f"absent ({entry['why']})" if entry.get("status") == ABSENT else fmt.format(**entry)


def inventory_table(inv: dict) -> pd.DataFrame:
    """The inventory (membound.run.inventory.collect) as item/value rows."""
    rows = [(f"GPU {d['index']}", (f"{d['name']}; driver {d['driver_version']}; memory {d['memory.total']}; max clocks "
                                   f"SM {d['clocks.max.sm']}, memory {d['clocks.max.mem']}; power limit {d['power.limit']}"))
            for d in inv["gpus"].get("devices", [])] or [("GPU", _probe(inv["gpus"], "none reported"))]
    rows.append(("CUDA runtime / driver", _probe(inv["cuda"], "{api} {runtime} / {driver} (CuPy {cupy})")))
    for name, label in (("nvcc", "nvcc"), ("ncu", "Nsight Compute (ncu)"), ("rocm_smi", "rocm-smi"),
                        ("rocprof", "rocprof")):
        rows.append((label, _probe(inv[name], "{version}") or "present (its output is in inventory.json)"))
    rows.append(("CPU", "{model} ({arch}), {logical_cpus} logical CPUs, {usable_cpus} usable".format(**inv["cpu"])))
    rows.append(("memory", _probe(inv["memory"], "{total_GiB} GiB")))
    rows.append(("OS / kernel", "{distribution} ({os}) / {kernel}, host {host}".format(**inv["system"])))
    rows.append(("Python", "{implementation} {version}".format(**inv["python"])))
    installed = inv.get("installed", {})
    rows.append(("packages", ", ".join(f"{k} {v}" for k, v in inv["packages"].items())
                 + (f"; {len(installed)} installed in all (inventory.json, `installed`)" if installed else "")))
    rows.append(("membound", inv.get("membound", NOT_RECORDED)))
    dirty = {True: " (dirty: tracked files modified)", False: " (clean)", None: ""}[inv["workflow"].get("dirty")]
    rows.append(("workflow commit", _probe(inv["workflow"], "{commit}") + dirty))
    rows.append(("inventory taken", inv["date"]))
    return pd.DataFrame(rows, columns=["item", "value"])


def checklist(inv: dict | None, claims: dict, times: pd.DataFrame, setup: dict, records: list[dict] = ()) -> pd.DataFrame:
    """The ACM artifact check-list (meta-information) of a run, from its inventory `inv`, its claims,
    its job timings `times` (run_times) and `setup`: families (titles), precisions, repeats, matrices
    (how many), license, disk_bytes (its results and matrix files), profile and gpu."""
    packages = (inv or {}).get("packages", {})
    cuda = (inv or {}).get("cuda", {})
    seconds = times.set_index("part")["seconds"] if len(times) else pd.Series(dtype=float)
    prepare = seconds.get("matrices")
    experiments = seconds.drop("matrices", errors="ignore").dropna()
    m = claims["measured"]
    codes = sorted({r["title"] for r in records})
    rows = [
        ("Algorithm", f"{', '.join(setup['families'])} on CUDA cores and on tensor cores, beside paper 000's model "
                      "(roofline, machine balance, eq. 22-24) and paper 002's (fusion sweep, classification)"),
        ("Program", f"membound {', '.join(m.get('membound', [])) or 'unrecorded'} (Python; CUDA C++ kernels)"),
        ("Compilation", "at run time: NVRTC through CuPy" + (f" {cuda['cupy']} ({cuda['api']} {cuda['runtime']})"
                        if cuda.get("status") == "present" else "") + "; nothing to build ahead of time"),
        ("Binary", "none shipped" + (f"; the original codes the user built: {', '.join(codes)}" if codes else "")),
        ("Data set", (f"{setup['matrices']} SpMV matrices: SURROGATE stand-ins of SuiteSparse's (their rows and nnz, "
                      "not their data)" if claims["surrogate"] else f"{setup['matrices']} SuiteSparse matrices "
                      f"({claims['matrix_source']})") + "; the other kernels' inputs generated; licenses below"),
        ("Run-time environment", _probe(inv["system"], "{distribution} ({os}), kernel {kernel}") + ", Python "
         + inv["python"]["version"] if inv else NOT_RECORDED),
        ("Hardware", hardware(inv) or ", ".join(m["device"])),
        ("Execution", f"`make run` (or `snakemake --profile {setup['gpu']} all`): one benchmark job per GPU at a time"),
        ("Metrics", "median times over repetitions, GB/s, GFLOP/s, GStencil/s; each claim's ratio over its problems "
                    f"with its {interval_method(claims)}; hardware counters (DRAM bytes, FLOPs) where measured"),
        ("Output", "tables (CSV, Markdown), figures (PDF, PNG), claims.md and claims.json, this appendix, "
                   "the SHA-256 manifest and the Snakemake report"),
        ("Experiments", f"{', '.join(setup['families'])} in {', '.join(setup['precisions'])}, {setup['repeats']} "
                        f"repetitions each; paper 000's claims C1-C4 and paper 002's C5"),
        ("How much disk space required (approximately)?", f"{setup['disk_bytes'] / 2**20:.0f} MiB (this run's raw "
                                                          "results, and its matrices by raw/matrices.csv) besides "
                                                          "the environment"),
        ("How much time is needed to prepare workflow (approximately)?",
         ("matrices " + hms(prepare) if pd.notna(prepare) else "matrices: " + NOT_RECORDED)
         + "; `make install` (the locked environment) depends on the network"),
        ("How much time is needed to complete experiments (approximately)?",
         hms(experiments.sum()) + " of jobs (Expected run time below)" if len(experiments) else NOT_RECORDED),
        ("Publicly available?", "yes: rule `archive` writes the bundle to upload (code at its commit, raw results, "
                                "outputs, manifest, job logs, report, the command and its --config)"),
        ("Code licenses (if publicly available)?", setup["license"]),
        ("Workflow framework used?", f"Snakemake {packages.get('snakemake', 'unrecorded')}"),
        ("Archived (provide DOI)?", f"doi:{setup['doi']}" if setup.get("doi") else
         "not yet: CITATION.cff names no DOI (docs/release.md: reserve it on Zenodo, then set it there)"),
    ]
    return pd.DataFrame(rows, columns=["item", "value"])


def interval_method(claims: dict) -> str:
    """The claims' interval method as the run's claims.json records it (the claims module's METHOD)."""
    return claims.get("statistics", {}).get("interval") or "interval (its method not recorded in claims.json)"


def hardware(inv: dict | None) -> str:
    """The hardware of the inventory: its GPUs (count x name, memory), CPU and memory; '' without GPUs."""
    devices = (inv or {}).get("gpus", {}).get("devices", [])
    if not devices:
        return ""
    kinds = pd.Series([f"{d['name']} ({d['memory.total']})" for d in devices]).value_counts(sort=False)
    return (", ".join(f"{n} x {kind}" for kind, n in kinds.items()) + "; host CPU "
            + "{model}, {logical_cpus} logical CPUs".format(**inv["cpu"]) + _probe(inv["memory"], ", {total_GiB} GiB"))


def doi_of(repo=".") -> str | None:
    """The DOI that CITATION.cff names (the archive's, once minted), else None."""
    path = Path(repo) / "CITATION.cff"
    return (yaml.safe_load(path.read_text()) or {}).get("doi") if path.is_file() else None


def license_of(repo=".") -> str:
    """The code license that pyproject.toml names (project.license, a string or a table's text), else MIT."""
    path = Path(repo) / "pyproject.toml"
    found = tomllib.loads(path.read_text()).get("project", {}).get("license") if path.is_file() else None
    return (found.get("text") or found.get("file")) if isinstance(found, dict) else found or "MIT"


def disk_bytes(*folders) -> int:
    """The bytes of every file under `folders` (those that exist)."""
    return sum(p.stat().st_size for folder in folders for p in Path(folder).rglob("*") if p.is_file())
