"""Sending an alert the evaluator raised: to every webhook, then into ``alert_events``
(queued as a side row for the next flush, with how many webhooks accepted it)."""

from __future__ import annotations

import logging

import httpx

from pipeline.config import AlertsConfig
from pipeline.daemon.alerts import AlertEvent, deliver
from pipeline.daemon.flush import Flusher

__all__ = ["AlertSender"]

log = logging.getLogger("nerfwatch.daemon")


class AlertSender:
    """Delivers alert events with the daemon's HTTP client; never raises."""

    def __init__(self, config: AlertsConfig, *, client: httpx.AsyncClient, flusher: Flusher):
        self._config = config
        self._client = client
        self._flusher = flusher

    def configure(self, config: AlertsConfig) -> None:
        """New webhooks (reload); the evaluator's thresholds are configured by its owner."""
        self._config = config

    async def send(self, event: AlertEvent) -> None:
        log.warning("alert %s: %s %s", event.kind, event.title, event.detail)
        delivered = await deliver(self._config.webhooks, event, self._client)
        self._flusher.add_side_rows("alert_events", [event.as_row(delivered)], key="event_id")
