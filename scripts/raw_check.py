"""Rule raw_check: every raw file the tables, figures and claims read, checked once before any of them
runs (membound.run.raw), each against the record its job wrote beside it: a damaged or unrecorded one
stops the run with one line naming it, what is wrong and the fix; otherwise tables/raw_inputs.csv
lists each file, its rows and SHA-256."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log (the profiles show a failed job's log)
import pandas as pd

from membound.counters import rows as counter_rows
from membound.run import outputs, raw

SCHEMAS = {"bench": raw.ROWS, "originals": raw.ROWS, "counted": raw.ROWS, "counters": counter_rows.SCHEMA}
checked = []
try:
    for key, schema in SCHEMAS.items():
        for path in snakemake.input.get(key, []):
            rule = "counters_dgemm" if "/counters/dgemm." in path else snakemake.params.rules[key]
            fix = snakemake.params.fix.format(path=path, rule=rule)
            rows = raw.read(path, schema, fix, recorded=True)
            checked.append({"file": path, "kind": schema.name, "rows": len(rows), "sha256": outputs.sha256(path)})
except raw.RawError as err:
    sys.exit(f"membound: {err}")
outputs.write_csv(pd.DataFrame(checked, columns=["file", "kind", "rows", "sha256"]), snakemake.output[0])
