"""Alerts: Gatus-style hysteresis and delivery to a real loopback webhook receiver."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from pipeline.config import AlertsConfig, Webhook
from pipeline.daemon.alerts import (
    AlertEvaluator,
    send_phase_alert,
    send_report_link_sync,
)
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.daemon import WebhookReceiver


def _result(error_class: str, ttft_ms: float = 100.0) -> ProbeResult:
    return ProbeResult(
        run_id=new_run_id(),
        started_at=datetime.now(UTC),
        provider="alpha",
        model="m",
        probe="short",
        task_family="arithmetic",
        error_class=error_class,
        ttft_ms=ttft_ms,
    )


def test_failure_and_success_thresholds_open_and_resolve_once() -> None:
    alerts = AlertsConfig(error_rate=0.5, window=4, failure_threshold=2, success_threshold=2)
    evaluator = AlertEvaluator(alerts)
    events = [evaluator.observe(_result(c)) for c in ["ok", "overloaded", "overloaded"]]
    assert [e.kind if e else None for e in events] == [None, None, "triggered"]
    more = [evaluator.observe(_result(c)) for c in ["overloaded", "ok", "ok", "ok", "ok"]]
    kinds = [e.kind if e else None for e in more]
    assert kinds.count("triggered") == 0
    assert kinds.count("resolved") == 1


def test_ttft_threshold_counts_as_failing() -> None:
    alerts = AlertsConfig(ttft_p95_ms=500, window=3, failure_threshold=1, success_threshold=1)
    evaluator = AlertEvaluator(alerts)
    event = evaluator.observe(_result("ok", ttft_ms=2000))
    assert event is not None and event.kind == "triggered"
    assert event.detail["ttft_p95_ms"] == 2000


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    server = WebhookReceiver()
    yield server
    server.close()


def test_json_and_slack_webhooks_receive_alerts_and_urls_stay_secret(
    receiver: WebhookReceiver, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("NW_HOOK_JSON", receiver.url("/json-secret-token"))
    monkeypatch.setenv("NW_HOOK_SLACK", receiver.url("/slack-secret-token"))
    alerts = AlertsConfig(
        webhooks=(
            Webhook("ops", "NW_HOOK_JSON", "json"),
            Webhook("chat", "NW_HOOK_SLACK", "slack"),
        )
    )
    caplog.set_level(logging.DEBUG)
    sent = asyncio.run(send_phase_alert(alerts, "alpha", "long_context_issues", {"p": 0.01}))
    assert sent == 2
    assert send_report_link_sync(alerts, "https://reports.example/2026-W47.html") == 2
    by_path: dict[str, list[dict[str, object]]] = {}
    for path, body in receiver.received:
        by_path.setdefault(path, []).append(body)
    json_bodies = by_path["/json-secret-token"]
    assert [b["kind"] for b in json_bodies] == ["phase", "report"]
    assert json_bodies[0]["provider"] == "alpha"
    slack = by_path["/slack-secret-token"]
    assert "alpha entered phase long_context_issues" in str(slack[0]["text"])
    assert "2026-W47" in str(slack[1]["text"])
    assert "secret-token" not in caplog.text


def test_unreachable_or_unset_webhook_is_logged_without_its_url(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("NW_HOOK_DEAD", "http://127.0.0.1:9/dead-secret-token")
    monkeypatch.delenv("NW_HOOK_UNSET", raising=False)
    alerts = AlertsConfig(
        webhooks=(Webhook("dead", "NW_HOOK_DEAD"), Webhook("unset", "NW_HOOK_UNSET"))
    )
    caplog.set_level(logging.DEBUG)
    assert asyncio.run(send_phase_alert(alerts, "alpha", "stable")) == 0
    assert "webhook dead: delivery failed" in caplog.text
    assert "NW_HOOK_UNSET is not set" in caplog.text
    assert "secret-token" not in caplog.text
