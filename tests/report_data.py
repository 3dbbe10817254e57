"""The items of a Snakemake HTML report as its app reads them: the workflow description, the results
(path -> name, caption, mime type, data URI, rule) and the categories (category -> subcategory -> paths),
each a JSON value in its own <script> element of the report."""

import json
import re
from pathlib import Path


def report_data(html_path) -> dict:
    """{'workflow_desc': str, 'results': dict, 'categories': dict} of the report at `html_path`."""
    html = Path(html_path).read_text()
    out = {}
    for element, name in (("workflow-desc", "workflow_desc"), ("results", "results"), ("categories", "categories")):
        found = re.search(rf'<script id="{element}">\s*var {name} = (.*?);\s*</script>', html, re.DOTALL)
        assert found, f"{html_path}: no <script id={element!r}> (not a Snakemake report?)"
        out[name] = json.loads(found.group(1))
    return out
