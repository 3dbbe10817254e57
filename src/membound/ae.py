"""The artifact-evaluation bundle: the generated appendix (inventory, the ACM artifact check-list, how
to run, expected run time and results) and the SHA-256 manifest of a run's inputs and outputs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pandas as pd

from membound import families
from membound.analysis.claims.report import SURROGATE
from membound.analysis.claims.verdicts import interval_text
from membound.run.inventory import ABSENT, provenance
from membound.run.outputs import sha256

# Snakemake rule name, or a prefix ending '_' (counters_: every counter rule's) -> the part of the run
# its benchmark file times.
ORIGINALS = "original codes"   # rule original (docs/originals.md): listed where it ran
FAMILIES = {"download_matrix": "matrices", "convert_matrix": "matrices", "surrogate_matrix": "matrices",
            **{f"bench_{f.name}": f.title for f in sorted(families.FAMILIES.values(), key=lambda f: f.title)},
            "counters_": "counters", "original_": ORIGINALS}
NOT_RECORDED = "not recorded"


def family(benchmark: str) -> str:
    """The family of a benchmark file, by its path under the benchmarks folder: <rule>.tsv,
    <rule>-<wildcards>.tsv or <rule>/<case>.tsv, each with any .rep<r> ('other' for other rules)."""
    rule = re.match(r"\w+", benchmark).group()
    prefix = next((p for p in FAMILIES if p.endswith("_") and f"{rule}_".startswith(p)), None)
    return FAMILIES.get(prefix or rule, "other")


def run_times(folder, measured=None) -> pd.DataFrame:
    """Per family: the jobs and the summed wall seconds (column `s`) of every *.tsv under `folder`;
    a family without any file says 'not recorded'. `measured`: the kernel families the run has
    (membound.families names; default all), the others are left out."""
    seconds: dict[str, list[float]] = {}
    for tsv in sorted(Path(folder).rglob("*.tsv")):
        part = family(tsv.relative_to(folder).as_posix())
        seconds.setdefault(part, []).append(float(pd.read_csv(tsv, sep="\t")["s"].sum()))
    rows = []
    left_out = {f.title for f in families.FAMILIES.values() if measured is not None and f.name not in measured}
    for name in [*dict.fromkeys(FAMILIES.values()), *(["other"] if "other" in seconds else [])]:
        if name in left_out or (name == ORIGINALS and name not in seconds):
            continue
        s = seconds.get(name)
        rows.append({"part": name, "jobs": len(s) if s else 0, "seconds": sum(s) if s else None,
                     "wall time": _hms(sum(s)) if s else NOT_RECORDED})
    return pd.DataFrame(rows)


def _hms(seconds: float) -> str:
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
    rows.append(("packages", ", ".join(f"{k} {v}" for k, v in inv["packages"].items())))
    dirty = {True: " (dirty: tracked files modified)", False: " (clean)", None: ""}[inv["workflow"].get("dirty")]
    rows.append(("workflow commit", _probe(inv["workflow"], "{commit}") + dirty))
    rows.append(("inventory taken", inv["date"]))
    return pd.DataFrame(rows, columns=["item", "value"])


def originals_table(records: list[dict]) -> pd.DataFrame:
    """One row per original code and executable of the run records (membound.originals.run): its
    commit and SHA-256, the jobs, and how many of its rows checked themselves."""
    rows = [{"code": r["title"], "executable": r["executable"], "commit": r["commit"] or "not given",
             "SHA-256": r["sha256"], "checked": row["note"].startswith("checked:")} for r in records for row in r["rows"]]
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows)
    jobs = pd.Series([(r["title"], r["executable"]) for r in records]).value_counts()
    out = frame.groupby(["code", "executable", "commit", "SHA-256"], sort=False)["checked"].agg(["sum", "size"]).reset_index()
    return out.assign(jobs=[jobs[(c, e)] for c, e in zip(out["code"], out["executable"])],
                      checked=[f"{int(k)} of {n} rows" for k, n in zip(out["sum"], out["size"])]).drop(columns=["sum", "size"])


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
                      f"({claims['matrix_source']})") + "; the other kernels' inputs generated"),
        ("Run-time environment", _probe(inv["system"], "{distribution} ({os}), kernel {kernel}") + ", Python "
         + inv["python"]["version"] if inv else NOT_RECORDED),
        ("Hardware", ", ".join(m["device"])),
        ("Execution", f"`make run` (or `snakemake --profile {setup['gpu']} all`): one benchmark job per GPU at a time"),
        ("Metrics", "median times over repetitions, GB/s, GFLOP/s, GStencil/s; CUDA-core over tensor-core speedups "
                    f"with the claims' {claims['statistics']['interval']}; hardware counters (DRAM bytes, FLOPs) where "
                    "measured"),
        ("Output", "tables (CSV, Markdown), figures (PDF, PNG), claims.md and claims.json, this appendix, "
                   "the SHA-256 manifest and the Snakemake report"),
        ("Experiments", f"{', '.join(setup['families'])} in {', '.join(setup['precisions'])}, {setup['repeats']} "
                        f"repetitions each; paper 000's claims C1-C4 and paper 002's C5"),
        ("How much disk space required (approximately)?", f"{setup['disk_bytes'] / 2**20:.0f} MiB (this run's raw "
                                                          "results and matrices) besides the environment"),
        ("How much time is needed to prepare workflow (approximately)?",
         ("matrices " + _hms(prepare) if pd.notna(prepare) else "matrices: " + NOT_RECORDED)
         + "; `make install` (the locked environment) depends on the network"),
        ("How much time is needed to complete experiments (approximately)?",
         _hms(experiments.sum()) + " of jobs (Expected run time below)" if len(experiments) else NOT_RECORDED),
        ("Publicly available?", "yes: rule `archive` writes the bundle to upload (code at its commit, raw results, "
                                "manifest)"),
        ("Code licenses (if publicly available)?", setup["license"]),
        ("Workflow framework used?", f"Snakemake {packages.get('snakemake', 'unrecorded')}"),
        ("Archived (provide DOI)?", "to be filled on archiving"),
    ]
    return pd.DataFrame(rows, columns=["item", "value"])


def license_of(repo=".") -> str:
    """The code license that pyproject.toml names (project.license, a string or a table's text), else MIT."""
    path = Path(repo) / "pyproject.toml"
    found = tomllib.loads(path.read_text()).get("project", {}).get("license") if path.is_file() else None
    return (found.get("text") or found.get("file")) if isinstance(found, dict) else found or "MIT"


def disk_bytes(*folders) -> int:
    """The bytes of every file under `folders` (those that exist)."""
    return sum(p.stat().st_size for folder in folders for p in Path(folder).rglob("*") if p.is_file())


def _checklist_section(inv, claims, times, setup, records) -> str:
    if setup is None:
        return ""
    return ("\n## ACM artifact check-list\n\n" + checklist(inv, claims, times, setup, records).to_markdown(index=False)
            + "\n")


def _originals_section(records: list[dict]) -> str:
    table = originals_table(records)
    if table.empty:
        return ""
    return ("\n## Original codes\n\nThe paper's original codes this run ran from the executables the user built "
            "(config `originals`, docs/originals.md; membound ships none of them): each executable, the commit it "
            "was built from as the user gave it, and its SHA-256 when it ran. A row is checked where the code's own "
            "correctness check ran and passed (its note says which).\n\n" + table.to_markdown(index=False) + "\n")


def appendix(inv: dict | None, claims: dict, times: pd.DataFrame, profile: str, gpu: str, results: str,
             repo=".", originals: list[dict] = (), setup: dict | None = None) -> str:
    """The artifact appendix as Markdown (see the module docstring) of a run of `profile` for device
    profile `gpu` (they differ for the reference profile) from the checkout `repo`; `inv` None: no
    inventory recorded; `originals`: the run records of the original codes (none: no section);
    `setup`: checklist's (None: no check-list)."""
    m = claims["measured"]
    surrogate = (f"\n\n{SURROGATE} `--config matrix_source=real` measures the paper's matrices."
                 if claims["surrogate"] else "")
    no_tc = ("\n\n**NO TENSOR CORES** on this device: the tensor-core paths are emulated, so every verdict is "
             "N/A; this run checks that the workflow works, not the paper." if not claims["tensor_cores"] else
             f"\n\n**NO TENSOR CORES in {', '.join(claims['no_tensor_cores'])}** on this device: those verdicts are "
             "N/A." if claims.get("no_tensor_cores") else "")
    verdicts = pd.DataFrame([{"claim": c["id"], "precision": c.get("precision", "fp64"), "paper": c["where"],
                              "verdict": c["verdict"],
                              "estimate [95% CI]": interval_text(c), "numbers": c["summary"]}
                             for c in claims["claims"]])
    recorded = times["seconds"].notna().any()
    return f"""# Artifact appendix: membound on {claims['device_spec']} (profile `{profile}`)

Generated by rule `ae` from the run's `{results}/raw/` (inventory and Snakemake benchmark files) and
`{results}/claims.json`. `{results}/ae/manifest.sha256` holds the SHA-256 of every input and output
of the run: `sha256sum -c {results}/ae/manifest.sha256` from the repository root checks them.

## Hardware and software

{inventory_table(inv).to_markdown(index=False) if inv else NOT_RECORDED + " (this run's raw/ has no inventory.json)"}
{_originals_section(list(originals))}{_checklist_section(inv, claims, times, setup, list(originals))}
## How to run

```sh
make run     # installs into .venv, then runs the whole workflow for this machine's profile
make test    # runs the test suite
```
License: MIT (`LICENSE`). `make install` installs the locked versions of `envs/requirements.txt`.

With the venv active, `snakemake --profile {gpu} all` measures and renders everything on a node with
this device (profiles: a100, gh200, h100, h200, mi250x, cpu; a GPU profile stops at once on a node
without its GPU). From a SLURM login node, `snakemake --profile {gpu} --profile slurm all` submits
the jobs through the cluster overlay `profiles/slurm` (its SITE block set for the cluster; README.md,
"On a cluster"). Rerun one figure from the raw data already measured, e.g. Figure 6:
`snakemake --profile {profile} fig6 --forcerun fig6` (targets before `--forcerun`). Re-measure one
part: `snakemake --profile {gpu} bench_scale --forcerun bench`, then `all`. `snakemake --profile reference all`
renders every table, figure and claim from the committed raw results of the reference runs
(`results/reference/<gpu>/raw/`, one per GPU) on any machine, GPU or not.

## Expected run time

{times[["part", "jobs", "wall time"]].to_markdown(index=False) if recorded else NOT_RECORDED + " (no Snakemake benchmark files)"}

Wall seconds summed over the jobs of each part (Snakemake `benchmark:` files in `{results}/raw/benchmarks/`);
jobs run one at a time on the device (resource `gpu=1`). Matrix downloads depend on the network.

## Expected results

Measured on {', '.join(m['device'])} ({', '.join(m['host'])}), {m['date_first']} to {m['date_last']};
SpMV matrices: {claims['matrix_source']}. {executor(m.get('slurm_jobs', []))}
Code: membound {', '.join(m.get('membound', [])) or 'unrecorded'}. {provenance(m.get('commit', []), repo)}{surrogate}{no_tc}

{verdicts.to_markdown(index=False)}

The claims in full, with every pair's numbers: `{results}/claims.md` (`claims.json`); the tables in
`{results}/tables/`, the figures in `{results}/figures/`.
"""


def executor(slurm_jobs: list[int]) -> str:
    """Where the benchmark jobs ran: the SLURM job ids that measured, or the local executor."""
    if not slurm_jobs:
        return "Executor: local (the benchmark jobs ran on the node that ran `snakemake`)."
    return (f"Executor: SLURM (snakemake-executor-plugin-slurm, profile `slurm`); the benchmark jobs were "
            f"SLURM jobs {', '.join(map(str, slurm_jobs))}.")


def manifest(files, folders) -> str:
    """`sha256sum`-format lines for `files` and every file under `folders` (paths as given, relative
    to the directory `sha256sum -c` runs in), sorted and without duplicates."""
    paths = {Path(f) for f in files}
    paths |= {p for folder in folders for p in Path(folder).rglob("*") if p.is_file()}
    lines = []
    for path in sorted(paths):
        name = path.as_posix()
        escaped = name.replace("\\", "\\\\").replace("\n", "\\n")
        lines.append(("\\" if escaped != name else "") + f"{sha256(path)}  {escaped}")
    return "\n".join(lines) + "\n"
