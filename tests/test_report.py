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
from report_data import report_data

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WORKLOAD = ["--config", "matrices=[dc2]"]  # the cpu profile on one matrix: every rule, fewer jobs

# Runs in the report's page once it has loaded; writes the problems found into <pre id="membound-check">.
CHECK = r"""<script>
window.addEventListener('load', async () => {
  const problems = [], parse = text => new DOMParser().parseFromString(text || '', 'text/html');
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
  if (!document.getElementById('app').textContent.trim()) problems.push('empty section: the report app rendered nothing');
  const out = document.createElement('pre');
  out.id = 'membound-check';
  out.textContent = JSON.stringify(problems);
  document.body.appendChild(out);
});
</script>
"""


def browser_check(report: Path, tmp_path: Path) -> list[str]:
    """The problems Chromium finds in `report` (CHECK run in the page)."""
    page = tmp_path / f"checked-{report.name}"
    page.write_text(report.read_text().replace("</body>", CHECK + "</body>"))
    run = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=60000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=300)
    found = re.search(r'<pre id="membound-check">(.*?)</pre>', run.stdout, re.DOTALL)
    assert found, f"Chromium did not run the check (rc {run.returncode}): {run.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="module")
def cpu_report(tmp_path_factory):
    """The HTML report of the cpu profile's `all` in a copy of the checkout."""
    if CHROMIUM is None:
        pytest.skip("no chromium here: `make test` installs Debian's chromium as root where apt-get works")
    copy = tmp_path_factory.mktemp("cpu") / "membound"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(".git", ".venv", ".snakemake", "data", "results",
                                                                "__pycache__", ".pytest_cache"))
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "XDG_CONFIG_HOME": str(copy / ".no-user-profiles"),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    for args in (["all", *WORKLOAD, "--cores", "2"], ["--report", "report.html", *WORKLOAD]):
        run = subprocess.run([sys.executable, "-m", "snakemake", "--profile", "profiles/cpu", *args], cwd=copy,
                             env=env, capture_output=True, text=True, timeout=1800)
        assert run.returncode == 0, run.stderr[-3000:]
    return copy / "report.html"


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
    png = re.search(r'"(results/cpu/figures/fig6_scale\.png)": \{.*?"data_uri": "data:image/png;base64,', text)
    assert png
    text = text[:png.end()] + "AAAA" + text[png.end() + 40:]                       # a damaged PNG
    text = text.replace("showCategory(&#39;CPU&#39;)", "showCategory(&#39;CPX&#39;)", 1)
    text = text.replace("showCategory('CPU')", "showCategory('CPX')", 1)
    damaged = tmp_path / "damaged.html"
    damaged.write_text(text)
    problems = browser_check(damaged, tmp_path)
    assert "missing image: results/cpu/figures/fig6_scale.png" in problems
    assert any(p.startswith("broken link in the opening text") and "CPX" in p for p in problems), problems
