"""Record raw CSVs on purpose, beside each FILE its rows and SHA-256 (`FILE.meta.json`, as its job
records it: outputs.recorded), so that rule raw_check uses the file and membound.run.raw finds it cut or
changed later: a raw file brought from another machine without its record (README, Troubleshooting;
rule raw_check refuses an unrecorded file and names this command), or one written before jobs
recorded them (the committed reference runs':
`python tools/record_raw.py results/reference/*/raw/*.csv results/reference/*/raw/counters/*.csv`).

    python tools/record_raw.py FILE...

Each file is read first (membound.run.raw, its schema): a damaged file is named and not recorded.
"""

import sys

from membound.counters import rows as counter_rows
from membound.run import outputs, raw


def schema(path: str) -> raw.Schema:
    """The counter rows' schema for raw/counters/<family>.csv, else the benchmark rows'."""
    return counter_rows.SCHEMA if "/counters/" in path and not path.endswith(".rows.csv") else raw.ROWS


def main(paths: list[str]) -> None:
    if not paths:
        sys.exit(__doc__)
    for path in paths:
        try:
            raw.read(path, schema(path), "not recorded")
        except raw.RawError as err:
            sys.exit(f"error: {err}")
        outputs.record(path, path)
        print(f"recorded {outputs.meta_path(path)}")


if __name__ == "__main__":
    main(sys.argv[1:])
