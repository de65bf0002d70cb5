"""Rows for scheduled runs that produced no measurement (skipped or aborted).

A row is stamped with the run's planned time but takes a fresh id: ids follow the order
rows are made in (``probes.ids``), and misfire rows are made after the runs they stand
for were due (after a suspend, hours later), so an id of their own time would sort them
before rows already stored.
"""

from __future__ import annotations

from datetime import datetime

from pipeline.daemon.schedule import JobSpec
from probes.ids import new_run_id
from probes.result import ProbeResult, planned_row

__all__ = ["bare_row"]


def bare_row(spec: JobSpec, when: datetime, status: str, reason: str, *, site: str) -> ProbeResult:
    """A ``skipped``/``aborted`` row at ``when``: what was due, and why it did not happen."""
    row = planned_row(
        spec.provider,
        spec.probe,
        run_id=new_run_id(),
        started_at=when,
        probe_site=site,
    )
    row.run_status, row.skip_reason = status, reason
    row.context_class = spec.probe.context_class
    row.context_target_tokens = spec.probe.context_tokens
    return row
