"""What the daemon reads back at start: today's spend and alerts left open.

Both come from the warehouse (read-only) plus, for spend, rows still in the spool, so
a restart neither forgets the day's budget nor re-sends an alert already open.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from datetime import UTC, date, datetime, time

from pipeline.daemon.budget import Spend
from pipeline.warehouse import Warehouse

__all__ = ["open_alerts", "spool_spend", "today_spend"]

log = logging.getLogger(__name__)


def day_start(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def today_spend(warehouse: Warehouse, day: date) -> dict[str, Spend]:
    """Tokens and cost of live probes stored for ``day`` (UTC), per provider."""
    frame = warehouse.query(
        "SELECT provider,"
        " sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) AS tokens,"
        " sum(coalesce(cost_usd, 0)) AS cost"
        " FROM probe_results"
        " WHERE source = 'live' AND started_at >= ? AND started_at < ?"
        " GROUP BY provider",
        [day_start(day), day_start(date.fromordinal(day.toordinal() + 1))],
    )
    return {
        row["provider"]: Spend(float(row["tokens"] or 0), float(row["cost"] or 0))
        for row in frame.iter_rows(named=True)
    }


def spool_spend(lines: Iterable[str], day: date) -> dict[str, Spend]:
    """The same sums over spooled rows not yet in the warehouse."""
    out: dict[str, Spend] = {}
    for line in lines:
        try:
            row = json.loads(line)
            started = datetime.fromisoformat(row["started_at"])
        except (ValueError, KeyError):
            continue
        if row.get("source") != "live" or started.astimezone(UTC).date() != day:
            continue
        spend = out.setdefault(row["provider"], Spend())
        spend.tokens += (row.get("input_tokens") or 0) + (row.get("output_tokens") or 0)
        spend.cost_usd += row.get("cost_usd") or 0.0
    return out


def open_alerts(warehouse: Warehouse) -> set[str]:
    """Providers whose latest health alert is 'triggered' (not yet resolved)."""
    frame = warehouse.query(
        "SELECT provider FROM ("
        " SELECT provider, kind, row_number() OVER"
        "  (PARTITION BY provider ORDER BY occurred_at DESC) AS n"
        " FROM alert_events WHERE kind IN ('triggered', 'resolved') AND provider IS NOT NULL)"
        " WHERE n = 1 AND kind = 'triggered'"
    )
    return set(frame["provider"].to_list()) if frame.height else set()
