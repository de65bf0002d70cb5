"""This site's daemon events for ``nerfwatch status``: the last one, and rows lost.

Several daemons may write one warehouse (sites sharing a lake, or two sites on one
host); each reads its own site's events, so a dead daemon never looks alive through
another's heartbeat. Events written before ``daemon_events.site`` existed
(``sql/schema/016_daemon_events_site.sql``) have none: they count for this site when
they name this host (a lake) or always (a file, written by one site until then).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from datetime import datetime

from pipeline.config import Config
from pipeline.warehouse import Lake, Warehouse

__all__ = ["SiteEvents", "read_site_events"]

_LOST_SQL = """
SELECT session_id, max(rows_lost) AS lost FROM daemon_events {where} GROUP BY session_id
"""

# After the wall clock stepped back, the newest events are stamped before older ones:
# the latest event not stamped in the future is the truer "last" one. Within the session
# that wrote it, ids order the events as they were made (new_run_id is monotonic within a
# process whatever the clock), so a stop stamped before the step's start still reads last.
_EVENT_SQL = """
SELECT kind, occurred_at, pid, detail FROM (
    SELECT *, occurred_at <= ? AS past FROM daemon_events {where}
) ORDER BY past DESC, max(occurred_at) OVER (PARTITION BY session_id, past) DESC,
    event_id DESC LIMIT 1
"""


@dataclass(frozen=True, slots=True)
class SiteEvents:
    last_event: str | None  # e.g. "heartbeat at 2026-11-20T10:00:00Z (pid 12)"
    lost_by_session: dict[str, int]


def read_site_events(warehouse: Warehouse, config: Config, now: datetime) -> SiteEvents:
    """This site's last event (the latest not stamped after ``now``) and each of its
    sessions' rows lost. Raises ``WarehouseError`` when the warehouse cannot be read."""
    where, params = _site_filter(warehouse, config)
    events = warehouse.query(_EVENT_SQL.format(where=where), [now, *params])
    lost = warehouse.query(_LOST_SQL.format(where=where), params)
    last = None
    if events.height:
        e = events.row(0, named=True)
        last = f"{e['kind']} at {e['occurred_at']:%Y-%m-%dT%H:%M:%SZ} (pid {e['pid']})"
    return SiteEvents(
        last, {row["session_id"]: row["lost"] or 0 for row in lost.iter_rows(named=True)}
    )


def _site_filter(warehouse: Warehouse, config: Config) -> tuple[str, list[str]]:
    """The WHERE clause (and its parameters) that keeps this site's events."""
    shared = isinstance(config.warehouse.location, Lake)
    host = socket.gethostname()
    columns = warehouse.query("SELECT * FROM daemon_events LIMIT 0").columns
    if "site" not in columns:  # a warehouse the daemon has not migrated yet
        return ("WHERE host = ?", [host]) if shared else ("", [])
    if shared:
        return "WHERE site = ? OR (site IS NULL AND host = ?)", [config.warehouse.site, host]
    return "WHERE site = ? OR site IS NULL", [config.warehouse.site]
