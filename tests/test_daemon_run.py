"""The daemon in-process with a local probe function: rows, caps, budget, shutdown, reload.

These exercise scheduling and bookkeeping; tests/test_daemon_e2e.py repeats the
important ones against the real runner and the simulator over loopback HTTP.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from pipeline.config import (
    AlertsConfig,
    BudgetConfig,
    BudgetLimits,
    Config,
    DaemonConfig,
    ProbeConfig,
    ReportConfig,
    Webhook,
)
from pipeline.daemon import Daemon, DaemonError, DaemonStats, DaemonTuning
from pipeline.daemon.alerts import AlertEvent
from pipeline.daemon.spool import Spool
from pipeline.daemon.state import open_alerts, today_spend
from pipeline.daemon.status import DaemonStatus, gather_status
from pipeline.warehouse import Lake, Warehouse
from tests.support.daemon import LocalProbe, WebhookReceiver, make_config
from tests.support.waiting import wait_until_async, within
from tests.support.warehouses import located_on_every_backend

QUIET = DaemonTuning(install_signals=False, schedule_report=False)


def _run(config: Config, probe: LocalProbe, seconds: float) -> DaemonStats:
    async def main() -> DaemonStats:
        daemon = Daemon(config, probe_fn=probe, tuning=QUIET)
        return await within(daemon.run(stop_after_s=seconds), seconds + 120, "the daemon's run")

    return asyncio.run(main())


def _run_until(
    config: Config, probe: LocalProbe, enough: Callable[[Daemon], bool], what: str
) -> DaemonStats:
    """Run the daemon until ``enough`` holds (deadline: fails naming ``what``), then stop.

    For tests that need a number of runs to have happened: a fixed few seconds of
    schedule held too few of them when a loaded machine stalled the loop."""

    async def main() -> DaemonStats:
        daemon = Daemon(config, probe_fn=probe, tuning=QUIET)
        task = asyncio.create_task(daemon.run())
        try:
            await wait_until_async(lambda: enough(daemon) or task.done(), 180, what=what)
        finally:
            daemon.stop()
        return await within(task, 120, "the daemon to stop")

    return asyncio.run(main())


def _rows(config: Config) -> list[dict[str, Any]]:
    frame = Warehouse(config.warehouse.location).query(
        "SELECT run_id, provider, probe, run_status, skip_reason, input_tokens, output_tokens,"
        " cost_usd FROM probe_results ORDER BY started_at"
    )
    return list(frame.iter_rows(named=True))


@located_on_every_backend
def test_every_scheduled_run_leaves_exactly_one_row(
    tmp_path: Path, warehouse_location: Path | Lake
) -> None:
    config = make_config(tmp_path, every_s=0.5, location=warehouse_location)
    stats = _run(config, LocalProbe(latency_s=0.02), 3.0)
    rows = _rows(config)
    assert 8 <= stats.scheduled <= 16  # 2 jobs x 3 s / 0.5 s, give or take the edges
    assert len(rows) == stats.scheduled == stats.rows
    assert len({r["run_id"] for r in rows}) == len(rows)
    # A run may be skipped as an overrun or a misfire when a loaded machine stalls the loop
    # or the spool's fsync (CI saw one on the PostgreSQL+S3 lake): the scheduler's timing
    # verdicts, each still one row. On such a machine the stop may also catch a run that
    # fired but had not yet got its slot (CI saw one on a DuckDB file): skipped as a
    # shutdown, at most one per job, since a job runs one instance at a time. Any other
    # status or reason is a bug, and most runs are done.
    done = [r for r in rows if r["run_status"] == "done"]
    late = [r for r in rows if r["run_status"] != "done"]
    assert all(r["run_status"] == "skipped" for r in late), late
    assert {r["skip_reason"] for r in late} <= {"overrun", "misfire", "shutdown"}, late
    caught = [(r["provider"], r["probe"]) for r in late if r["skip_reason"] == "shutdown"]
    assert len(caught) == len(set(caught)), late
    assert len(done) > len(rows) / 2, rows
    assert all(r["cost_usd"] is not None and r["cost_usd"] > 0 for r in done)
    assert stats.spool_depth == 0
    # every run's start lag is recorded; how small it is, bench_daemon measures
    assert len(stats.start_lag_ms) == stats.scheduled


def test_overruns_are_recorded_as_skipped_rows(tmp_path: Path) -> None:
    config = make_config(tmp_path, every_s=0.5)
    stats = _run(config, LocalProbe(latency_s=1.2), 3.0)
    rows = _rows(config)
    assert len(rows) == stats.scheduled
    reasons = {r["skip_reason"] for r in rows if r["run_status"] == "skipped"}
    assert "overrun" in reasons


def test_caps_global_per_provider_and_long_context(tmp_path: Path) -> None:
    base = make_config(tmp_path)
    alpha, beta = base.providers
    providers = (replace(alpha, max_concurrency=2), replace(beta, max_concurrency=3))
    probes = tuple(
        ProbeConfig(f"short{i}", "arithmetic", 200, 0.5, None, ("alpha", "beta")) for i in range(4)
    ) + tuple(
        ProbeConfig(f"long{i}", "kv_lookup", 16_000, 0.5, None, ("alpha", "beta")) for i in range(3)
    )
    config = replace(
        base,
        providers=providers,
        probes=probes,
        daemon=replace(base.daemon, max_concurrency=4),
    )
    probe = LocalProbe(latency_s=0.3)

    def enough(daemon: Daemon) -> bool:  # long probes of both providers among them
        return probe.calls > 10 and {"alpha:long", "beta:long"} <= probe.peak_by.keys()

    stats = _run_until(config, probe, enough, "more than 10 probes, long ones of each provider")
    assert probe.calls > 10
    assert probe.peak <= 4
    assert probe.peak_by["alpha"] <= 2 and probe.peak_by["beta"] <= 3
    assert probe.peak_by["alpha:long"] == 1 and probe.peak_by["beta:long"] == 1
    assert len(_rows(config)) == stats.scheduled


def test_budget_caps_skip_with_reason_and_are_never_exceeded(tmp_path: Path) -> None:
    # Worst case per run: 200 in + 32 out = 232 tokens; a run really uses 220.
    budget = BudgetConfig(per_provider={"alpha": BudgetLimits(daily_tokens=5 * 232)})
    config = make_config(tmp_path, every_s=0.25, budget=budget)

    # Run until alpha was refused for its budget, with at least 12 runs done (alpha's five
    # and beta's seven or more). Three seconds of schedule, as before, held fewer on a
    # loaded machine whose scheduler skipped runs as misfires. A refusal comes only once
    # alpha's five runs have settled: its job runs one instance at a time.
    def enough(daemon: Daemon) -> bool:
        return daemon.stats.skipped["budget"] >= 1 and daemon.stats.done >= 12

    stats = _run_until(config, LocalProbe(latency_s=0.01), enough, "alpha's cap, 12 runs done")
    rows = _rows(config)
    alpha = [r for r in rows if r["provider"] == "alpha"]
    done = [r for r in alpha if r["run_status"] == "done"]
    used = sum(int(r["input_tokens"]) + int(r["output_tokens"]) for r in done)
    assert len(done) == 5 and used <= 5 * 232
    # Past its five, alpha is skipped for its budget; on a loaded machine a run may also be
    # skipped by the scheduler (an overrun, or a misfire when the loop stalled past the
    # grace), or at the stop before the gate (shutdown), never run for more.
    reasons = {r["skip_reason"] for r in alpha if r["run_status"] == "skipped"}
    assert "budget" in reasons, reasons
    assert reasons <= {"budget", "overrun", "misfire", "shutdown"}, reasons
    # beta has no cap: alpha's budget never skips it, and it runs on past alpha's five
    # (a beta run may still be skipped as an overrun, or aborted at the stop, on a loaded
    # machine: those are the scheduler's verdicts, not the budget's)
    beta = [r for r in rows if r["provider"] == "beta"]
    assert all(r["skip_reason"] != "budget" for r in beta), beta
    assert sum(r["run_status"] == "done" for r in beta) > len(done), beta
    assert len(rows) == stats.scheduled


def test_stop_gives_grace_then_aborts_in_flight_probes(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        every_s=0.5,
        daemon=DaemonConfig(flush_interval_s=0.2, lock_wait_s=0.2, shutdown_grace_s=0.3),
    )
    probe = LocalProbe(gate=asyncio.Event())  # probes hang until the gate opens: never

    async def main() -> DaemonStats:
        stop = asyncio.Event()
        daemon = Daemon(config, probe_fn=probe, tuning=QUIET)
        task = asyncio.create_task(daemon.run(stop_event=stop))
        await wait_until_async(lambda: probe.calls >= 2, what="two probes in flight")
        stop.set()
        return await within(task, 120, "the daemon to stop")

    stats = asyncio.run(main())
    rows = _rows(config)
    assert stats.aborted >= 2
    assert {r["run_status"] for r in rows} <= {"aborted", "skipped"}
    assert all(r["skip_reason"] == "shutdown" for r in rows)
    assert len(rows) == stats.scheduled


def test_reload_applies_a_valid_config_and_keeps_the_old_one_on_error(tmp_path: Path) -> None:
    base = replace(make_config(tmp_path, every_s=0.3), path=tmp_path / "nerfwatch.toml")
    extra = ProbeConfig("added", "arithmetic", 200, 0.3, None, ("alpha",))
    versions: list[Config | Exception] = [
        ValueError("nerfwatch.toml:3: probes[0].every: expected a duration"),
        replace(base, probes=(*base.probes, extra)),
    ]

    def loader(path: Path) -> Config:
        item = versions.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    probe = LocalProbe(latency_s=0.01)

    async def main() -> DaemonStats:
        daemon = Daemon(base, probe_fn=probe, tuning=QUIET, config_loader=loader)
        task = asyncio.create_task(daemon.run())
        await wait_until_async(lambda: probe.calls >= 2, what="first probes")
        daemon.reload()  # invalid: logged, old config kept
        await wait_until_async(lambda: len(versions) == 1, what="reload 1")
        daemon.reload()
        await wait_until_async(lambda: daemon.stats.done >= 8 and not versions, what="reload 2")
        calls = probe.calls
        await wait_until_async(lambda: probe.calls >= calls + 6, what="probes after reload")
        daemon.stop()
        return await within(task, 120, "the daemon to stop")

    stats = asyncio.run(main())
    probes = {(r["provider"], r["probe"]) for r in _rows(base)}
    assert ("alpha", "added") in probes
    assert stats.done > 0


# A wait that includes the daemon's start-up and its flush process's (a spawned child
# importing DuckDB and polars, then its first insert): on a loaded machine that took over
# the 60 s default. A passing test never waits for the deadline.
STARTUP_S = 180


def test_metrics_endpoint_and_status_while_running(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        every_s=0.3,
        daemon=DaemonConfig(flush_interval_s=0.2, lock_wait_s=0.2, metrics_port=0),
    )
    probe = LocalProbe(latency_s=0.01, error_class="overloaded")

    async def main() -> tuple[str, DaemonStats]:
        daemon = Daemon(config, probe_fn=probe, tuning=QUIET)
        task = asyncio.create_task(daemon.run())
        await wait_until_async(
            lambda: daemon.stats.flushed_rows >= 4, STARTUP_S, what="flushed rows"
        )
        port = daemon.stats.metrics_port
        async with httpx.AsyncClient() as client:
            text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text

        def read_status() -> DaemonStatus:
            with daemon.reading():  # one process may not mix read-only and read-write
                return gather_status(config)

        status = await asyncio.to_thread(read_status)
        assert {p.provider for p in status.providers} == {"alpha", "beta"}
        assert all(p.last_error and "overloaded" in p.last_error for p in status.providers)
        assert all(p.today_cost_usd > 0 for p in status.providers)
        daemon.stop()
        return text, await within(task, 120, "the daemon to stop")

    text, _ = asyncio.run(main())
    assert 'nerfwatch_probe_duration_seconds_bucket{le="0.05",phase="ttft"' in text
    assert 'nerfwatch_probe_success{probe="short",provider="alpha"} 0.0' in text
    assert 'nerfwatch_probe_errors_total{error_class="overloaded",provider="alpha"}' in text
    assert "nerfwatch_budget_used_usd" in text


@pytest.mark.parametrize("reason", ["missing runner"])
def test_probe_function_errors_become_aborted_rows(tmp_path: Path, reason: str) -> None:
    class Broken(LocalProbe):
        async def __call__(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(reason)

    config = make_config(tmp_path, every_s=0.5)
    stats = _run(config, Broken(), 1.5)
    rows = _rows(config)
    assert rows and {r["skip_reason"] for r in rows} == {"internal_error"}
    assert len(rows) == stats.scheduled


MONDAY_MORNING = datetime(2026, 11, 16, 7, tzinfo=UTC)  # 08:00 in Berlin


def test_weekly_report_is_scheduled_and_its_link_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = WebhookReceiver()
    monkeypatch.setenv("NW_REPORT_HOOK", receiver.url("/reports"))
    base = make_config(
        tmp_path, every_s=0.3, alerts=AlertsConfig(webhooks=(Webhook("r", "NW_REPORT_HOOK"),))
    )
    config = replace(
        base,
        report=ReportConfig(
            out_dir=tmp_path / "reports", weekday="mon", time="08:00", timezone="Europe/Berlin"
        ),
    )
    probe = LocalProbe(latency_s=0.01)

    async def main() -> tuple[dict[str, datetime], Path | None]:
        daemon = Daemon(config, probe_fn=probe, tuning=DaemonTuning(install_signals=False))
        task = asyncio.create_task(daemon.run())
        await wait_until_async(lambda: daemon.stats.flushed_rows >= 4, what="rows stored")
        runs = daemon.next_runs()
        path = await within(daemon.run_weekly_report(now=MONDAY_MORNING), 120, "the weekly report")
        daemon.stop()
        await within(task, 120, "the daemon to stop")
        return runs, path

    try:
        runs, path = asyncio.run(main())
    finally:
        receiver.close()
    when = runs["weekly-report"].astimezone(ZoneInfo("Europe/Berlin"))
    assert (when.weekday(), when.hour, when.minute) == (0, 8, 0)
    # A pinned Monday: the week that just ended has no probes (they are all from the
    # real clock, later), so the report is the empty page pointing at their week.
    assert path is not None and path.name == "nerfwatch-2026-W46.html"
    assert "nerfwatch report --week" in path.read_text(encoding="utf-8")
    (route, body) = receiver.received[-1]
    assert route == "/reports" and body["kind"] == "report"
    assert str(path.name) in json.dumps(body)


def test_a_stalled_event_loop_leaves_misfire_rows_not_silent_gaps(tmp_path: Path) -> None:
    config = make_config(tmp_path, every_s=1.0)

    class Blocking(LocalProbe):
        """Blocks the whole event loop once, as a long synchronous call would."""

        async def __call__(self, *args: Any, **kwargs: Any) -> Any:
            if self.calls == 0:
                time.sleep(3.5)  # deliberately blocking: this is the fault under test
            return await super().__call__(*args, **kwargs)

    stats = _run(config, Blocking(latency_s=0.01), 7.0)
    rows = _rows(config)
    assert len(rows) == stats.scheduled
    assert stats.skipped["misfire"] >= 2
    misfires = [r for r in rows if r["skip_reason"] == "misfire"]
    assert {r["run_status"] for r in misfires} == {"skipped"}


def test_a_failed_start_is_one_error_and_releases_the_spool(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = make_config(
            tmp_path, daemon=DaemonConfig(flush_interval_s=0.2, lock_wait_s=0.2, metrics_port=port)
        )
        match = f"daemon.metrics_port: cannot listen on 127.0.0.1:{port}"
        with pytest.raises(DaemonError, match=match) as failed:
            _run(config, LocalProbe(), 1.0)
        assert failed.value.exit_code == 2  # the config asked for a port in use
    second = Spool(config.warehouse.spool_dir)
    second.open()  # the failed daemon let go of the spool lock
    second.close()


def test_health_alerts_trigger_and_resolve_through_a_real_webhook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver = WebhookReceiver()
    monkeypatch.setenv("NW_ALERT_HOOK", receiver.url("/alerts"))
    alerts = AlertsConfig(
        webhooks=(Webhook("ops", "NW_ALERT_HOOK", "slack"),),
        error_rate=0.5,
        window=4,
        failure_threshold=2,
        success_threshold=2,
    )
    config = make_config(tmp_path, every_s=0.3, alerts=alerts)
    probe = LocalProbe(latency_s=0.01, error_class="overloaded")

    def texts() -> list[str]:
        return [str(body["text"]) for _, body in receiver.received]

    async def main() -> None:
        daemon = Daemon(config, probe_fn=probe, tuning=QUIET)
        task = asyncio.create_task(daemon.run())
        # two providers alert independently: wait for alpha's own trigger and resolution
        await wait_until_async(lambda: any("alpha unhealthy" in t for t in texts()), what="trigger")
        probe.error_class = "ok"
        await wait_until_async(lambda: any("alpha resolved" in t for t in texts()), what="resolve")
        daemon.stop()
        await within(task, 120, "the daemon to stop")

    try:
        asyncio.run(main())
    finally:
        receiver.close()
    first_trigger = next(t for t in texts() if "unhealthy" in t)
    assert "error_rate=" in first_trigger
    stored = Warehouse(config.warehouse.path).query(
        "SELECT provider, kind, delivered FROM alert_events ORDER BY occurred_at"
    )
    kinds = set(zip(stored["provider"].to_list(), stored["kind"].to_list(), strict=True))
    assert {("alpha", "triggered"), ("alpha", "resolved")} <= kinds
    assert set(stored["delivered"].to_list()) == {1}


def test_open_alerts_and_todays_spend_are_read_back_at_start(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    now = datetime.now(UTC)
    events = [
        AlertEvent("triggered", "alpha", "alpha unhealthy", at=now - timedelta(minutes=5)),
        AlertEvent("resolved", "alpha", "alpha resolved", at=now - timedelta(minutes=1)),
        AlertEvent("triggered", "beta", "beta unhealthy", at=now - timedelta(minutes=2)),
        AlertEvent("phase", "gamma", "gamma entered phase x", at=now),
    ]
    warehouse.insert_rows("alert_events", [e.as_row(1) for e in events], key="event_id")
    assert open_alerts(warehouse) == {"beta"}
    config = make_config(tmp_path, every_s=0.3)
    _run(config, LocalProbe(latency_s=0.01), 1.5)
    prices = {p.name: p for p in config.providers}
    spend = today_spend(Warehouse(config.warehouse.path), now.date(), prices)
    assert set(spend) == {"alpha", "beta"}
    assert all(s.tokens > 0 and s.cost_usd > 0 for s in spend.values())


def test_a_full_batch_flushes_before_the_interval(tmp_path: Path) -> None:
    """``flush_max_rows`` bounds a flush's batch (and so how long it holds the file);
    the flush interval here is far longer than the test."""
    config = make_config(
        tmp_path,
        every_s=0.2,
        daemon=DaemonConfig(flush_interval_s=3600, lock_wait_s=0.2, shutdown_grace_s=5),
    )
    tuning = replace(QUIET, flush_max_rows=4, flush_min_gap_s=0.05)

    async def main() -> DaemonStats:
        daemon = Daemon(config, probe_fn=LocalProbe(latency_s=0.01), tuning=tuning)
        task = asyncio.create_task(daemon.run())
        await wait_until_async(lambda: daemon.stats.flushed_rows >= 8, what="early flushes")
        assert max(daemon.stats.flush_ms) > 0
        daemon.stop()
        return await within(task, 120, "the daemon to stop")

    stats = asyncio.run(main())
    assert len(_rows(config)) == stats.rows
