"""Two sites' daemons on one host, one DuckDB file: each site's ``nerfwatch status``
reads its own daemon's events, so a stopped daemon does not look alive through the
other's heartbeat. Events go the real way: spool, flush, warehouse."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipeline.config import Config
from pipeline.daemon.events import SessionEvents
from pipeline.daemon.flush import Flusher, SegmentWriter
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.spool import Spool
from pipeline.daemon.status import gather_status
from pipeline.daemon.tasks import BackgroundTasks
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id
from tests.support.daemon import make_config


def _site(tmp_path: Path, site: str) -> Config:
    """A site's config: its own spool folder, the shared warehouse file."""
    config = make_config(tmp_path)
    warehouse = replace(config.warehouse, probe_site=site, spool_dir=tmp_path / site / "spool")
    return replace(config, warehouse=warehouse)


def _events(config: Config, session: str, kinds: list[str]) -> None:
    """Write ``kinds`` as one session's events through a spool, then flush them."""

    async def main() -> None:
        spool = Spool(config.warehouse.spool_dir)
        spool.open()
        flusher = Flusher(spool, SegmentWriter(Warehouse(config.warehouse.path), spool.directory))
        events = SessionEvents(
            HeldRows(spool), session, BackgroundTasks(), site=config.warehouse.site
        )
        try:
            for kind in kinds:
                await events.write(kind, None)
            assert flusher.flush_once().error is None
        finally:
            flusher.close()
            spool.close()

    asyncio.run(main())


def test_status_reads_its_own_sites_events_not_another_sites_on_this_host(
    tmp_path: Path,
) -> None:
    """Site 'alpha' stopped, then 'beta' on the same host sent a heartbeat: alpha's status
    said 'heartbeat ...' (beta's). An event from before events had a site still reads as
    this site's when the site has none of its own since."""
    alpha, beta, gamma = (_site(tmp_path, s) for s in ("alpha", "beta", "gamma"))
    warehouse = Warehouse(alpha.warehouse.path)
    warehouse.migrate()
    old = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    warehouse.insert_rows(
        "daemon_events",
        [{"event_id": "e-old", "session_id": "s-old", "occurred_at": old, "kind": "heartbeat",
          "host": "h", "pid": 7, "rows_lost": 2}],
        key="event_id",
    )  # fmt: skip
    warehouse.close()
    _events(alpha, "s-alpha", ["start", "heartbeat", "stop"])
    _events(beta, "s-beta", ["start", "heartbeat"])
    stored = Warehouse(alpha.warehouse.path).query(
        "SELECT site, kind, occurred_at FROM daemon_events ORDER BY occurred_at"
    )
    assert stored["site"].to_list() == [None, "alpha", "alpha", "alpha", "beta", "beta"], stored

    assert (gather_status(alpha, lock_wait_s=5).last_event or "").startswith("stop at ")
    assert (gather_status(beta, lock_wait_s=5).last_event or "").startswith("heartbeat at ")
    lone = gather_status(gamma, lock_wait_s=5)
    assert lone.last_event == f"heartbeat at {old:%Y-%m-%dT%H:%M:%SZ} (pid 7)"
    assert lone.rows_lost == 2


def test_a_stop_stamped_before_its_start_by_a_clock_step_still_reads_last(
    tmp_path: Path,
) -> None:
    """The wall clock stepped back 60 s after the heartbeat, so the stop is stamped before
    the start. Once the clock has caught up, status said 'heartbeat at ...' of a daemon
    that had stopped; the session's ids (made in order whatever the clock) say stop."""
    config = _site(tmp_path, "alpha")
    warehouse = Warehouse(config.warehouse.path)
    warehouse.migrate()
    start = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    stamps = [("start", start), ("heartbeat", start + timedelta(seconds=30)),
              ("stop", start - timedelta(seconds=20))]  # fmt: skip
    earlier = [("start", start - timedelta(hours=2)), ("stop", start - timedelta(hours=1))]
    rows = [
        {"event_id": new_run_id(), "session_id": session, "occurred_at": at, "kind": kind,
         "host": "h", "pid": pid, "site": "alpha", "rows_lost": 0}
        for session, pid, events in (("s-earlier", 6, earlier), ("s-now", 7, stamps))
        for kind, at in events
    ]  # fmt: skip
    warehouse.insert_rows("daemon_events", rows, key="event_id")
    warehouse.close()
    later = start + timedelta(minutes=5)
    assert gather_status(config, lock_wait_s=5, now=later).last_event == (
        f"stop at {start - timedelta(seconds=20):%Y-%m-%dT%H:%M:%SZ} (pid 7)"
    )
    # before the clock caught up, the heartbeat (stamped in the future) still does not lead
    during = start + timedelta(seconds=10)
    assert (gather_status(config, lock_wait_s=5, now=during).last_event or "").startswith("stop")
