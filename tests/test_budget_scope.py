"""``budget.scope = "lake"``: sites that share one API key (one bill) share one cap.

Before, a site's caps counted its own spend only, so N sites on one key could together
spend N times the cap. With scope "lake" the guard adds the other sites' stored spend,
read again before admissions (at most every ``others_every_s``), not only at the day's
first read; "site" (the default) keeps each site's cap its own.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from pipeline.config import BudgetConfig, BudgetLimits, Config, ProbeConfig, load_config
from pipeline.config.checker import ConfigError
from pipeline.daemon.alerts import AlertEvaluator
from pipeline.daemon.budget import BudgetGuard, Reservation, estimate
from pipeline.daemon.flush import Flusher, SegmentWriter
from pipeline.daemon.spool import Spool
from pipeline.daemon.startup import warm_start
from pipeline.daemon.state import DaySpend, OtherSitesSpend
from pipeline.daemon.status import gather_status
from pipeline.warehouse import Lake, Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.daemon import make_config
from tests.test_config import VALID

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
DAY = NOW.date()
HERE, THERE = "site-here", "site-there"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NW_TEST_KEY", "sk-test-secret-value")
    monkeypatch.setenv("NW_TEST_HOOK", "http://127.0.0.1:9/hook")


def _config_file(tmp_path: Path, scope: str, *, lake: bool) -> Path:
    text = VALID.replace("daily_cost_usd = 3.0", f'daily_cost_usd = 3.0\nscope = "{scope}"', 1)
    if lake:
        backend = 'backend = "ducklake"\ncatalog = "sqlite:lake/c.sqlite"\ndata_path = "lake/d"'
        text = text.replace('path = "data/nw.duckdb"', f'path = "data/nw.duckdb"\n{backend}', 1)
    path = tmp_path / "nerfwatch.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _line_of(path: Path, text: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def test_scope_defaults_to_site_and_lake_is_read_on_a_lake(tmp_path: Path) -> None:
    assert load_config(_config_file(tmp_path, "site", lake=False)).budget.scope == "site"
    assert load_config(_config_file(tmp_path, "lake", lake=True)).budget.scope == "lake"


@pytest.mark.parametrize(
    ("scope", "lake", "says"),
    [
        ("everywhere", True, 'expected "site" or "lake", got \'everywhere\''),
        ("lake", False, '"lake" needs warehouse.backend = "ducklake"'),
    ],
)
def test_a_bad_scope_is_one_line_naming_file_key_and_line(
    tmp_path: Path, scope: str, lake: bool, says: str
) -> None:
    path = _config_file(tmp_path, scope, lake=lake)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{_line_of(path, 'scope =')}: budget.scope: "), message
    assert says in message and "\n" not in message


def _spent(site: str, cost: float, minutes: int = 0) -> ProbeResult:
    return ProbeResult(
        run_id=new_run_id(),
        started_at=NOW - timedelta(hours=1) + timedelta(minutes=minutes),
        provider="alpha",
        model="m",
        probe="short",
        task_family="arithmetic",
        run_status="done",
        input_tokens=100,
        output_tokens=10,
        cost_usd=cost,
        http_status=200,
        probe_site=site,
    )


def _store(warehouse: Warehouse, rows: list[ProbeResult]) -> None:
    warehouse.insert_rows("probe_results", [r.as_row() for r in rows], key="run_id")


class _Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _guard(
    config: Config, warehouse: Warehouse, cap: float, *, lake_wide: bool, ticks: _Ticks
) -> BudgetGuard:
    spool = Spool(config.warehouse.spool_dir)
    guard = BudgetGuard(
        BudgetConfig(total=BudgetLimits(daily_cost_usd=cap)),
        today=lambda: DAY,
        load_day=DaySpend(warehouse, spool, site=HERE),
        load_others=OtherSitesSpend(warehouse, HERE) if lake_wide else None,
        others_every_s=60.0,
        monotonic=ticks,
    )
    guard.use_prices(config.providers)
    return guard


def _probe(config: Config) -> ProbeConfig:
    return config.probes[0]


def _admits(guard: BudgetGuard, config: Config) -> bool:
    asyncio.run(guard.prepare())
    return isinstance(guard.reserve(config.provider("alpha"), _probe(config)), Reservation)


def _check_one_cap_across_sites(config: Config, warehouse: Warehouse) -> None:
    """This site spent $0.25, the other $0.50; the cap leaves room for 1.5 runs over
    both. Per site, this one may probe; across the lake, one run fits, and once the other
    site stores another run's worth, the next read (due after 60 s) refuses."""
    _store(warehouse, [_spent(HERE, 0.25), _spent(THERE, 0.50)])
    want = estimate(config.provider("alpha"), _probe(config)).cost_usd
    cap = 0.75 + 1.5 * want
    per_site = _guard(config, warehouse, cap, lake_wide=False, ticks=_Ticks())
    assert _admits(per_site, config) and _admits(per_site, config)  # sees $0.25 only

    ticks = _Ticks()
    lake_wide = _guard(config, warehouse, cap, lake_wide=True, ticks=ticks)
    assert _admits(lake_wide, config)  # 0.75 + want fits
    assert not _admits(lake_wide, config)  # 0.75 + 2 want does not
    lake_wide.settle(Reservation("alpha", 0.0, want, DAY), None)  # nothing was sent
    _store(warehouse, [_spent(THERE, want, minutes=1)])
    ticks.now = 59.0
    assert _admits(lake_wide, config)  # not read again yet: the other site's run unseen
    lake_wide.settle(Reservation("alpha", 0.0, want, DAY), None)
    ticks.now = 61.0
    assert not _admits(lake_wide, config)  # read again: 0.75 + want + want > cap


