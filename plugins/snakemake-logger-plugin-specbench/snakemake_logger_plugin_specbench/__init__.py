"""specbench's progress lines as a Snakemake logger plugin (``--logger specbench``, the default workflow profile):
each running job's last log line with the time so far and the log's path, and the cells measured with the time
left. It reads the run's events and the files they name, and prints beside Snakemake's own output."""

import logging
import sys
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from logging import LogRecord
from pathlib import Path

from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.common import LogEvent
from snakemake_interface_logger_plugins.settings import LogHandlerSettingsBase

from .run import Run


@dataclass
class LogHandlerSettings(LogHandlerSettingsBase):
    interval: float = field(
        default=5.0, metadata={"help": "Seconds between two looks at the running jobs' logs.", "type": float}
    )
    first: float = field(default=5.0, metadata={"help": "Seconds a job runs before its first line.", "type": float})
    every: float = field(
        default=30.0, metadata={"help": "Seconds between two lines of one running job.", "type": float}
    )
    cells_every: float = field(
        default=10.0, metadata={"help": "Seconds between two cells lines (the last one comes at once).", "type": float}
    )


def write_between(stream, text: str, logger: logging.Logger = logging.getLogger("snakemake.logging")) -> None:
    """Write ``text`` to ``stream`` between two of Snakemake's own lines, never inside one: Snakemake's stream handler
    writes a line's message and its newline in two calls, from another thread than ours, holding its handler lock."""
    with ExitStack() as held:
        for handler in logger.handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream is stream:
                held.enter_context(handler.lock)
        stream.write(text)
        stream.flush()


class LogHandler(LogHandlerBase):
    """Feeds Snakemake's job events to a ``Run`` and prints its lines: on each event, and from a thread every
    ``interval`` seconds (a long compile writes nothing for minutes)."""

    def __post_init__(self) -> None:
        settings = self.settings if isinstance(self.settings, LogHandlerSettings) else LogHandlerSettings()
        self.run = Run(Path.cwd(), settings.first, settings.every, settings.cells_every)
        self._guard = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self._watch, args=(settings.interval,), name="specbench-progress", daemon=True
        )
        self.thread.start()

    def _print(self, lines: list[str]) -> None:
        if lines:
            write_between(sys.stderr, "".join(f"{line}\n" for line in lines))

    def _watch(self, interval: float) -> None:
        while not self.stop.wait(interval):
            with self._guard:
                self._print(self.run.lines(time.monotonic()))

    def emit(self, record: LogRecord) -> None:
        event, now = getattr(record, "event", None), time.monotonic()
        with self._guard:
            if event == LogEvent.RUN_INFO:
                self.run.planned_jobs(getattr(record, "stats", {}))
            elif event == LogEvent.JOB_INFO:
                self.run.job_info(
                    record.jobid, record.rule_name, record.output or (), record.log or (), record.wildcards or {}
                )
            elif event == LogEvent.JOB_STARTED:
                for jobid in record.jobs:
                    self.run.job_started(jobid, now)
            elif event == LogEvent.JOB_FINISHED:
                self.run.job_ended(record.job_id, now)
            elif event == LogEvent.JOB_ERROR:
                self.run.job_ended(record.jobid, now, ok=False)
            else:
                return
            self._print(self.run.lines(now))

    def close(self) -> None:
        """Stop the thread; the cells line the last events left due."""
        self.stop.set()
        with self._guard:
            last = self.run.cells_now(time.monotonic(), last=True)
            self._print([last] if last else [])
        super().close()

    @property
    def writes_to_stream(self) -> bool:
        return False  # beside Snakemake's own output, not in its place

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return True  # every event, whatever the verbosity

    @property
    def has_formatter(self) -> bool:
        return True

    @property
    def needs_rulegraph(self) -> bool:
        return False
