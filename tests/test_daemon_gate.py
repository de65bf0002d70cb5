"""The gate alone: what it admits, what it refuses and why, and the caps it holds.

Built with a real budget guard and real caps from a small config; no daemon, no
scheduler, no spool.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.config import BudgetConfig, BudgetLimits, Config, DaemonConfig
from pipeline.daemon.budget import BudgetGuard, Reservation, Spend, estimate
from pipeline.daemon.gate import Gate, Refused
from pipeline.daemon.schedule import JobSpec, job_specs
from tests.support.daemon import make_config


class _Stop:
    """The stop flag the stopper would own: a plain switch here."""

    def __init__(self) -> None:
        self.stopping = False

    def __call__(self) -> bool:
        return self.stopping


def _spec(config: Config, provider: str = "alpha") -> JobSpec:
    return job_specs(config)[f"{provider}/short"]


def _gate(config: Config, budget: BudgetGuard, stop: _Stop) -> Gate:
    return Gate(config, budget=budget, stopping=stop)


def test_admit_reserves_the_worst_case_of_the_run(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    spec = _spec(config)
    gate = _gate(config, BudgetGuard(BudgetConfig()), _Stop())

    admitted = gate.admit(spec)

    assert admitted == estimate(spec.provider, spec.probe)


def test_a_stopping_daemon_refuses_with_shutdown_and_reserves_nothing(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    spec = _spec(config)
    room_for_one = estimate(spec.provider, spec.probe).tokens
    budget = BudgetGuard(BudgetConfig(total=BudgetLimits(daily_tokens=int(room_for_one))))
    stop = _Stop()
    gate = _gate(config, budget, stop)

    stop.stopping = True
    assert gate.admit(spec) == Refused("shutdown")
    stop.stopping = False
    assert isinstance(gate.admit(spec), Reservation)  # the refusal left the room free


def test_budget_refusal_names_the_cap_and_warns_once_a_day(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = make_config(tmp_path)
    spec = _spec(config)
    room_for_one = estimate(spec.provider, spec.probe).tokens
    limits = {"alpha": BudgetLimits(daily_tokens=int(room_for_one))}
    gate = _gate(config, BudgetGuard(BudgetConfig(per_provider=limits)), _Stop())
    caplog.set_level(logging.DEBUG, logger="nerfwatch.daemon")

    first = gate.admit(spec)
    refusals = [gate.admit(spec), gate.admit(spec)]

    assert isinstance(first, Reservation)
    assert all(isinstance(r, Refused) and r.reason == "budget" for r in refusals)
    assert all("alpha daily budget" in r.detail for r in refusals if isinstance(r, Refused))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "alpha/short" in warnings[0].getMessage()
    assert isinstance(gate.admit(_spec(config, "beta")), Reservation)  # beta has no cap


def test_settle_trades_the_reservation_for_what_was_used(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    spec = _spec(config)
    room_for_one = estimate(spec.provider, spec.probe).tokens
    budget = BudgetGuard(BudgetConfig(total=BudgetLimits(daily_tokens=int(room_for_one * 1.5))))
    gate = _gate(config, budget, _Stop())
    reservation = gate.admit(spec)
    assert isinstance(reservation, Reservation)
    assert isinstance(gate.admit(spec), Refused)  # the reservation holds the room

    spent = gate.settle(reservation, Spend(tokens=10, cost_usd=0.5))

    assert spent == Spend(tokens=10, cost_usd=0.5)
    assert isinstance(gate.admit(spec), Reservation)


def test_slot_holds_the_provider_cap_and_refuses_a_run_the_stop_overtook(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path)
    one_at_a_time = tuple(replace(p, max_concurrency=1) for p in config.providers)
    config = replace(config, providers=one_at_a_time)
    spec = _spec(config)
    stop = _Stop()
    gate = _gate(config, BudgetGuard(BudgetConfig()), stop)

    async def main() -> tuple[Refused | None, Refused | None, int]:
        async with gate.slot(spec) as first:
            waiting = asyncio.ensure_future(_enter(gate, spec))
            await asyncio.sleep(0.05)
            assert not waiting.done()  # the provider's one slot is taken
            stop.stopping = True
        second = await waiting
        return first, second, gate.usage.provider_peak["alpha"]

    first, second, peak = asyncio.run(main())

    assert first is None
    assert second == Refused("shutdown")
    assert peak == 1


async def _enter(gate: Gate, spec: JobSpec) -> Refused | None:
    async with gate.slot(spec) as refused:
        return refused


def test_configure_applies_new_caps(tmp_path: Path) -> None:
    config = make_config(tmp_path, daemon=DaemonConfig(max_concurrency=1))
    spec_a, spec_b = _spec(config), _spec(config, "beta")
    gate = _gate(config, BudgetGuard(BudgetConfig()), _Stop())
    gate.configure(replace(config, daemon=DaemonConfig(max_concurrency=2)))

    async def main() -> int:
        async with gate.slot(spec_a), gate.slot(spec_b):
            return gate.usage.global_now

    assert asyncio.run(asyncio.wait_for(main(), timeout=5)) == 2
