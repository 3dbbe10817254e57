"""Snakemake logger plugin `membound` (`--logger membound`; the profiles set it): after each finished
job, one line on stderr with the jobs left and an estimate of the time they take
(membound.run.progress). Snakemake's own output is kept as it is."""

import sys

from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.common import LogEvent

from membound.run.progress import Progress


class LogHandler(LogHandlerBase):
    def __post_init__(self) -> None:
        self.progress = Progress()

    def emit(self, record) -> None:
        event, line = getattr(record, "event", None), None
        if event == LogEvent.RUN_INFO and self.progress.plan(record.stats):   # Snakemake may repeat it
            line = self.progress.line()
        elif event == LogEvent.JOB_INFO and not self.common_settings.dryrun:
            family = (getattr(record, "wildcards", None) or {}).get("family")   # the generic rules' kinds of job
            self.progress.start(record.jobid, record.rule_name, family)
        elif event == LogEvent.JOB_FINISHED:
            line = self.progress.finish(record.job_id)
        if line:   # one write: Snakemake's own handler writes from another thread
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    @property
    def writes_to_stream(self) -> bool:
        return False   # beside Snakemake's own stream handler, not instead of it

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return True    # every event, whatever --quiet says of Snakemake's own lines

    @property
    def has_formatter(self) -> bool:
        return True

    @property
    def needs_rulegraph(self) -> bool:
        return False
