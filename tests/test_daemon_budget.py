"""Budget guard: worst-case reservations, caps per scope, long-context first, UTC days."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from pipeline.config import BudgetConfig, BudgetLimits, ProbeConfig
from pipeline.daemon.budget import BudgetGuard, Reservation, Spend, estimate
from tests.support.daemon import make_config


def _probe(name: str, context: int) -> ProbeConfig:
    return ProbeConfig(name, "kv_lookup", context, 60.0, None, ("alpha",), max_output_tokens=100)


def test_estimate_is_full_context_plus_all_output_at_list_prices(tmp_path: Path) -> None:
    provider = make_config(tmp_path).provider("alpha")  # $1 in, $4 out per Mtok
    r = estimate(provider, _probe("short", 900))
    assert r.tokens == 1000
    assert abs(r.cost_usd - (900 * 1 + 100 * 4) / 1e6) < 1e-12


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
    guard = BudgetGuard(BudgetConfig(total=BudgetLimits(daily_tokens=100_000)), long_share=0.8)
    guard.seed({"alpha": Spend(tokens=65_000, cost_usd=0.0)})
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
    probe = _probe("short", 900)  # $0.0013 worst case
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
    probe = _probe("short", 900)  # $0.0013 worst case
    first = guard.reserve(provider, probe)
    assert isinstance(first, Reservation) and first.day == day[0]
    guard.settle(first, Spend(1000, 0.0013))
    day[0] = date(2026, 11, 21)  # past midnight: a fresh day
    assert guard.spent_by("alpha").cost_usd == 0.0
    assert isinstance(guard.reserve(provider, probe), Reservation)
    day[0] = date(2026, 11, 20)  # NTP steps back: that day's spend still counts
    assert guard.spent_by("alpha").cost_usd == 0.0013
    assert isinstance(guard.reserve(provider, probe), str)
