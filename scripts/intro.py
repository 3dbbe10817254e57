"""Rule intro: the report's opening text, the papers and each GPU's paragraph (membound.report_text)."""
import sys

sys.stderr = open(snakemake.log[0], "w")  # errors go to the rule's log
from pathlib import Path

from membound import report_text
from membound.run.outputs import write_text

p = snakemake.params
write_text(report_text.intro(p.profile, p.reference, [Path(f).read_text() for f in snakemake.input.about], p.compared,
                             p.cpu), snakemake.output[0])
