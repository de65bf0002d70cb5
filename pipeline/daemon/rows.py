"""Rows for scheduled runs that produced no measurement (skipped or aborted)."""

from __future__ import annotations

from datetime import datetime

from pipeline.daemon.schedule import JobSpec
from probes.ids import run_id_at
from probes.result import NERFWATCH_VERSION, ProbeResult, safe_endpoint

__all__ = ["bare_row"]


def bare_row(spec: JobSpec, when: datetime, status: str, reason: str, *, site: str) -> ProbeResult:
    """A ``skipped``/``aborted`` row at ``when``: what was due, and why it did not happen."""
    p, q = spec.provider, spec.probe
    return ProbeResult(
        run_id=run_id_at(int(when.timestamp() * 1000)),
        started_at=when,
        provider=p.name,
        model=p.model,
        probe=q.name,
        task_family=q.task,
        source="live",
        probe_site=site,
        run_status=status,
        skip_reason=reason,
        vendor=p.vendor,
        endpoint=safe_endpoint(p.base_url),
        wire_format=p.format,
        plan=p.plan,
        context_class=q.context_class,
        context_target_tokens=q.context_tokens,
        max_output_tokens=q.max_output_tokens,
        temperature=q.temperature,
        streamed=q.stream,
        nerfwatch_version=NERFWATCH_VERSION,
    )
