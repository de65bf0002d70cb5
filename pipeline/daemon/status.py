"""Daemon health for ``nerfwatch status``: per provider last probe, last error, today's spend.

Today's spend is the budget guard's figure (``state.today_spend`` and ``spool_spend``):
a run billed without usage (cut off by shutdown mid-probe, or no usage reported) counts
at its worst case, shown apart, and so does a run in flight, whose worst case the
running daemon holds reserved (``reserved``), so status never says less than the guard
counts. The reservations are read first, then the spool, then the warehouse: a run's
row is spooled before its reservation is released, and a flush stores rows before it
deletes their segment, so a run that moves on meanwhile is counted twice, never missed.

Reads the warehouse read-only (brief, retried: the daemon holds the file only during a
flush) and the spool directory, whose rows are not in the warehouse yet, less the
segments the warehouse already holds (kept by a folder that refused their deletion and
their stored mark: ``spool_stored``). Works while the daemon runs; when a reader holds
the file too long, the spool part still answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipeline.config import Config, ProviderConfig
from pipeline.daemon.budget import Spend
from pipeline.daemon.flush.segments import EVENT_TABLE, SPOOL_TABLE
from pipeline.daemon.reserved import read_reserved
from pipeline.daemon.spool_stored import WaitingLine, read_waiting, stored_segments
from pipeline.daemon.spooled import SpooledProbe, spooled_probe
from pipeline.daemon.state import add_spooled_spend, day_start, spooled_live_probe, today_spend
from pipeline.daemon.status_events import read_site_events
from pipeline.daemon.status_latest import latest_by_provider
from pipeline.warehouse import Lake, Warehouse, WarehouseError
from pipeline.warehouse.errors import NewerFile

__all__ = ["DaemonStatus", "ProviderStatus", "gather_status"]


@dataclass(slots=True)
class ProviderStatus:
    provider: str
    last_probe_at: datetime | None = None
    last_error_class: str | None = None  # of the last attempted probe
    last_error_at: datetime | None = None
    last_error: str | None = None  # class and detail of the last failed probe
    today_cost_usd: float = 0.0  # as the budget counts it, worst cases included
    today_worst_case_usd: float = 0.0  # of which: runs billed without usage, at worst
    today_reserved_usd: float = 0.0  # of which: runs in flight, at worst (the guard's hold)
    today_tokens: int = 0  # as the budget counts them, in-flight runs' worst case included
    today_reserved_tokens: int = 0  # of which: runs in flight
    today_skipped: int = 0


@dataclass(slots=True)
class DaemonStatus:
    providers: list[ProviderStatus]
    spool_depth: int
    last_event: str | None = None  # e.g. "heartbeat at 2026-11-20T10:00:00Z (pid 12)"
    warehouse_error: str | None = None
    quarantined: int = 0  # spool lines the warehouse could not take (table quarantined_rows)
    rows_lost: int = 0  # results daemons could not spool, over all recorded sessions
    spend_of_every_site: bool = False  # budget.scope = "lake": today's spend is the lake's
    notes: list[str] = field(default_factory=list)


_AHEAD = timedelta(minutes=1)  # sites' clocks may differ by this much without a note


def _later(a: datetime | None, b: datetime | None) -> bool:
    return b is not None and (a is None or b > a)


def _add_spend(by_name: dict[str, ProviderStatus], spent: Mapping[str, Spend]) -> None:
    for name, spend in spent.items():
        status = by_name.setdefault(name, ProviderStatus(name))
        status.today_cost_usd += spend.cost_usd
        status.today_worst_case_usd += spend.worst_case_usd
        status.today_tokens += int(spend.tokens)


def _add_reserved(by_name: dict[str, ProviderStatus], reserved: Mapping[str, Spend]) -> None:
    for name, spend in reserved.items():
        status = by_name.setdefault(name, ProviderStatus(name))
        status.today_cost_usd += spend.cost_usd
        status.today_reserved_usd += spend.cost_usd
        status.today_tokens += int(spend.tokens)
        status.today_reserved_tokens += int(spend.tokens)


def _merge_spool_row(
    status: ProviderStatus, row: SpooledProbe, today: datetime, tomorrow: datetime
) -> None:
    started = row.started_at
    if today <= started < tomorrow and row.run_status == "skipped":
        status.today_skipped += 1
    if row.run_status != "done":
        return
    if _later(status.last_probe_at, started):
        status.last_probe_at = started
        status.last_error_class = row.error_class
    if row.error_class not in (None, "ok") and _later(status.last_error_at, started):
        status.last_error_at = started
        detail = row.error_detail
        status.last_error = f"{row.error_class}: {detail}" if detail else row.error_class


@dataclass(slots=True)
class _SpoolReading:
    """What the waiting spool lines add to the warehouse's figures."""

    spent: dict[str, Spend] = field(default_factory=dict)  # today's, as the guard counts
    lost_by_session: dict[str, int] = field(default_factory=dict)
    ahead: int = 0  # probe rows stamped in the future
    damaged: int = 0


