"""One log line per event, with a UTC timestamp and a level: easy to grep, journald-friendly."""

from __future__ import annotations

import logging
import sys
import time

__all__ = ["LOG_FORMAT", "setup_logging"]

LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


class _UTCFormatter(logging.Formatter):
    converter = staticmethod(time.gmtime)

    def format(self, record: logging.LogRecord) -> str:
        # Keep one event per line even when a message or traceback spans several.
        return super().format(record).replace("\n", " | ")


def setup_logging(level: str | int = "INFO") -> None:
    """Install the single formatter on the root logger (stderr)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_UTCFormatter(LOG_FORMAT, datefmt="%Y-%m-%dT%H:%M:%SZ"))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level)
    # APScheduler logs every run at INFO: at thousands of runs a minute that drowns
    # the events that matter. Misses and overruns still arrive as warnings.
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
