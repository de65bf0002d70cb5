"""The gate a scheduled run passes before it probes: shutdown, budget, then the caps.

``admit`` answers at once (a reservation, or ``Refused`` with the reason the run's
``skipped`` row will carry); ``slot`` waits for the concurrency caps and refuses again
if the daemon began to stop meanwhile; ``settle`` trades the reservation for what the
run used. The budget warning is logged once per job and
UTC day, so a provider over its cap does not fill the log.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime

from pipeline.config import Config
from pipeline.daemon.budget import BudgetGuard, Reservation, Spend
from pipeline.daemon.caps import Caps, CapUsage
from pipeline.daemon.schedule import JobSpec

__all__ = ["Gate", "Refused"]

log = logging.getLogger("nerfwatch.daemon")


@dataclass(frozen=True, slots=True)
class Refused:
    """Why a run may not probe: ``reason`` is its ``skip_reason`` (shutdown, budget)."""

    reason: str
    detail: str = ""


class Gate:
    """Admits runs; owns the concurrency caps and the budget warnings already given."""

    def __init__(
        self, config: Config, *, budget: BudgetGuard, stopping: Callable[[], bool]
    ) -> None:
        self._caps = Caps(config)
        self._budget = budget
        budget.use_prices(config.providers)
        self._stopping = stopping
        self._budget_warned: dict[str, date] = {}

    @property
    def usage(self) -> CapUsage:
        """Slots in use now and at peak (for stats and tests)."""
        return self._caps.usage

    def configure(self, config: Config) -> None:
        """New cap limits and the prices stored spend is read at (reload); the budget's
        caps are configured by its owner."""
        self._caps.configure(config)
        self._budget.use_prices(config.providers)

    def admit(self, spec: JobSpec) -> Reservation | Refused:
        """Reserve the run's worst-case spend, or say why it may not run."""
        if self._stopping():
            return Refused("shutdown")
        reservation = self._budget.reserve(spec.provider, spec.probe)
        if isinstance(reservation, str):
            self._warn_budget(spec.key, reservation)
            return Refused("budget", reservation)
        return reservation

    @asynccontextmanager
    async def slot(self, spec: JobSpec) -> AsyncIterator[Refused | None]:
        """Hold every cap that applies to ``spec``; yields ``Refused`` when the stop came
        while the run waited for its slot (the run then leaves a ``skipped`` row)."""
        async with self._caps.slot(spec.provider, spec.probe):
            yield Refused("shutdown") if self._stopping() else None

    def settle(self, reservation: Reservation, used: Spend | None) -> Spend:
        """Replace an admitted run's reservation by what it used (None: nothing billed);
        returns its provider's spend today."""
        self._budget.settle(reservation, used)
        return self._budget.spent_by(reservation.provider)

    def _warn_budget(self, key: str, why: str) -> None:
        """A warning on a job's first budget refusal of the (UTC) day, debug lines after."""
        day = datetime.now(UTC).date()
        if self._budget_warned.get(key) != day:
            self._budget_warned[key] = day
            log.warning(
                "budget: skipping %s for the rest of the day or until spend allows: %s", key, why
            )
        else:
            log.debug("budget: skipping %s: %s", key, why)
