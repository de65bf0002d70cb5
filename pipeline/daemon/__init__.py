"""The probe daemon: scheduling, caps, budget, spool, flushing, alerts, metrics.

``run_daemon(config)`` runs it inside an event loop; ``nerfwatch run`` wraps it.
``service.Daemon`` wires the parts below in the order data flows through them; each
part owns its state, gets what it needs in its constructor and can be built alone.

- the flow: ``bridge`` (APScheduler triggers → run requests; overruns and misfires →
  skipped rows; jobs re-timed when ``clock_watch`` sees the wall clock step) →
  ``gate`` (shutdown, budget, caps) → ``one_run`` (probe → row) → ``row_sink`` (the
  row into the spool, counted) → ``spool`` (fsync'd segments) → ``flush/`` (the flush
  loop, the daemon's side of the flush and the flush process that writes DuckDB; see
  its docstring for the process boundary).
- beside the flow: ``probe_call`` (the probe function on the daemon's loop or a
  ``workers`` thread), ``alert_sender`` (alerts raised by ``alerts``), ``reloader``
  (SIGHUP), ``stopper`` (stop request, signals, grace period), ``events`` (start,
  heartbeat, stop rows), ``tasks`` (background tasks the stop waits for),
  ``report_job`` (the weekly report), ``startup`` (flush writer, warm start).
- data and rules: ``contract`` (the public types), ``schedule`` (jobs and triggers),
  ``rows``, ``budget``, ``caps``, ``held_rows``, ``metrics``, ``state`` and ``status``
  (read back from the warehouse and the spool), ``logs``.
"""

from __future__ import annotations

from pipeline.daemon.alerts import (
    send_phase_alert,
    send_phase_alert_sync,
    send_report_link,
    send_report_link_sync,
)
from pipeline.daemon.service import (
    Daemon,
    DaemonError,
    DaemonStats,
    DaemonTuning,
    ProbeFunction,
    run_daemon,
)

__all__ = [
    "Daemon",
    "DaemonError",
    "DaemonStats",
    "DaemonTuning",
    "ProbeFunction",
    "run_daemon",
    "send_phase_alert",
    "send_phase_alert_sync",
    "send_report_link",
    "send_report_link_sync",
]
