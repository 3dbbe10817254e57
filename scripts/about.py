"""Rule about: one GPU's paragraph of the report's opening text, from its raw rows (membound.report_text)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

import pandas as pd

from membound import families, report_text
from membound.run import config, raw
from membound.run.outputs import write_text

rows = raw.read_all(snakemake.input.raw)  # checked first by rule raw_check
counted = [families.FAMILIES[Path(p).stem].title for p in snakemake.input.counters if Path(p).stem in families.FAMILIES]
matrices = pd.read_csv(snakemake.input.matrices)
spec = config.load_gpu(Path(snakemake.input.gpu).stem)["name"]
text = report_text.about(snakemake.params.label, spec, rows, counted, snakemake.params.why_not,
                         matrices if rows["kernel"].eq("spmv").any() else matrices.iloc[:0])
write_text(text, snakemake.output[0])
