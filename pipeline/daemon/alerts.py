"""Webhook alerts: provider health (error rate, TTFT p95), phase changes, report links.

Gatus-style hysteresis: each finished probe re-evaluates the provider's last ``window``
attempts; ``failure_threshold`` failing evaluations in a row open an alert,
``success_threshold`` passing ones resolve it (and say so). Webhook URLs are secrets
read from the environment at send time; they never reach a log line or an exception
message (httpx errors can quote the URL, so only the error's class is logged).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import numpy as np

from pipeline.config import AlertsConfig, Webhook
from probes.ids import new_run_id
from probes.result import ProbeResult

__all__ = [
    "AlertEvaluator",
    "AlertEvent",
    "deliver",
    "payload",
    "send_phase_alert",
    "send_phase_alert_sync",
    "send_report_link",
    "send_report_link_sync",
]

log = logging.getLogger(__name__)

_SECRET_URLS: set[str] = set()


class _RedactWebhookURLs(logging.Filter):
    """httpx logs every request URL at INFO; webhook URLs are secrets, so mask them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _SECRET_URLS and isinstance(record.args, tuple):
            record.args = tuple(
                "[webhook URL redacted]" if str(arg) in _SECRET_URLS else arg for arg in record.args
            )
        return True


logging.getLogger("httpx").addFilter(_RedactWebhookURLs())


@dataclass(frozen=True, slots=True)
class AlertEvent:
    """One message to every configured webhook."""

    kind: str  # triggered | resolved | phase | report
    provider: str | None
    title: str
    detail: dict[str, Any] = field(default_factory=dict)
    at: datetime = field(default_factory=lambda: datetime.now(UTC))
    event_id: str = field(default_factory=new_run_id)

    def as_row(self, delivered: int) -> dict[str, Any]:
        """The row for the ``alert_events`` table."""
        return {
            "event_id": self.event_id,
            "occurred_at": self.at,
            "provider": self.provider,
            "kind": self.kind,
            "title": self.title,
            "detail": json.dumps(self.detail, sort_keys=True, default=str),
            "delivered": delivered,
        }


def payload(kind: str, event: AlertEvent) -> dict[str, Any]:
    """Body for a webhook of ``kind`` ("json" or "slack")."""
    if kind == "slack":
        icon = {"triggered": ":red_circle:", "resolved": ":large_green_circle:"}.get(
            event.kind, ":information_source:"
        )
        facts = ", ".join(f"{k}={v}" for k, v in event.detail.items())
        text = f"{icon} nerfwatch: {event.title}" + (f" ({facts})" if facts else "")
        return {"text": text}
    return {
        "source": "nerfwatch",
        "event_id": event.event_id,
        "kind": event.kind,
        "provider": event.provider,
        "title": event.title,
        "detail": event.detail,
        "at": event.at.isoformat(),
    }


async def _post(client: httpx.AsyncClient, hook: Webhook, event: AlertEvent) -> bool:
    url = hook.url()
    if not url:
        log.warning("webhook %s: environment variable %s is not set", hook.name, hook.url_env)
        return False
    _SECRET_URLS.add(url)
    try:
        response = await client.post(url, json=payload(hook.kind, event), timeout=10.0)
    except httpx.HTTPError as exc:
        log.warning("webhook %s: delivery failed (%s)", hook.name, type(exc).__name__)
        return False
    if response.status_code >= 300:
        log.warning("webhook %s: receiver answered HTTP %d", hook.name, response.status_code)
        return False
    return True


async def deliver(
    webhooks: tuple[Webhook, ...], event: AlertEvent, client: httpx.AsyncClient | None = None
) -> int:
    """Send ``event`` to every webhook; return how many accepted it. Never raises."""
    if not webhooks:
        return 0
    own = client is None
    http = client or httpx.AsyncClient()
    try:
        results = await asyncio.gather(*(_post(http, hook, event) for hook in webhooks))
    finally:
        if own:
            await http.aclose()
    sent = sum(results)
    log.info(
        "alert %s %s: delivered to %d/%d webhooks", event.kind, event.title, sent, len(results)
    )
    return sent


