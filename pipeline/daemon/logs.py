"""One log line per event, with a UTC timestamp and a level: easy to grep, journald-friendly."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable

from probes.secrets import Secrets

__all__ = ["LOG_FORMAT", "setup_logging"]

LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


class _UTCFormatter(logging.Formatter):
    converter = staticmethod(time.gmtime)

    def __init__(self, secrets: Secrets) -> None:
        super().__init__(LOG_FORMAT, datefmt="%Y-%m-%dT%H:%M:%SZ")
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        # Keep one event per line even when a message or traceback spans several.
        # The whole line is scrubbed: httpcore's DEBUG lines carry raw response headers.
        return self.secrets.scrub(super().format(record).replace("\n", " | "))


def setup_logging(level: str | int = "INFO", secrets: Iterable[str | None] = ()) -> None:
    """Install the single formatter on the root logger (stderr).

    ``secrets``: values (API keys, webhook URLs) masked in every line, whoever logs it.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_UTCFormatter(Secrets(secrets)))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level)
    # APScheduler logs every run at INFO: at thousands of runs a minute that drowns
    # the events that matter. Misses and overruns still arrive as warnings.
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
