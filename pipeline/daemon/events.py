"""Lifecycle events (start, heartbeat, reload, stop) for ``daemon_events``.

They go through the spool like probe rows: a session that started has its start event
on disk, whatever happens to the process afterwards. Each names its host and its probe
site: two sites may run on one host, and ``nerfwatch status`` reads its own site's.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import UTC, datetime

from pipeline.daemon.flush.segments import EVENT_TABLE, SPOOL_TABLE
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.tasks import BackgroundTasks
from probes.ids import new_run_id
from probes.result import NERFWATCH_VERSION

__all__ = ["SessionEvents"]


class SessionEvents:
    """Spools one session's lifecycle events."""

    def __init__(
        self, rows: HeldRows, session_id: str, tasks: BackgroundTasks, *, site: str | None = None
    ) -> None:
        """``site``: the daemon's probe site (``WarehouseConfig.site``); None leaves it
        unrecorded, as events before ``daemon_events.site`` were."""
        self._rows = rows
        self._session_id = session_id
        self._tasks = tasks
        self._site = site

    def record(self, kind: str, detail: str | None) -> None:
        """Spool an event in the background (the stop waits for it)."""
        self._tasks.spawn(self.write(kind, detail))

    async def write(self, kind: str, detail: str | None) -> None:
        """Spool an event now."""
        row = {
            SPOOL_TABLE: EVENT_TABLE,
            "event_id": new_run_id(),
            "session_id": self._session_id,
            "occurred_at": datetime.now(UTC).isoformat(),
            "kind": kind,
            "detail": detail,
            "host": socket.gethostname(),
            "site": self._site,
            "pid": os.getpid(),
            "nerfwatch_version": NERFWATCH_VERSION,
            "rows_lost": self._rows.lost,
        }
        await self._rows.append(json.dumps(row, sort_keys=True))
