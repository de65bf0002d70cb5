"""The probe daemon: scheduling, caps, budget, spool, flushing, alerts, metrics.

``run_daemon(config)`` runs it inside an event loop; ``nerfwatch run`` wraps it.
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
