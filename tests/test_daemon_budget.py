"""Budget guard: worst-case reservations, caps per scope, long-context first, UTC days."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from pipeline.config import BudgetConfig, BudgetLimits, ProbeConfig, ProviderConfig
from pipeline.daemon.budget import (
    BudgetGuard,
    Reservation,
    Spend,
    estimate,
    result_usage,
    worst_case,
)
from pipeline.daemon.rows import bare_row
from pipeline.daemon.schedule import job_specs
from pipeline.daemon.spool import Spool
from pipeline.daemon.state import DaySpend, today_spend
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.daemon import make_config
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe
from tests.test_spool_damage import _spool_with as spool_with


def _probe(name: str, context: int) -> ProbeConfig:
    return ProbeConfig(name, "kv_lookup", context, 60.0, None, ("alpha",), max_output_tokens=100)


def test_estimate_is_full_context_at_the_cache_write_rate_plus_all_output(tmp_path: Path) -> None:
    provider = make_config(tmp_path).provider("alpha")  # $1 in, $4 out per Mtok
    r = estimate(provider, _probe("short", 900))
    assert r.tokens == 1000
    assert abs(r.cost_usd - (900 * 1.25 + 100 * 4) / 1e6) < 1e-12  # writes: 1.25 x input


@pytest.mark.parametrize("write_price", [None, 2.0])  # default 1.25 x input; a 1-hour cache
@pytest.mark.parametrize("cap", [0.03, 0.04, 0.05, 0.06])
def test_a_day_of_cache_writing_probes_never_settles_above_the_cap(
    tmp_path: Path, write_price: float | None, cap: float
) -> None:
    """Three probes in flight at a time, each writing its whole prompt to the cache and
    answering with every output token it may: what it is reserved at is the most it can
    cost, so the day's stored spend (read back from DuckDB, and read again by a guard
    started half way, as after a restart) stays within the cap, and near it."""
    alpha = make_config(tmp_path).provider("alpha")  # $1 in, $4 out per Mtok
    provider = replace(alpha, price_cache_write_per_mtok=write_price)
    day = datetime(2026, 11, 20, 0, 5, tzinfo=UTC)
    probe = _probe("long", 9_000)
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()

    def guard() -> BudgetGuard:
        return BudgetGuard(
            BudgetConfig(total=BudgetLimits(daily_cost_usd=cap)),
            long_share=1.0,
            today=lambda: day.date(),
            load_day=lambda d, _prices: today_spend(warehouse, d, {provider.name: provider}),
        )

    def run_batch(g: BudgetGuard, at: datetime) -> None:
        held = [r for r in (g.reserve(provider, probe) for _ in range(3)) if not isinstance(r, str)]
        for reservation in held:
            row = _used(at, 9_000, None, output=100, cache_write=9_000)
            g.settle(reservation, result_usage(provider, row))
            warehouse.insert_rows("probe_results", [row.as_row()], key="run_id")

    first = guard()
    for minute in range(200):
        if minute == 2:
            first = guard()  # a restart: the new guard starts from the stored rows
        run_batch(first, day + timedelta(minutes=minute))
    stored = today_spend(warehouse, day.date(), {provider.name: provider})["alpha"].cost_usd
    one_run = (9_000 * provider.cache_write_price() + 100 * 4) / 1e6
    assert stored <= cap + 1e-12, f"stored ${stored:.6f} over the ${cap} cap"
    assert stored > cap - one_run  # the guard did spend the day, not refuse it


def test_provider_cap_refuses_and_settle_frees_the_reservation(tmp_path: Path) -> None:
    provider = make_config(tmp_path).provider("alpha")
    guard = BudgetGuard(BudgetConfig(per_provider={"alpha": BudgetLimits(daily_tokens=2500)}))
    first = guard.reserve(provider, _probe("short", 900))
    second = guard.reserve(provider, _probe("short", 900))
    assert isinstance(first, Reservation) and isinstance(second, Reservation)
    refused = guard.reserve(provider, _probe("short", 900))
    assert isinstance(refused, str) and "alpha daily budget" in refused
    guard.settle(first, Spend(tokens=300, cost_usd=0.0))  # it used less than feared
    assert isinstance(guard.reserve(provider, _probe("short", 900)), Reservation)


def test_long_context_probes_stop_before_short_ones(tmp_path: Path) -> None:
    provider = make_config(tmp_path).provider("alpha")
    stored = {"alpha": Spend(tokens=65_000, cost_usd=0.0)}  # the day's rows already spent
    guard = BudgetGuard(
        BudgetConfig(total=BudgetLimits(daily_tokens=100_000)),
        long_share=0.8,
        load_day=lambda _day, _prices: stored,
    )
    long_probe, short_probe = _probe("long", 16_000), _probe("short", 900)
    assert isinstance(guard.reserve(provider, long_probe), str)  # 81k > 80k
    assert isinstance(guard.reserve(provider, short_probe), Reservation)


def _capped_guard(day: list[date]) -> BudgetGuard:
    """A guard capping cost at $0.002 a day, whose 'today' is ``day[0]`` (set by the test)."""
    return BudgetGuard(BudgetConfig(total=BudgetLimits(daily_cost_usd=0.002)), today=lambda: day[0])


def test_cost_cap_and_day_rollover(tmp_path: Path) -> None:
    provider = make_config(tmp_path).provider("alpha")
    day = [date(2026, 11, 20)]
    guard = _capped_guard(day)
    probe = _probe("short", 900)  # $0.0015 worst case (900 in at 1.25 x $1, 100 out at $4)
    got = guard.reserve(provider, probe)
    assert isinstance(got, Reservation)
    guard.settle(got, Spend(1000, 0.0013))
    assert isinstance(guard.reserve(provider, probe), str)
    day[0] = date(2026, 11, 21)
    assert isinstance(guard.reserve(provider, probe), Reservation)


def test_a_clock_stepped_back_over_midnight_returns_to_that_days_spend(tmp_path: Path) -> None:
    provider = make_config(tmp_path).provider("alpha")
    day = [date(2026, 11, 20)]
    guard = _capped_guard(day)
    probe = _probe("short", 900)  # $0.0015 worst case (900 in at 1.25 x $1, 100 out at $4)
    first = guard.reserve(provider, probe)
    assert isinstance(first, Reservation) and first.day == day[0]
    guard.settle(first, Spend(1000, 0.0013))
    day[0] = date(2026, 11, 21)  # past midnight: a fresh day
    assert guard.spent_by("alpha").cost_usd == 0.0
    assert isinstance(guard.reserve(provider, probe), Reservation)
    day[0] = date(2026, 11, 20)  # NTP steps back: that day's spend still counts
    assert guard.spent_by("alpha").cost_usd == 0.0013
    assert isinstance(guard.reserve(provider, probe), str)


def test_a_day_first_met_after_a_step_back_starts_from_its_stored_spend(tmp_path: Path) -> None:
    """Booted with the clock three days ahead, then corrected: the real day's spend,
    which this process never saw, is read before anything more is spent on it."""
    provider = make_config(tmp_path).provider("alpha")
    probe = _probe("short", 900)  # $0.0015 worst case (900 in at 1.25 x $1, 100 out at $4)
    stored = {date(2026, 11, 20): {"alpha": Spend(1000, 0.0013)}}
    asked: list[date] = []

    def load(day: date, _prices: Mapping[str, ProviderConfig]) -> dict[str, Spend]:
        asked.append(day)
        return stored.get(day, {})

    day = [date(2026, 11, 23)]
    guard = BudgetGuard(
        BudgetConfig(total=BudgetLimits(daily_cost_usd=0.002)), today=lambda: day[0], load_day=load
    )
    assert isinstance(guard.reserve(provider, probe), Reservation)  # read 11-23 itself
    day[0] = date(2026, 11, 20)  # the clock corrected back
    asyncio.run(guard.prepare())  # the daemon reads it in a thread before admitting a run
    assert guard.spent_by("alpha").cost_usd == 0.0013
    assert isinstance(guard.reserve(provider, probe), str)
    day[0] = date(2026, 11, 23)  # forward again: its ledger (and reservation) still known
    assert isinstance(guard.reserve(provider, probe), str)
    assert asked == [date(2026, 11, 23), date(2026, 11, 20)]  # each day read once


def test_day_spend_reads_the_warehouse_and_the_spool_for_that_day_only(tmp_path: Path) -> None:
    day = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    stored = [_used(day, 100, 0.01), _used(day + timedelta(days=1), 1000, 1.0)]
    stored.append(_used(day, 5000, 5.0, source="synthetic"))  # not live: no spend
    warehouse.insert_rows("probe_results", [r.as_row() for r in stored], key="run_id")
    spool = Spool(tmp_path / "spool")
    spool.open()

    async def append() -> None:
        for row in (
            _used(day + timedelta(hours=14), 20, 0.002),
            _used(day - timedelta(hours=10), 7, 7.0),
        ):
            await spool.append(row.to_json())

    asyncio.run(append())
    spool.close()
    spent = DaySpend(warehouse, Spool(tmp_path / "spool"))(day.date(), {})
    assert spent == {"alpha": Spend(120, pytest.approx(0.012))}


def _used(
    at: datetime,
    tokens: int,
    cost: float | None,
    *,
    source: str = "live",
    output: int = 0,
    cache_write: int | None = None,
) -> ProbeResult:
    return ProbeResult(
        run_id=new_run_id(),
        started_at=at,
        provider="alpha",
        model="m",
        probe="short",
        task_family="arithmetic",
        source=source,
        run_status="done",
        input_tokens=tokens,
        output_tokens=output,
        cache_write_tokens=cache_write,
        cost_usd=cost,
    )


def test_a_cut_stream_without_usage_settles_at_its_reservation() -> None:
    """§2: a stream cut before its usage chunk reports no usage, but the provider took the
    prompt and may bill it. Such probes (a real loopback server cutting every stream after
    the first content chunk) used to settle at $0, so a cap never stopped them."""
    content = {"choices": [{"index": 0, "delta": {"content": "ANSWER"}, "finish_reason": None}]}
    cut = Reply(
        chunks=(f"data: {json.dumps(content)}\n\n".encode(),),
        unended=True,
        close_after=True,
        headers={"content-type": "text/event-stream"},
    )
    probe = short_probe(max_output_tokens=100)
    cap = 0.01
    guard = BudgetGuard(BudgetConfig(total=BudgetLimits(daily_cost_usd=cap)))
    with serving(lambda n, reused: cut) as server:
        provider = loopback_provider(
            server.port, price_input_per_mtok=1.0, price_output_per_mtok=4.0
        )
        ran: list[ProbeResult] = []
        for _ in range(20):
            reservation = guard.reserve(provider, probe)
            if isinstance(reservation, str):
                break
            (result,) = probe_n(provider, probe)
            ran.append(result)
            guard.settle(reservation, result_usage(provider, result))
    assert ran and all(r.input_tokens is None and r.http_status == 200 for r in ran)
    worst = estimate(provider, probe).cost_usd
    assert len(ran) == int(cap // worst), f"{len(ran)} cut streams ran under a ${cap} cap"
    assert guard.spent_by("p").cost_usd <= cap
    assert ran[0].cost_usd is None  # the row does not pretend to know what was billed


def _cut_stream() -> Reply:
    """An OpenAI stream cut after its first content chunk: no usage ever comes back."""
    content = {"choices": [{"index": 0, "delta": {"content": "ANSWER"}, "finish_reason": None}]}
    return Reply(
        chunks=(f"data: {json.dumps(content)}\n\n".encode(),),
        unended=True,
        close_after=True,
        headers={"content-type": "text/event-stream"},
    )


def test_a_restart_counts_stored_probes_billed_without_usage_at_their_worst_case(
    tmp_path: Path,
) -> None:
    """A cut stream settles at its reservation in memory but is stored with cost_usd NULL:
    a guard restarted after two of them read the day's spend as $0 and let the day run
    one probe past what the cap allows (8 cut streams instead of 7 under $0.01)."""
    day = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    probe = short_probe(max_output_tokens=100)
    cap = 0.01
    with serving(lambda n, reused: _cut_stream()) as server:
        provider = loopback_provider(
            server.port, price_input_per_mtok=1.0, price_output_per_mtok=4.0
        )

        def guard() -> BudgetGuard:
            return BudgetGuard(
                BudgetConfig(total=BudgetLimits(daily_cost_usd=cap)),
                today=lambda: day.date(),
                load_day=lambda d, _prices: today_spend(warehouse, d, {provider.name: provider}),
            )

        g, ran = guard(), 0
        for minute in range(20):
            if minute == 2:
                g = guard()  # a restart: the new guard starts from the stored rows
            reservation = g.reserve(provider, probe)
            if isinstance(reservation, str):
                break
            (result,) = probe_n(provider, probe)
            assert result.input_tokens is None and result.cost_usd is None
            result.started_at = day + timedelta(minutes=minute)  # the pinned day
            g.settle(reservation, result_usage(provider, result))
            warehouse.insert_rows("probe_results", [result.as_row()], key="run_id")
            ran += 1
    # Before the restart each settled at its reservation; after it, each stored one counts
    # at the worst case of its stored size (a short family's own size, under the probe's).
    (size,) = {r["context_target_tokens"] for r in _stored(warehouse)}
    stored = worst_case(provider, size, 100).cost_usd
    reserved = estimate(provider, probe).cost_usd
    fits = 2 + int((cap - 2 * stored) // reserved)
    assert (ran, fits) == (7, 7), f"{ran} cut streams ran under a ${cap} cap"
    assert today_spend(warehouse, day.date(), {"p": provider})["p"].cost_usd <= cap


def _stored(warehouse: Warehouse) -> list[dict[str, object]]:
    return list(warehouse.query("SELECT * FROM probe_results").iter_rows(named=True))


def _billed_kinds(day: datetime) -> list[ProbeResult]:
    """Rows without usage of each kind (three the guard settles at their reservation, two
    it does not), sized 900 + 100 tokens, and one priced row of 50 tokens for $0.25."""
    kinds = [(200, "ok"), (None, "stall"), (None, "timeout_first_token"),
             (429, "rate_limited"), (None, "connect_error")]  # fmt: skip
    rows = [_used(day, 0, None) for _ in kinds]
    for row, (status, error_class) in zip(rows, kinds, strict=True):
        row.input_tokens = row.output_tokens = None
        row.http_status, row.error_class = status, error_class
        row.context_target_tokens, row.max_output_tokens = 900, 100
    return [*rows, _used(day, 50, 0.25)]


def test_the_days_stored_spend_counts_rows_billed_without_usage_at_their_worst_case(
    tmp_path: Path,
) -> None:
    """Each row of a kind the guard settles at its reservation (a 2xx reply without usage,
    a stall, a first-token timeout) counts at the worst case of its stored sizes; a
    refused or unsent probe without usage counts nothing, a priced one its cost."""
    day = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    provider = make_config(tmp_path).provider("alpha")  # $1 in, $4 out per Mtok
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    rows = _billed_kinds(day)
    warehouse.insert_rows("probe_results", [r.as_row() for r in rows], key="run_id")
    spent = today_spend(warehouse, day.date(), {"alpha": provider})
    one = (900 * provider.cache_write_price() + 100 * 4) / 1e6
    assert spent == {"alpha": Spend(3 * 1000 + 50, pytest.approx(0.25 + 3 * one))}


def test_the_spools_rows_billed_without_usage_count_at_their_worst_case_too(
    tmp_path: Path,
) -> None:
    """The same rows still in the spool at a restart (the warehouse held or down): they
    counted as $0 there, since a spooled row's usage was read as a sum in which a missing
    count was 0. Read back through the real spool."""
    day = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    provider = make_config(tmp_path).provider("alpha")  # $1 in, $4 out per Mtok
    rows = _billed_kinds(day)
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    spool_with(tmp_path / "spool", rows)
    spent = DaySpend(warehouse, Spool(tmp_path / "spool"))(day.date(), {"alpha": provider})
    one = (900 * provider.cache_write_price() + 100 * 4) / 1e6
    assert spent == {"alpha": Spend(3 * 1000 + 50, pytest.approx(0.25 + 3 * one))}


@pytest.mark.parametrize("where", ["warehouse", "spool"])
def test_a_run_shutdown_cut_off_mid_probe_counts_after_a_restart_as_it_settled(
    tmp_path: Path, where: str
) -> None:
    """One run shutdown cut off while probing settles at its reservation (the provider
    may have billed it), but its stored row (aborted, no usage) counted $0: a daemon
    stopped and restarted the same day forgot it and could spend past the cap. A run
    cut off before it probed (skipped) or one whose probe function raised (settled at
    nothing) still counts nothing. The rows are the daemon's own bare rows."""
    config = make_config(tmp_path)
    spec = next(s for s in job_specs(config).values() if s.provider.name == "alpha")
    at = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    rows = [
        bare_row(spec, at, "aborted", "shutdown", site="test"),
        bare_row(spec, at, "skipped", "shutdown", site="test"),
        bare_row(spec, at, "aborted", "internal_error", site="test"),
    ]
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    if where == "warehouse":
        warehouse.insert_rows("probe_results", [r.as_row() for r in rows], key="run_id")
    else:
        spool_with(tmp_path / "spool", rows)
    spent = DaySpend(warehouse, Spool(tmp_path / "spool"))(at.date(), {"alpha": spec.provider})
    settled = estimate(spec.provider, spec.probe)  # what one_run settles such a run at
    assert spent == {"alpha": Spend(settled.tokens, pytest.approx(settled.cost_usd))}


