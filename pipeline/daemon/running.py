"""One scheduled run: the gates (shutdown, budget), the caps, the probe, the spool.

A probe cut off by shutdown while it waited for a slot leaves a ``skipped`` row; one cut
off while probing leaves an ``aborted`` row (and counts its reservation as spent, since
the provider may have billed it); a bug in the probe function leaves an ``aborted`` row
with reason ``internal_error`` and does not stop the schedule. Once a run's row is in
the spool, a failure in the bookkeeping after it (usage, metrics, alerts) is logged and
never adds a second row.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from pipeline.config import ProviderConfig
from pipeline.daemon.alerts import AlertEvent, deliver
from pipeline.daemon.budget import Reservation, Spend, result_usage
from pipeline.daemon.core import InFlight
from pipeline.daemon.flushing import Flushing
from pipeline.daemon.schedule import JobSpec
from probes.result import ProbeResult
from probes.sizing import CharsPerToken

__all__ = ["JobRunning"]

log = logging.getLogger("nerfwatch.daemon")


class JobRunning(Flushing):
    async def _job(self, key: str) -> None:
        """One scheduled run: gates (shutdown, budget), caps, probe, spool."""
        now = datetime.now(UTC)
        planned = self._planned.pop(key, now)
        lag = (now - planned).total_seconds()
        self.stats.start_lag_ms.append(lag * 1000)
        self.metrics.start_lag.observe(max(lag, 0.0))
        spec = self._specs.get(key)
        if spec is None:
            return
        if self._stopping:
            await self._skip(spec, planned, "shutdown")
            return
        reservation = self.budget.reserve(spec.provider, spec.probe)
        if isinstance(reservation, str):
            self._warn_budget(key, reservation)
            await self._skip(spec, planned, "budget")
            return
        await self._probe(spec, planned, reservation)

    def _warn_budget(self, key: str, why: str) -> None:
        """A warning on a job's first budget skip of the (UTC) day, debug lines after."""
        day = datetime.now(UTC).date()
        if self._budget_warned.get(key) != day:
            self._budget_warned[key] = day
            log.warning(
                "budget: skipping %s for the rest of the day or until spend allows: %s", key, why
            )
        else:
            log.debug("budget: skipping %s: %s", key, why)

    async def _probe(self, spec: JobSpec, planned: datetime, reservation: Reservation) -> None:
        assert self._caps is not None and self._client is not None
        task = asyncio.current_task()
        assert task is not None
        entry = InFlight(spec.key, task)
        self._inflight.add(entry)
        self.metrics.in_flight.inc()
        used: Spend | None = None
        try:
            async with self._caps.slot(spec.provider, spec.probe):
                if self._stopping:  # stop came while this run waited for a slot
                    await self._skip(spec, planned, "shutdown")
                    return
                entry.phase = "probing"
                result = await self._call_probe(spec)
            entry.phase = "persisting"
            used = result_usage(spec.provider, result)  # fills cost_usd: before the append
            await self._persist(result)
            entry.phase = "persisted"  # from here on this run has its row
            self._after_result(result)
        except asyncio.CancelledError:
            if entry.phase in ("persisting", "persisted"):
                return  # the shielded spool append completes on its own
            if entry.phase == "probing":
                used = Spend(reservation.tokens, reservation.cost_usd)  # may have been billed
                row = self._bare_row(spec, datetime.now(UTC), "aborted", "shutdown")
            else:
                row = self._bare_row(spec, planned, "skipped", "shutdown")
            await self._persist(row)
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
            row = self._bare_row(spec, datetime.now(UTC), "aborted", "internal_error")
            row.error_detail = type(exc).__name__
            await self._persist(row)
        finally:
            self.budget.settle(reservation, used)
            self._inflight.discard(entry)
            self.metrics.in_flight.dec()
            self._update_budget_metrics(spec.provider.name)

    async def _call_probe(self, spec: JobSpec) -> ProbeResult:
        extras: dict[str, Any] = {"source": "live", "probe_site": self._site}
        extras.update(self._probe_extras(spec.provider))
        if self._workers is not None:
            return await self._workers.run(self.probe_fn, spec.provider, spec.probe, **extras)
        assert self._client is not None
        return await self.probe_fn(spec.provider, spec.probe, client=self._client, **extras)

    def _probe_extras(self, provider: ProviderConfig) -> dict[str, Any]:
        if not self._with_estimator:
            return {}
        if provider.name not in self._estimators:
            self._estimators[provider.name] = CharsPerToken(provider.chars_per_token)
        return {"estimator": self._estimators[provider.name]}

    def _after_result(self, result: ProbeResult) -> None:
        self.metrics.observe(result)
        event = self.alerts.observe(result)
        if event is not None:
            self.stats.alerts.append(event)
            self._spawn(self._send_alert(event))

    async def _send_alert(self, event: AlertEvent) -> None:
        log.warning("alert %s: %s %s", event.kind, event.title, event.detail)
        delivered = await deliver(self.config.alerts.webhooks, event, self._client)
        self.flusher.add_side_rows("alert_events", [event.as_row(delivered)], key="event_id")

    def _update_budget_metrics(self, provider: str) -> None:
        spend = self.budget.spent_by(provider)
        self.metrics.budget_cost.labels(provider).set(spend.cost_usd)
        self.metrics.budget_tokens.labels(provider).set(spend.tokens)
