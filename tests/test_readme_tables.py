"""README.md and docs/*.md: every generated block is what tools/readme_tables.py renders from the
committed reference runs, and the documents stay short (README <= 250 lines naming <= 5 commits,
each docs page <= 600 lines)."""

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from test_workflow import copy_checkout, snakemake

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("readme_tables", REPO / "tools" / "readme_tables.py")
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)


def blocks() -> list[tuple[str, str, str, str]]:
    """(document, kind, argument, body) of every generated block of README.md and docs/*.md."""
    return [(str(doc.relative_to(REPO)), m.group(2), m.group(3), m.group(4))
            for doc in tool.documents() for m in tool.BLOCK.finditer(doc.read_text())]


def test_the_readme_shows_each_reference_run_its_claims_and_ratios():
    readme = {(kind, arg) for doc, kind, arg, _ in blocks() if doc == "README.md"}
    assert tool.gpus() and {(k, g) for g in tool.gpus() for k in ("run", "claims", "ratios")} <= readme


@pytest.mark.parametrize("doc,kind,arg,body", [b for b in blocks() if b[1] != "claims"],
                         ids=lambda v: v if len(v) < 40 else "")
def test_each_block_is_what_the_committed_raw_rows_give(doc, kind, arg, body):
    assert body == tool.BLOCKS[kind](arg or None), f"{doc}: run python tools/readme_tables.py"


@pytest.fixture(scope="module")
def rendered_claims(tmp_path_factory):
    """results/reference/ of a copy of the checkout after the reference profile rendered each GPU's claims."""
    copy = copy_checkout(tmp_path_factory.mktemp("repo") / "membound")
    shutil.rmtree(copy / "results")
    shutil.copytree(tool.REFERENCE, copy / "results" / "reference", ignore=lambda d, names: [
        n for n in names if Path(d).parent == tool.REFERENCE and n != "raw"])
    targets = [f"results/reference/{g}/claims.json" for g in tool.gpus()]
    run = snakemake("--profile", "profiles/reference", *targets, "--cores", "2", cwd=copy,
                    env={"PYTHONPATH": str(copy / "src")})
    assert run.returncode == 0, run.stderr[-3000:]
    return copy / "results" / "reference"


@pytest.mark.slow
def test_each_claims_block_is_the_reference_runs_claims(rendered_claims, monkeypatch):
    monkeypatch.setattr(tool, "REFERENCE", rendered_claims)
    claims = [b for b in blocks() if b[1] == "claims"]
    assert claims
    for doc, kind, gpu, body in claims:
        assert body == tool.claims_block(gpu), f"{doc}: run python tools/readme_tables.py"


def test_render_rewrites_a_stale_block_and_leaves_the_text_around_it():
    head, tail = "before\n<!-- membound:run h100 -->\n", "<!-- /membound -->\nafter\n"
    assert tool.render(head + "stale\n" + tail) == head + tool.run_line("h100") + tail


def test_an_unknown_block_stops_in_one_line_naming_the_kinds():
    with pytest.raises(SystemExit, match="unknown block <!-- membound:nosuch -->: choose one of run, claims"):
        tool.render("<!-- membound:nosuch h100 -->\n<!-- /membound -->\n")


def commits(text: str) -> set[str]:
    """The distinct abbreviated commit hashes a text names (hex words of 7-40 digits with a digit and a letter)."""
    return {w[:7] for w in re.findall(r"\b[0-9a-f]{7,40}\b", text) if re.search(r"\d", w) and re.search("[a-f]", w)}


def test_the_readme_is_a_manual_and_each_docs_page_is_short():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 250  # a manual: what to type and where to look; the detail is in docs/
    assert len(commits(readme)) <= 5, sorted(commits(readme))
    long = {p.name: n for p in (REPO / "docs").glob("*.md") if (n := len(p.read_text().splitlines())) > 600}
    assert not long, long


def test_commits_are_counted_once_each_and_hex_words_are_not_commits():
    assert commits("83b4d8f, 83b4d8fa0, 0da0bbd and deadbeef, 1234567, cafe") == {"83b4d8f", "0da0bbd"}


def test_the_ratios_row_gives_each_unblocked_stencil_the_share_of_its_own_roof():
    cells = {}
    for g in tool.gpus():
        for p in tool.precisions(g):
            cells[(g, p)] = cell = tool.roof_shares(g, p)
            for roof, rows in tool.unblocked(g, p).groupby("roof"):
                assert f"{roof} {rows['share_of_roof'].min():.2f}" in cell
                assert roof == "copy" or f"({', '.join(rows.index)})" in cell
    assert any("FMA pipes" in c for c in cells.values()), cells   # fp16 2d49pt: not mixed with the copy's