@pytest.mark.parametrize("new_day_read", ["before its row", "at its settle"])
def test_a_run_reserved_before_midnight_counts_on_the_day_its_row_is_stamped(
    tmp_path: Path, new_day_read: str
) -> None:
    """Reserved at 23:59 and probed at 00:00:30 (it waited for a slot): its row is the new
    day's, but the guard counted it on the old day, and the new day, first read before the
    row was spooled, never did; the new day could spend past its cap by every run in
    flight at midnight until a restart read the rows. Each day's spend in memory now
    equals its stored spend, whether the new day is read before the row or at the settle."""
    provider = make_config(tmp_path).provider("alpha")
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    spool = Spool(tmp_path / "spool")
    spool.open()
    day = [date(2026, 11, 20)]
    guard = BudgetGuard(
        BudgetConfig(total=BudgetLimits(daily_cost_usd=1.0)),
        today=lambda: day[0],
        load_day=DaySpend(warehouse, spool),
    )
    guard.use_prices([provider])
    late = guard.reserve(provider, _probe("short", 900))
    assert isinstance(late, Reservation) and late.day == date(2026, 11, 20)
    day[0] = date(2026, 11, 21)
    if new_day_read == "before its row":
        assert guard.spent_by("alpha").cost_usd == 0.0
    row = _used(datetime(2026, 11, 21, 0, 0, 30, tzinfo=UTC), 900, 0.0012, output=100)
    asyncio.run(spool.append(row.to_json()))  # one_run spools the row, then settles
    guard.settle(late, result_usage(provider, row))
    for each in (date(2026, 11, 20), date(2026, 11, 21)):
        day[0] = each
        stored = DaySpend(warehouse, spool)(each, {"alpha": provider}).get("alpha", Spend())
        assert guard.spent_by("alpha") == stored, each
    spool.close()
