"""Old heartbeats thinned in a real DuckDB file: a year of them was 1,051,200 rows and
166 MB, growing for as long as the daemon ran, though all they say is when each session
was alive, what it lost and what it did last; those readings must not change."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.daemon.events import SessionEvents
from pipeline.daemon.flush import Flusher, SegmentWriter
from pipeline.daemon.flush.heartbeats import GAP, thin_heartbeats
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.spool import Spool
from pipeline.daemon.tasks import BackgroundTasks
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id

NOW = datetime(2026, 12, 31, 12, 0, tzinfo=UTC)
OLD = NOW - timedelta(days=10)
BEAT = timedelta(seconds=30)


def _event(session: str, at: datetime, kind: str, lost: int | None) -> dict[str, Any]:
    return {"event_id": new_run_id(), "session_id": session, "occurred_at": at, "kind": kind,
            "host": "h", "pid": 7, "site": "here", "rows_lost": lost}  # fmt: skip


def _session(name: str, start: datetime, spans: list[tuple[float, float]]) -> list[dict[str, Any]]:
    """A start, heartbeats every 30 s within each (from_h, to_h) span after ``start``, a
    stop. Losses: none before 5 h, then 3 (NULL: written before the column existed)."""
    rows = [_event(name, start, "start", 0)]
    for begin, end in spans:
        at = start + timedelta(hours=begin)
        while at <= start + timedelta(hours=end):
            hours = (at - start) / timedelta(hours=1)
            rows.append(_event(name, at, "heartbeat", 3 if hours >= 5 else 0))
            at += BEAT
    rows.append(_event(name, rows[-1]["occurred_at"] + BEAT, "stop", rows[-1]["rows_lost"]))
    return rows


def _alive(frame: pl.DataFrame) -> list[tuple[str, datetime, datetime]]:
    """Per session, the spans covered by heartbeats no more than GAP apart."""
    spans: list[tuple[str, datetime, datetime]] = []
    beats = frame.filter(pl.col("kind") == "heartbeat").sort("session_id", "occurred_at")
    for (session,), rows in beats.group_by("session_id", maintain_order=True):
        times = rows["occurred_at"].to_list()
        begin = prev = times[0]
        for at in times[1:]:
            if at - prev > GAP:
                spans.append((str(session), begin, prev))
                begin = at
            prev = at
        spans.append((str(session), begin, prev))
    return spans


def _readings(frame: pl.DataFrame) -> dict[str, object]:
    """What status and a reader of sessions take from the events."""
    beats = frame.filter(pl.col("kind") == "heartbeat")
    firsts = beats.group_by("session_id", "rows_lost").agg(pl.col("occurred_at").min())
    return {
        "alive": _alive(frame),
        "others": frame.filter(pl.col("kind") != "heartbeat").sort("event_id").rows(),
        "last": beats.group_by("session_id")
        .agg(pl.col("event_id").max())
        .sort("session_id")
        .rows(),
        "losses": sorted(firsts.rows(), key=str),
    }


def _stored(warehouse: Warehouse) -> pl.DataFrame:
    return warehouse.query("SELECT * FROM daemon_events")


def _seed(warehouse: Warehouse) -> None:
    warehouse.migrate()
    old = _session("s-old", OLD, [(0, 2), (4, 6)])  # a 2 h suspend in the middle
    new = _session("s-new", NOW - timedelta(days=1), [(0, 2)])
    lost_null = [
        {**row, "rows_lost": None}
        for row in _session("s-older", OLD - timedelta(days=30), [(0, 1)])
    ]
    warehouse.insert_rows("daemon_events", [*old, *new, *lost_null], key="event_id")


def test_thinning_keeps_every_reading_and_drops_the_rest(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path / "w.duckdb")
    _seed(warehouse)
    before = _stored(warehouse)
    assert thin_heartbeats(warehouse, NOW)
    after = _stored(warehouse)
    assert _readings(after) == _readings(before)
    new_beats = before.filter((pl.col("session_id") == "s-new") & (pl.col("kind") == "heartbeat"))
    kept = after.filter(pl.col("kind") == "heartbeat")
    assert kept.filter(pl.col("session_id") == "s-new").height == new_beats.height  # young: all
    old_kept = kept.filter(pl.col("session_id") != "s-new").height
    assert old_kept <= 80, old_kept  # 2 per 10 minutes (+ the first with losses) of 603
    assert before.height - after.height > 520
    assert thin_heartbeats(warehouse, NOW)  # idempotent: nothing more to drop
    assert _stored(warehouse).height == after.height


def test_the_flush_that_stores_events_thins_at_most_once_a_day(tmp_path: Path) -> None:
    """Through the real spool and flush: the first flush of events thins, a second on the
    same day does not (its cost is paid once a day), one a day later does."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    _seed(warehouse)
    ticks = [0.0]
    writer = SegmentWriter(
        warehouse, tmp_path / "spool", wall=lambda: NOW, monotonic=lambda: ticks[0]
    )

    def flush_an_event() -> None:
        async def main() -> None:
            spool = Spool(tmp_path / "spool")
            spool.open()
            flusher = Flusher(spool, writer)
            events = SessionEvents(HeldRows(spool), "s-now", BackgroundTasks(), site="here")
            try:
                await events.write("heartbeat", None)
                assert flusher.flush_once().error is None
            finally:
                spool.close()

        asyncio.run(main())

    old_beats = "SELECT count(*) AS n FROM daemon_events WHERE session_id <> 's-now'"
    count = lambda: int(warehouse.query(old_beats)["n"][0])  # noqa: E731
    seeded = count()
    flush_an_event()
    thinned = count()
    assert thinned < seeded - 520
    warehouse.insert_rows("daemon_events", _session("s-late", OLD, [(0, 1)]), key="event_id")
    flush_an_event()
    assert count() == thinned + 123  # the same day: not thinned again
    ticks[0] += timedelta(days=1).total_seconds()
    flush_an_event()
    assert count() < thinned + 20  # s-late's 121 heartbeats: 2 per 10 minutes
