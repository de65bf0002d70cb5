"""The budget after a SIGHUP: a day's stored spend is read at the prices new probes are
priced with, and on a lake each site's budget reads its own site's rows.

Real parts throughout: a config file loaded and reloaded by the real loader, the warm
start over a DuckDB file and a spool, the reloader, the gate; only the budget's day is
pinned."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from pipeline.config import Config, ProviderConfig, load_config
from pipeline.daemon.alerts import AlertEvaluator
from pipeline.daemon.budget import BudgetGuard, Spend, worst_case
from pipeline.daemon.events import SessionEvents
from pipeline.daemon.flush import Flusher, SegmentWriter
from pipeline.daemon.gate import Gate
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.reloader import Reloader
from pipeline.daemon.spool import Spool
from pipeline.daemon.startup import warm_start
from pipeline.daemon.state import today_spend
from pipeline.daemon.tasks import BackgroundTasks
from pipeline.warehouse import Lake, Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.daemon import every_second_probe, make_config, write_toml
from tests.support.waiting import within

DAY_1, DAY_2 = date(2026, 11, 20), date(2026, 11, 21)


def _provider(name: str, price_in: float, price_out: float) -> dict[str, object]:
    return {
        "name": name,
        "format": "openai",
        "base_url": f"http://127.0.0.1:9/{name}/v1",
        "model": f"{name}-model",
        "price_input_per_mtok": price_in,
        "price_output_per_mtok": price_out,
    }


def _write(path: Path, providers: list[dict[str, object]]) -> None:
    write_toml(path, providers, [every_second_probe("short")])
    with path.open("a", encoding="utf-8") as out:
        out.write("\n[budget]\ndaily_cost_usd = 1.0\n")


def _billed_without_usage(provider: str, at: datetime, site: str = "test") -> ProbeResult:
    """A 2xx reply whose usage never came back: it counts at its worst case."""
    return ProbeResult(
        run_id=new_run_id(),
        started_at=at,
        provider=provider,
        model="m",
        probe="short",
        task_family="arithmetic",
        source="live",
        probe_site=site,
        run_status="done",
        http_status=200,
        error_class="ok",
        context_target_tokens=900,
        max_output_tokens=100,
    )


async def _warm(config: Config, guard: BudgetGuard, spool: Spool) -> None:
    """The daemon's start: its warm start gives the guard its reader of stored spend."""
    writer = SegmentWriter(Warehouse(config.warehouse.location), spool.directory)
    flusher = Flusher(spool, writer)
    alerts = AlertEvaluator(config.alerts)
    await warm_start(config, flusher=flusher, spool=spool, budget=guard, alerts=alerts)


def test_a_day_read_after_a_reload_counts_at_the_reloaded_prices(tmp_path: Path) -> None:
    """Started with alpha at $1/$4 per Mtok, reloaded with alpha at $10/$40 and a new
    provider gamma: the next day's stored probes billed without usage counted alpha's at
    the start-up prices and gamma's at $0 ('no prices'), while new probes and
    ``nerfwatch status`` priced them at the reloaded ones, so the cap let the day spend
    ten times what it believed."""
    path = tmp_path / "nerfwatch.toml"
    _write(path, [_provider("alpha", 1.0, 4.0)])
    running = [load_config(path)]
    warehouse = Warehouse(running[0].warehouse.path)
    warehouse.migrate()
    at = datetime.combine(DAY_2, datetime.min.time(), UTC).replace(hour=0, minute=1)
    rows = [_billed_without_usage(name, at) for name in ("alpha", "gamma")]
    warehouse.insert_rows("probe_results", [r.as_row() for r in rows], key="run_id")
    day = [DAY_1]
    guard = BudgetGuard(running[0].budget, today=lambda: day[0])
    gate = Gate(running[0], budget=guard, stopping=lambda: False)

    def apply(new: Config) -> int:  # the budget's part of Daemon._apply_config
        gate.configure(new)
        guard.configure(new.budget)
        running[0] = new
        return 1

    async def main() -> None:
        spool = Spool(running[0].warehouse.spool_dir)
        spool.open()
        try:
            await _warm(running[0], guard, spool)
            _write(path, [_provider("alpha", 10.0, 40.0), _provider("gamma", 2.0, 8.0)])
            tasks = BackgroundTasks()
            events = SessionEvents(HeldRows(spool), "session-1", tasks)
            Reloader(current=lambda: running[0], apply=apply, events=events, tasks=tasks).reload()
            await within(tasks.drain(), 60, "the reload")
            day[0] = DAY_2  # past midnight: the day is read now
            await guard.prepare()
        finally:
            spool.close()

    asyncio.run(main())
    new = {p.name: p for p in running[0].providers}
    assert new["alpha"].price_input_per_mtok == 10.0  # the reload did happen
    for name in ("alpha", "gamma"):
        most = worst_case(new[name], 900, 100)
        assert guard.spent_by(name).cost_usd == pytest.approx(most.cost_usd), name
    stored = today_spend(warehouse, DAY_2, new)  # what `nerfwatch status` reads
    assert {n: s.cost_usd for n, s in guard.today_spend().items()} == {
        n: pytest.approx(s.cost_usd) for n, s in stored.items()
    }


def test_a_provider_removed_by_a_reload_keeps_its_prices_for_the_total(tmp_path: Path) -> None:
    """Its rows still count against the total cap: at $0 they would free it."""
    alpha = make_config(tmp_path).provider("alpha")
    seen: list[dict[str, ProviderConfig]] = []

    def load(day: date, prices: Mapping[str, ProviderConfig]) -> dict[str, Spend]:
        seen.append(dict(prices))
        return {}

    guard = BudgetGuard(make_config(tmp_path).budget, today=lambda: DAY_1, load_day=load)
    guard.use_prices([alpha])
    guard.use_prices([replace(alpha, name="beta")])  # the reloaded config has beta only
    guard.today_spend()
    assert [sorted(prices) for prices in seen] == [["alpha", "beta"]]


def _priced(site: str, cost: float) -> ProbeResult:
    row = _billed_without_usage("alpha", datetime(2026, 11, 20, 9, 0, tzinfo=UTC), site)
    row.input_tokens, row.output_tokens, row.cost_usd = 900, 100, cost
    return row


@pytest.mark.parametrize("backend", ["lake", "file"])
def test_each_site_of_a_lake_starts_its_day_from_its_own_spend(
    tmp_path: Path, backend: str
) -> None:
    """Two sites share a lake; the cap is in each site's config. A site's budget started
    from every site's stored spend (here $0.75 of another site's against its $1 cap),
    then counted only its own: neither its cap nor a lake-wide one. A single file is one
    site's warehouse, as for ``nerfwatch status``: every row counts."""
    lake = Lake(catalog=f"sqlite:{tmp_path / 'catalog.sqlite'}", data_path=str(tmp_path / "data"))
    config = make_config(tmp_path, location=lake if backend == "lake" else None)
    warehouse = Warehouse(config.warehouse.location)
    warehouse.migrate()
    rows = [_priced(config.warehouse.site, 0.25), _priced("frankfurt", 0.75)]
    warehouse.insert_rows("probe_results", [r.as_row() for r in rows], key="run_id")
    guard = BudgetGuard(config.budget, today=lambda: DAY_1)

    async def main() -> None:
        spool = Spool(config.warehouse.spool_dir)
        spool.open()
        try:
            await within(_warm(config, guard, spool), 120, "the warm start")
        finally:
            spool.close()

    asyncio.run(main())
    expected = 0.25 if backend == "lake" else 1.0
    assert guard.spent_by("alpha").cost_usd == pytest.approx(expected)
