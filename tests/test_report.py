"""The cpu report in a real browser: Debian's Chromium, headless, opens the report of a cpu run and
checks, with the report's own data, every image (decoded by the browser), every link of the opening
text and the captions, and that no section is empty. Skipped, with the reason, where Chromium is missing
(`make test` installs it as root where apt-get works: the Makefile's chromium-package)."""

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cpu_workflow import REPORT, WORKLOAD, snakemake
from report_data import report_data

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Runs in the report's page once it has loaded; writes the problems found into <pre id="membound-check">.
CHECK = r"""<script>
window.addEventListener('load', async () => {
  const problems = [];
  try { await check(problems); } catch (err) { problems.push(`the check failed: ${err}`); }
  const out = document.createElement('pre');
  out.id = 'membound-check';
  out.textContent = JSON.stringify(problems);
  document.body.appendChild(out);
});
async function check(problems) {
  const parse = text => new DOMParser().parseFromString(text || '', 'text/html');
  const texts = [['the opening text', workflow_desc],
                 ...Object.entries(results).map(([path, r]) => [`the caption of ${path}`, r.caption])];
  for (const [where, text] of texts) {
    const doc = parse(text);
    if (!doc.body.textContent.trim()) problems.push(`empty section: ${where}`);
    for (const a of doc.querySelectorAll('a[href]')) {
      const href = a.getAttribute('href'), m = href.match(/^javascript:app\.(showCategory|showResultInfo)\('(.*)'\)$/);
      const ok = m ? decodeURIComponent(m[2]) in (m[1] === 'showCategory' ? categories : results)
        : href.startsWith('javascript:show_panel(') || /^https?:/.test(href)
          || (href.startsWith('#') && doc.getElementById(href.slice(1)) !== null);
      if (!ok) problems.push(`broken link in ${where}: ${href}`);
    }
  }
  for (const [category, subcategories] of Object.entries(categories)) {
    for (const [sub, paths] of Object.entries(subcategories)) {
      if (!paths.length) problems.push(`empty section: ${category} / ${sub}`);
      for (const path of paths) if (!(path in results)) problems.push(`missing item: ${path} of ${category}`);
    }
  }
  for (const [path, r] of Object.entries(results)) {
    if (r.mime_type.startsWith('image/')) {
      const img = new Image();
      const ok = await new Promise(done => { img.onload = () => done(img.naturalWidth > 0);
                                            img.onerror = () => done(false); img.src = r.data_uri; });
      if (!ok) problems.push(`missing image: ${path}`);
    } else if (!r.data_uri || r.data_uri.split(',')[1] === '') problems.push(`empty section: ${path}`);
  }
  const root = document.getElementById('app'), settle = () => new Promise(done => setTimeout(done, 500));
  for (let i = 0; i < 20 && !root.textContent.trim(); i++) await settle();
  if (!root.textContent.trim()) problems.push('empty section: the report app rendered nothing');
  for (const [category, subcategories] of Object.entries(categories)) {          // as a reader clicks it
    app.showCategory(category);
    await settle();
    const shown = Object.keys(subcategories).length > 1 ? Object.keys(subcategories)   // its subcategories, or
      : Object.values(subcategories)[0].map(path => results[path].name);             // the one's items
    for (const name of shown)
      if (!root.textContent.includes(name)) problems.push(`empty section: ${category} shows no ${name}`);
  }
}
</script>
"""


