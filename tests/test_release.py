"""The release metadata: CITATION.cff valid against the Citation File Format 1.2.0 schema (a copy in
tests/fixtures/cff/, checked offline), citing the paper; one version in every file that names it."""

import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml

import membound

REPO = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((REPO / "tests" / "fixtures" / "cff" / "schema-1.2.0.json").read_text())
PAPER_DOI = "10.1145/3725798.3725803"


def cff_errors(cff: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [e.message for e in validator.iter_errors(cff)]


def citation() -> dict:
    return yaml.safe_load((REPO / "CITATION.cff").read_text())


def test_citation_cff_is_valid_and_cites_the_paper():
    cff = citation()
    assert cff_errors(cff) == []
    paper = [r for r in cff["references"] if r.get("doi") == PAPER_DOI]
    assert len(paper) == 1 and paper[0]["title"] == "Can Tensor Cores Benefit Memory-Bound Kernels? (NO!)"
    assert [a["family-names"] for a in paper[0]["authors"]] == ["Zhang", "Huang", "Di", "Matsuoka", "Wahib"]
    assert PAPER_DOI in (REPO / "README.md").read_text()


@pytest.mark.parametrize("damage", [lambda c: c.pop("authors"), lambda c: c.update(version=[1]),
                                    lambda c: c["references"][0].update(doi="not a doi")])
def test_the_schema_check_finds_a_damaged_citation(damage):
    cff = citation()
    damage(cff)
    assert cff_errors(cff)


def test_one_version_everywhere():
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert version == membound.__version__ == str(citation()["version"])
    zenodo = json.loads((REPO / ".zenodo.json").read_text())
    assert zenodo["version"] == version and zenodo["publication_date"] == citation()["date-released"]
    assert {"identifier": PAPER_DOI, "relation": "isSupplementTo", "scheme": "doi"}.items() <= \
        zenodo["related_identifiers"][0].items()
    released = re.findall(r"^## \[(\d[^]]*)\] - (\S+)$", (REPO / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert released[0] == (version, citation()["date-released"])


def test_the_changelog_names_the_claims_estimate_as_the_code_gives_it():
    from membound.analysis.claims.verdicts import ESTIMAND

    text = " ".join((REPO / "CHANGELOG.md").read_text().split())
    claims = next(line for line in text.split("- ") if "claims C1-C5" in line)
    assert f"each with a {ESTIMAND[True]} estimate" in claims, claims     # over problems (issue 72)


def test_the_changelog_lists_the_spec_written_from_the_device():
    assert "python -m membound.specs new" in (REPO / "CHANGELOG.md").read_text()   # issue 71's README section
