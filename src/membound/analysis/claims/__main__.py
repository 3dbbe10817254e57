"""python -m membound.analysis.claims CLAIMS_JSON... [--docs FILE]: each GPU's claims table
(report.claims_table) from its claims.json, printed, or written into FILE between its measured
markers (docs/claims.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from membound.analysis.claims import report
from membound.run import outputs


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m membound.analysis.claims",
                                     description="Each GPU's claims table from its claims.json, printed or written.")
    parser.add_argument("claims", nargs="+", type=Path, help="claims.json of each GPU, in the order to show them")
    parser.add_argument("--docs", type=Path, help="a Markdown file with the measured markers (docs/claims.md)")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.claims if not p.is_file()]
    if missing:
        raise SystemExit(f"error: no {', '.join(missing)}: render it first (snakemake --profile profiles/reference all)")
    results = [json.loads(p.read_text()) for p in args.claims]
    if args.docs:
        outputs.write_text(report.with_measured(args.docs.read_text(), results), args.docs)
    else:
        print(report.measured(results), end="")


if __name__ == "__main__":
    main()