def _read_spool(
    lines: Iterable[WaitingLine],
    by_name: dict[str, ProviderStatus],
    prices: Mapping[str, ProviderConfig],
    today: datetime,
    now: datetime,
) -> _SpoolReading:
    """One pass over the waiting lines, each decoded once (by ``read_waiting``): spend,
    last probes and errors (merged into ``by_name``), rows lost, rows stamped ahead."""
    out = _SpoolReading()
    tomorrow = today + timedelta(days=1)
    for line in lines:
        row = line.row
        if row is None:
            out.damaged += 1
            continue
        if row.get(SPOOL_TABLE) == EVENT_TABLE:  # counts are cumulative per session
            session, count = str(row.get("session_id")), row.get("rows_lost")
            if isinstance(count, int) and not isinstance(count, bool):
                out.lost_by_session[session] = max(out.lost_by_session.get(session, 0), count)
            continue
        if row.get(SPOOL_TABLE) is not None:
            continue
        probe = spooled_probe(row)
        if probe is None:
            out.damaged += 1
        elif probe.source == "live":
            status = by_name.setdefault(probe.provider, ProviderStatus(probe.provider))
            _merge_spool_row(status, probe, today, tomorrow)
            out.ahead += probe.started_at > now + _AHEAD
            # the guard's predicate, as ``state.spool_spend`` applies it
            if spooled_live_probe(row) is not None and probe.started_at.date() == today.date():
                add_spooled_spend(out.spent, row, probe, prices)
    return out


def gather_status(
    config: Config, *, lock_wait_s: float = 10.0, now: datetime | None = None
) -> DaemonStatus:
    """Collect the status without writing anything (``now``: the clock, for tests)."""
    now = now or datetime.now(UTC)
    today = day_start(now.date())
    by_name = {p.name: ProviderStatus(p.name) for p in config.providers}
    prices = {p.name: p for p in config.providers}  # what worst cases are priced at
    result = DaemonStatus(list(by_name.values()), 0)
    spool_dir = config.warehouse.spool_dir
    reserved = read_reserved(spool_dir, today.date())  # first: see the module's docstring
    stored: frozenset[Path] = frozenset()  # segments the kernel kept, rows in the warehouse
    location = config.warehouse.location
    warehouse = Warehouse(location, lock_wait_s=lock_wait_s)
    waiting = read_waiting(spool_dir)  # once: which are stored, the depth, the rows
    lost_by_session: dict[str, int] = {}
    ahead = 0  # rows stamped in the future
    if isinstance(location, Lake) and not location.catalog_exists():
        result.notes.append(f"no warehouse yet: {location.where}")
    elif isinstance(location, Path) and not location.exists():
        result.notes.append(f"no warehouse yet at {location}")
    else:
        # Several sites share a lake: this site's probes, not the last of any site's.
        own = config.warehouse.own_site
        # the budget's view: this site's spend, or (scope "lake") every site's
        result.spend_of_every_site = own is not None and config.budget.scope == "lake"
        spend_site = None if result.spend_of_every_site else own
        try:
            frame = latest_by_provider(warehouse, today, now, now + _AHEAD, own)
            spent = today_spend(warehouse, today.date(), prices, site=spend_site)
            events = read_site_events(warehouse, config, now)
            quarantined = warehouse.query("SELECT count(*) AS n FROM quarantined_rows")
            stored = stored_segments(warehouse, waiting.segments)
        except NewerFile:
            raise  # never readable here, unlike a busy or unreachable warehouse: exit 1
        except WarehouseError as exc:
            result.warehouse_error = str(exc)
        else:
            result.quarantined = int(quarantined["n"][0])
            result.last_event = events.last_event
            lost_by_session.update(events.lost_by_session)
            for row in frame.iter_rows(named=True):
                status = by_name.setdefault(row["provider"], ProviderStatus(row["provider"]))
                status.last_probe_at = row["last_probe_at"]
                status.last_error_class = row["last_class"]
                status.last_error_at = row["last_error_at"]
                status.last_error = row["last_error"]
                status.today_skipped = int(row["today_skipped"])
                ahead += int(row["ahead"])
            _add_spend(by_name, spent)
    result.spool_depth = waiting.depth(stored)
    spool = _read_spool(waiting.pending_lines(stored), by_name, prices, today, now)
    _add_spend(by_name, spool.spent)
    _add_reserved(by_name, reserved.by_provider)
    if reserved.note is not None:
        result.notes.append(reserved.note)
    for session, count in spool.lost_by_session.items():
        lost_by_session[session] = max(lost_by_session.get(session, 0), count)
    ahead += spool.ahead
    damaged = spool.damaged
    if ahead:
        result.notes.append(
            f"{ahead} probe rows are stamped later than now (a wall clock since set back,"
            " or a probe site's clock ahead); 'last probe' may be one of them"
        )
    result.notes += [f"{e}; its rows are left out of the figures above" for e in waiting.unreadable]
    if damaged:
        result.notes.append(
            f"{damaged} spool lines are damaged; the next flush quarantines them"
            " (table quarantined_rows)"
        )
    result.rows_lost = sum(lost_by_session.values())
    result.providers = sorted(by_name.values(), key=lambda s: s.provider)
    return result
