"""Prometheus metrics, named in the blackbox_exporter style.

Each daemon owns its registry (several daemons may run in one test process). The
endpoint binds to 127.0.0.1 only: it is for a local Prometheus, not the internet.
Labels stay low-cardinality: provider, probe, phase, error class, reason.
"""

from __future__ import annotations

import logging
import threading
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from probes.result import ProbeResult

__all__ = ["Metrics"]

log = logging.getLogger(__name__)

_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)
_LAG_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5)


class Metrics:
    """Counters and histograms fed by the daemon; optionally served on /metrics."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.duration = Histogram(
            "nerfwatch_probe_duration_seconds",
            "Probe duration by phase: ttft (first token) and total.",
            ["provider", "probe", "phase"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.success = Gauge(
            "nerfwatch_probe_success",
            "1 if the last probe succeeded (error_class ok), else 0.",
            ["provider", "probe"],
            registry=r,
        )
        self.probes = Counter(
            "nerfwatch_probes_total", "Probe attempts.", ["provider", "probe"], registry=r
        )
        self.errors = Counter(
            "nerfwatch_probe_errors_total",
            "Failed probe attempts by error class.",
            ["provider", "error_class"],
            registry=r,
        )
        self.skipped = Counter(
            "nerfwatch_runs_skipped_total",
            "Scheduled runs that did not probe, by reason.",
            ["provider", "reason"],
            registry=r,
        )
        self.budget_cost = Gauge(
            "nerfwatch_budget_used_usd", "Today's spend (UTC day).", ["provider"], registry=r
        )
        self.budget_tokens = Gauge(
            "nerfwatch_budget_used_tokens", "Today's tokens (UTC day).", ["provider"], registry=r
        )
        self.start_lag = Histogram(
            "nerfwatch_schedule_lag_seconds",
            "Actual minus planned start of a scheduled run.",
            buckets=_LAG_BUCKETS,
            registry=r,
        )
        self.flush_seconds = Histogram(
            "nerfwatch_flush_duration_seconds",
            "Time to move the spool into the warehouse.",
            buckets=_LAG_BUCKETS,
            registry=r,
        )
        self.spool_depth = Gauge(
            "nerfwatch_spool_depth", "Results waiting in the spool.", registry=r
        )
        self.in_flight = Gauge("nerfwatch_probes_in_flight", "Probes running now.", registry=r)
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def observe(self, result: ProbeResult) -> None:
        """Record one attempted probe."""
        labels = (result.provider, result.probe)
        self.probes.labels(*labels).inc()
        if result.ttft_ms is not None:
            self.duration.labels(*labels, "ttft").observe(result.ttft_ms / 1000)
        if result.total_ms is not None:
            self.duration.labels(*labels, "total").observe(result.total_ms / 1000)
        ok = result.error_class == "ok"
        self.success.labels(*labels).set(1 if ok else 0)
        if not ok:
            self.errors.labels(result.provider, result.error_class or "unknown").inc()

    def serve(self, port: int) -> int:
        """Start /metrics on 127.0.0.1:port (0 = any free port); return the port."""
        self._server, self._thread = start_http_server(
            port, addr="127.0.0.1", registry=self.registry
        )
        bound = int(self._server.server_address[1])
        log.info("metrics endpoint on http://127.0.0.1:%d/metrics", bound)
        return bound

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