def browser_check(report: Path, tmp_path: Path) -> list[str]:
    """The problems Chromium finds in `report` (CHECK run in the page)."""
    page = tmp_path / f"checked-{report.name}"
    head, end, tail = report.read_text().rpartition("</body>")      # the page's own (scripts may hold the string)
    page.write_text(head + CHECK + end + tail)
    run = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=60000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=300)
    found = re.search(r'<pre id="membound-check">(.*?)</pre>', run.stdout, re.DOTALL)
    assert found, f"Chromium did not run the check (rc {run.returncode}): {run.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def commit_all(copy):
    """The copy as a git checkout of one commit (the archive takes the code at its commit)."""
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run(["git", "-C", str(copy), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                       capture_output=True)


@pytest.fixture(scope="module")
def cpu_report(cpu_run):
    if CHROMIUM is None:
        pytest.skip("no chromium here: `make test` installs Debian's chromium as root where apt-get works")
    return cpu_run / REPORT


@pytest.mark.slow
def test_the_archive_bundles_the_cpu_run_and_verifies_itself_unpacked_one_line_per_changed_file(cpu_run, tmp_path):
    import tarfile
    copy = shutil.copytree(cpu_run, tmp_path / "membound", symlinks=True)   # the shared run stays as it is
    (copy / REPORT).rename(copy / "report.kept")
    run = snakemake(copy, "--profile", "profiles/cpu", "archive", *WORKLOAD, "--cores", "1")
    log = (copy / "results" / "archive" / "membound-cpu.log").read_text()
    assert run.returncode != 0 and f"error: {REPORT}: no report to archive; make it with" in log, log
    (copy / "report.kept").rename(copy / REPORT)
    run = snakemake(copy, "--profile", "profiles/cpu", "archive", *WORKLOAD, "--cores", "1")
    log = (copy / "results" / "archive" / "membound-cpu.log").read_text()
    assert run.returncode != 0 and "is not a git checkout" in log and "Traceback" not in log
    assert not (copy / "results" / "archive" / "membound-cpu.tar.gz").exists()
    commit_all(copy)
    # the stencil key from a --configfile outside the checkout: the bundle keeps a copy, verify gives it again
    stencil = next(w for w in WORKLOAD if w.startswith("stencil="))
    (tmp_path / "stencil.yaml").write_text(stencil.replace("=", ": ", 1) + "\n")
    run = snakemake(copy, "--profile", "profiles/cpu", "archive", *(w for w in WORKLOAD if w != stencil), "--cores", "1",
                    "--configfile", "profiles/cpu/membound.yaml", str(tmp_path / "stencil.yaml"))
    assert run.returncode == 0, run.stderr[-3000:]
    with tarfile.open(copy / "results" / "archive" / "membound-cpu.tar.gz") as bundle:
        names = {n.split("/", 1)[1] for n in bundle.getnames() if "/" in n}
        bundle.extractall(tmp_path, filter="tar")
    assert {"Snakefile", "src/membound/ae/__init__.py", "results/cpu/raw/scale.csv", "results/cpu/ae/manifest.sha256",
            "results/cpu/ae/appendix.md", "results/cpu/claims.md", REPORT, "results/cpu/logs/bench_scale.log",
            "results/cpu/logs/commands.jsonl", "ARCHIVE.json"} <= names
    unpacked = next(tmp_path.glob("membound-*"))
    record = json.loads((unpacked / "ARCHIVE.json").read_text())
    given = {item.split("=", 1)[0] for item in WORKLOAD[1:] if item != stencil}   # the --config keys as given
    assert record["profile"] == "cpu" and set(record["config"]) == given and record["config"]["matrices"] == ["dc2"]
    assert record["configfiles"] == ["profiles/cpu/membound.yaml", "configfiles/1-stencil.yaml"]
    assert (unpacked / "configfiles/1-stencil.yaml").read_text() == (tmp_path / "stencil.yaml").read_text()
    assert record["command"].startswith("snakemake --profile profiles/cpu archive --config")
    assert len(json.loads((unpacked / "results/cpu/raw/inventory.json").read_text())["installed"]) > 20
    changed = unpacked / "results" / "cpu" / "tables" / "table1_platforms.md"
    changed.write_text(changed.read_text() + "edited\n")
    env = {**os.environ, "PYTHONPATH": str(unpacked / "src"), "XDG_CONFIG_HOME": str(tmp_path / "no-profiles"),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    verify = subprocess.run([sys.executable, "-m", "membound.ae", "verify"], cwd=unpacked, env=env,
                            capture_output=True, text=True)
    log = (unpacked / "verify.log").read_text() if (unpacked / "verify.log").exists() else ""
    assert verify.stdout.splitlines() == ["results/cpu/tables/table1_platforms.md: differs from the manifest "
                                          "(as unpacked)"], verify.stdout + log[-3000:]
    assert verify.returncode == 1


@pytest.mark.slow
def test_the_cpu_report_opens_in_chromium_with_every_image_link_and_section(cpu_report, tmp_path):
    assert browser_check(cpu_report, tmp_path) == []
    data = report_data(cpu_report)
    assert set(data["categories"]) == {"CPU"}
    assert {"Figures", "Tables", "Claims", "Artifact evaluation"} == set(data["categories"]["CPU"])
    opening = re.sub(r"<[^>]+>", "", data["workflow_desc"])
    assert "profile cpu" in opening and "SURROGATE" in opening and "fp64" in opening


@pytest.mark.slow
def test_the_browser_check_finds_a_broken_image_and_a_broken_link(cpu_report, tmp_path):
    text = cpu_report.read_text()
    png = re.search(r'"results/cpu/figures/fig6_scale\.png": \{.*?"data_uri": "data:image/png;[^,]*base64,', text)
    assert png
    text = text[:png.end()] + "AAAA" + text[png.end() + 40:]                       # a damaged PNG
    text = text.replace("showCategory('CPU')", "showCategory('CPX')", 1)
    damaged = tmp_path / "damaged.html"
    damaged.write_text(text)
    problems = browser_check(damaged, tmp_path)
    assert "missing image: results/cpu/figures/fig6_scale.png" in problems
    assert any(p.startswith("broken link in the opening text") and "CPX" in p for p in problems), problems


def _rows(**over):
    from membound.run import measure
    import pandas as pd
    base = {"kernel": "stencil", "impl": "tc", "unit": "tensor_core", "role": "ConvStencil", "precision": "fp32",
            "sparsity": "dense", "device": "GPU X", "date": "2026-01-02T03:04:05Z", "commit": "abcdef1234"}
    return pd.DataFrame([{**base, **o} for o in over.get("rows", [{}])]).reindex(columns=measure.ROW_COLUMNS)


def test_the_opening_text_says_what_the_run_ran():
    import pandas as pd

    from membound import report_text
    rows = _rows(rows=[{}, {"sparsity": "2:4", "precision": "fp16"}, {"kernel": "scale", "impl": "scale_cc",
                                                                      "unit": "cuda_core", "precision": "fp64"},
                       {"impl": "ebisu_original", "unit": "cuda_core", "role": "EBISU"}])
    text = report_text.about("X", "GPU X spec", rows, [], "counters: false", pd.DataFrame())
    assert "SCALE (fp64) and stencils (fp32, fp16)" in text
    assert "tensor cores dense in fp32, fp16, 2:4-sparse (mma.sp) in fp16 (stencils)" in text
    assert "no hardware counters (counters: false)" in text and "SpMV matrices" not in text
    assert "original codes ran: EBISU" in text and "at commit abcdef1" in text and "`X`_" in text
    real = report_text.about("X", "s", _rows(rows=[{"kernel": "spmv"}]), ["SpMV"], "", pd.DataFrame({"source": ["real"]}))
    assert "the real SuiteSparse matrices" in real and "hardware counters measured for SpMV" in real
    assert "no 2:4-sparse rows" in real
    intro = report_text.intro("cpu", False, [text], compared=False, cpu=True)
    assert "profile **cpu**, measured and rendered by this run" in intro and "numpy emulations" in intro
    assert "GPUs compared" not in intro
