"""Old heartbeats thinned to what they say: when each session was alive.

A daemon stores a heartbeat every 30 s, about a million rows a year, and only their
pattern carries information: a session was alive through each run of heartbeats spaced
no more than ``GAP`` apart, and a longer gap (a suspend, a hang) is a time it was not.
In heartbeats older than ``KEEP``, each session's are cut into ``GAP``-long buckets and
only the first and last of each bucket are kept, plus the first heartbeat at each
``rows_lost`` count. Two kept neighbours in one bucket are less than ``GAP`` apart, and
neighbours in different buckets are neighbours as they were stored, so every gap longer
than ``GAP``, and so every alive span, is exactly what it was; so are each session's
last heartbeat (what ``nerfwatch status`` reads) and its losses and when they began.
Other event kinds are never touched. About 2 rows per ``GAP`` remain: 10x fewer.

Thinning runs in the flush that stores events, at most once per ``EVERY``. The delete is
idempotent, so two sites of one lake thinning at once lose nothing; a thinning that
fails is logged and tried again a day later, never a failed flush.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from pipeline.warehouse import Warehouse, WarehouseError

__all__ = ["EVERY", "GAP", "KEEP", "thin_heartbeats"]

log = logging.getLogger(__name__)

GAP = timedelta(minutes=10)  # heartbeats further apart: the session was not alive between
KEEP = timedelta(days=7)  # heartbeats younger than this are all kept
EVERY = timedelta(days=1)

_THIN_SQL = """
DELETE FROM daemon_events WHERE event_id IN (
    SELECT event_id FROM (
        SELECT event_id, occurred_at,
            row_number() OVER (
                PARTITION BY session_id, time_bucket(?, occurred_at)
                ORDER BY occurred_at, event_id
            ) AS nth_in_bucket,
            row_number() OVER (
                PARTITION BY session_id, time_bucket(?, occurred_at)
                ORDER BY occurred_at DESC, event_id DESC
            ) AS nth_from_bucket_end,
            row_number() OVER (
                PARTITION BY session_id, rows_lost ORDER BY occurred_at, event_id
            ) AS nth_at_this_loss
        FROM daemon_events WHERE kind = 'heartbeat'
    )
    WHERE occurred_at < ? AND nth_in_bucket > 1 AND nth_from_bucket_end > 1
      AND nth_at_this_loss > 1
)
"""


def thin_heartbeats(warehouse: Warehouse, now: datetime) -> bool:
    """Thin heartbeats older than ``KEEP`` before ``now``; False (logged) if it failed."""
    try:
        warehouse.execute(_THIN_SQL, [GAP, GAP, now - KEEP])
    except WarehouseError as exc:
        log.warning("thinning old heartbeats failed (tried again in a day): %s", exc)
        return False
    return True
