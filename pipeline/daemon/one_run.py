"""One admitted run: wait for the caps, probe, price, spool the row, then observe it
(metrics, then ``after_result``: the alerts).

Every run leaves exactly one row. A run cut off by shutdown while it waited for a slot
leaves a ``skipped`` row; one cut off while probing leaves an ``aborted`` row (and
counts its reservation as spent, since the provider may have billed it); a bug in the
probe function leaves an ``aborted`` row with reason ``internal_error`` and does not
stop the schedule. Once a run's row is in the spool, a failure in what follows
(metrics, alerts) is logged and never adds a second row.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pipeline.daemon.budget import Reservation, Spend, result_usage
from pipeline.daemon.gate import Gate
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.row_sink import RowSink
from pipeline.daemon.schedule import JobSpec, RunRequest
from probes.result import ProbeResult

__all__ = ["Runs"]

log = logging.getLogger("nerfwatch.daemon")

ProbeCall = Callable[[JobSpec], Awaitable[ProbeResult]]


@dataclass(slots=True, eq=False)
class _InFlight:
    key: str
    task: asyncio.Task[Any]
    phase: str = "waiting"  # waiting (for a cap) | probing | persisting | persisted


class Runs:
    """Carries admitted runs from probe to spooled row; knows which are in flight."""

    def __init__(
        self,
        gate: Gate,
        probe: ProbeCall,
        sink: RowSink,
        *,
        metrics: Metrics,
        after_result: Callable[[ProbeResult], None] = lambda result: None,
    ) -> None:
        self._in_flight: set[_InFlight] = set()
        self._gate = gate
        self._probe = probe
        self._sink = sink
        self._metrics = metrics
        self._after_result = after_result

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def cancel_unpersisted(self) -> int:
        """Cancel the runs whose row is not being spooled yet (shutdown, after the
        grace period); each then spools its own skipped/aborted row. Returns how many."""
        cancelled = 0
        for entry in list(self._in_flight):
            if entry.phase not in ("persisting", "persisted"):
                entry.task.cancel()
                cancelled += 1
        return cancelled

    async def run(self, request: RunRequest, reservation: Reservation) -> None:
        """Probe ``request`` under its caps and spool its one row (in the calling task)."""
        spec, planned = request.spec, request.planned
        task = asyncio.current_task()
        assert task is not None
        entry = _InFlight(spec.key, task)
        self._in_flight.add(entry)
        self._metrics.in_flight.inc()
        used: Spend | None = None
        try:
            async with self._gate.slot(spec) as refused:
                if refused is not None:  # stop came while this run waited for a slot
                    await self._sink.skip(spec, planned, refused.reason)
                    return
                entry.phase = "probing"
                result = await self._probe(spec)
            entry.phase = "persisting"
            used = result_usage(spec.provider, result)  # fills cost_usd: before the append
            await self._sink.persist(result)
            entry.phase = "persisted"  # from here on this run has its row
            self._metrics.observe(result)
            self._after_result(result)
        except asyncio.CancelledError:
            if entry.phase in ("persisting", "persisted"):
                return  # the shielded spool append completes on its own
            if entry.phase == "probing":
                now = datetime.now(UTC)  # may have been billed: counts on its row's day
                used = Spend(reservation.tokens, reservation.cost_usd, day=now.date())
                row = self._sink.bare_row(spec, now, "aborted", "shutdown")
            else:
                row = self._sink.bare_row(spec, planned, "skipped", "shutdown")
            await self._sink.persist(row)
        except Exception as exc:  # a bug in the probe function must not kill the schedule
            if entry.phase == "persisted":  # one run, one row: never a second, aborted one
                log.error(
                    "after spooling its row, run %s raised %s: %s",
                    spec.key,
                    type(exc).__name__,
                    exc,
                )
                return
            log.error("probe %s raised %s: %s", spec.key, type(exc).__name__, exc)
            row = self._sink.bare_row(spec, datetime.now(UTC), "aborted", "internal_error")
            row.error_detail = type(exc).__name__
            await self._sink.persist(row)
        finally:
            spent = self._gate.settle(reservation, used)
            self._in_flight.discard(entry)
            self._metrics.in_flight.dec()
            self._metrics.budget_cost.labels(spec.provider.name).set(spent.cost_usd)
            self._metrics.budget_tokens.labels(spec.provider.name).set(spent.tokens)