async def send_phase_alert(
    alerts: AlertsConfig, provider: str, phase: str, detail: dict[str, Any] | None = None
) -> int:
    """For the analysis: announce that ``provider`` entered degradation ``phase``."""
    event = AlertEvent("phase", provider, f"{provider} entered phase {phase}", dict(detail or {}))
    return await deliver(alerts.webhooks, event)


async def send_report_link(alerts: AlertsConfig, report: str, *, title: str | None = None) -> int:
    """For the report scheduler: point the webhooks at a new report (path or URL)."""
    event = AlertEvent("report", None, title or "weekly report ready", {"report": report})
    return await deliver(alerts.webhooks, event)


def send_phase_alert_sync(
    alerts: AlertsConfig, provider: str, phase: str, detail: dict[str, Any] | None = None
) -> int:
    """Blocking variant of ``send_phase_alert`` for code without an event loop."""
    return asyncio.run(send_phase_alert(alerts, provider, phase, detail))


def send_report_link_sync(alerts: AlertsConfig, report: str, *, title: str | None = None) -> int:
    """Blocking variant of ``send_report_link``."""
    return asyncio.run(send_report_link(alerts, report, title=title))


def _ttft_p95(state: _ProviderState) -> float | None:
    ttfts = [t for failed, t in state.recent if not failed and t is not None]
    return float(np.percentile(ttfts, 95)) if ttfts else None


@dataclass(slots=True)
class _ProviderState:
    recent: deque[tuple[bool, float | None]]
    failing_run: int = 0
    passing_run: int = 0
    open: bool = False


class AlertEvaluator:
    """Per-provider hysteresis over the recent window of attempts."""

    def __init__(self, alerts: AlertsConfig) -> None:
        self.alerts = alerts
        self._state: dict[str, _ProviderState] = {}

    def configure(self, alerts: AlertsConfig) -> None:
        self.alerts = alerts
        for state in self._state.values():
            state.recent = deque(state.recent, maxlen=alerts.window)

    def restore_open(self, providers: set[str]) -> None:
        """Alerts still open when the last daemon stopped stay open (no re-send)."""
        for name in providers:
            self._get(name).open = True

    def _get(self, provider: str) -> _ProviderState:
        if provider not in self._state:
            self._state[provider] = _ProviderState(deque(maxlen=self.alerts.window))
        return self._state[provider]

    def _verdict(self, state: _ProviderState) -> bool:
        """Failing when the window's error rate or TTFT p95 crosses its threshold."""
        errors = sum(1 for failed, _ in state.recent if failed)
        if errors / len(state.recent) >= self.alerts.error_rate:
            return True
        limit = self.alerts.ttft_p95_ms
        if limit is None:
            return False
        p95 = _ttft_p95(state)
        return p95 is not None and p95 > limit

    @staticmethod
    def _facts(state: _ProviderState) -> dict[str, Any]:
        errors = sum(1 for failed, _ in state.recent if failed)
        facts: dict[str, Any] = {
            "error_rate": round(errors / len(state.recent), 3),
            "window": len(state.recent),
        }
        p95 = _ttft_p95(state)
        if p95 is not None:
            facts["ttft_p95_ms"] = round(p95, 1)
        return facts

    def observe(self, result: ProbeResult) -> AlertEvent | None:
        """Feed one attempted probe; return an event when the alert opens or resolves."""
        state = self._get(result.provider)
        state.recent.append((result.error_class != "ok", result.ttft_ms))
        if self._verdict(state):
            state.failing_run += 1
            state.passing_run = 0
            if not state.open and state.failing_run >= self.alerts.failure_threshold:
                state.open = True
                title = f"{result.provider} unhealthy"
                return AlertEvent("triggered", result.provider, title, self._facts(state))
        else:
            state.passing_run += 1
            state.failing_run = 0
            if state.open and state.passing_run >= self.alerts.success_threshold:
                state.open = False
                title = f"{result.provider} resolved"
                return AlertEvent("resolved", result.provider, title, self._facts(state))
        return None