def test_a_lake_wide_cap_counts_every_sites_stored_spend_on_a_file(tmp_path: Path) -> None:
    """The guard's reading of two sites' rows, on a real DuckDB file holding both."""
    config = make_config(tmp_path)
    warehouse = Warehouse(config.warehouse.path)
    warehouse.migrate()
    _check_one_cap_across_sites(config, warehouse)


@pytest.mark.slow
def test_on_a_lake_the_cap_and_status_count_every_sites_spend(tmp_path: Path) -> None:
    """The same on a real DuckLake (SQLite catalog, local data), and ``nerfwatch status``
    there shows the spend the lake-wide cap counts, saying it is every site's."""
    lake = Lake(catalog=f"sqlite:{tmp_path / 'c.sqlite'}", data_path=str(tmp_path / "data"))
    config = make_config(tmp_path, location=lake)
    config = replace(config, warehouse=replace(config.warehouse, probe_site=HERE))
    warehouse = Warehouse(lake)
    warehouse.migrate()
    _check_one_cap_across_sites(config, warehouse)

    scoped = replace(config, budget=replace(config.budget, scope="lake"))
    everyone = gather_status(scoped, lock_wait_s=5, now=NOW)
    mine = gather_status(config, lock_wait_s=5, now=NOW)
    want = estimate(config.provider("alpha"), _probe(config)).cost_usd
    (all_sites,) = [p for p in everyone.providers if p.provider == "alpha"]
    (this_site,) = [p for p in mine.providers if p.provider == "alpha"]
    assert everyone.spend_of_every_site and not mine.spend_of_every_site
    assert all_sites.today_cost_usd == pytest.approx(0.75 + want)
    assert this_site.today_cost_usd == pytest.approx(0.25)
    # the daemon's start-up wires the other sites' reader for scope "lake" only
    cap = BudgetConfig(total=BudgetLimits(daily_cost_usd=0.75 + 1.5 * want))
    assert _started_admits(replace(config, budget=cap), warehouse)
    assert not _started_admits(replace(config, budget=replace(cap, scope="lake")), warehouse)


def _started_admits(config: Config, warehouse: Warehouse) -> bool:
    """Does a guard wired by ``warm_start`` admit a run now (this site: $0.25 stored)?"""
    guard = BudgetGuard(config.budget, today=lambda: DAY)
    guard.use_prices(config.providers)
    spool = Spool(config.warehouse.spool_dir)
    spool.open()
    flusher = Flusher(spool, SegmentWriter(warehouse, config.warehouse.spool_dir))
    try:
        asyncio.run(
            warm_start(
                config,
                flusher=flusher,
                spool=spool,
                budget=guard,
                alerts=AlertEvaluator(config.alerts),
            )
        )
    finally:
        flusher.close()
        spool.close()
    return _admits(guard, config)


def test_a_reload_does_not_change_the_scope(caplog: pytest.LogCaptureFixture) -> None:
    """The reader of the other sites' spend is wired at start-up: a reload that changes
    the scope is warned about and waits for a restart."""
    guard = BudgetGuard(BudgetConfig(), today=lambda: date(2026, 11, 20))
    with caplog.at_level("WARNING"):
        guard.configure(BudgetConfig(total=BudgetLimits(daily_cost_usd=1.0), scope="lake"))
    assert guard.budget.scope == "site"
    assert guard.budget.total.daily_cost_usd == 1.0
    assert "budget.scope takes effect after a restart" in caplog.text


def test_a_lake_that_stays_unreadable_leaves_no_growing_bookkeeping(tmp_path: Path) -> None:
    """Each unreadable read stamps its day; stamps of days long gone are dropped with the
    day's readings, or a daemon on a lost lake gains one entry per day for ever."""
    day = [DAY]
    ticks = _Ticks()
    guard = BudgetGuard(
        BudgetConfig(total=BudgetLimits(daily_cost_usd=1.0)),
        today=lambda: day[0],
        load_others=lambda _day, _prices: None,  # the lake unreadable: no reading at all
        others_every_s=60.0,
        monotonic=ticks,
    )
    for _ in range(60):
        asyncio.run(guard.prepare())
        config = make_config(tmp_path)
        guard.reserve(config.provider("alpha"), _probe(config))  # rolls the day over
        day[0] += timedelta(days=1)
        ticks.now += 86_400
    assert len(guard._others_read_at) <= 15, sorted(guard._others_read_at)
