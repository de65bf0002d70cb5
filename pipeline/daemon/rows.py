"""Rows for scheduled runs that produced no measurement (skipped or aborted)."""

from __future__ import annotations

import functools
from datetime import datetime
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version
from urllib.parse import urlsplit, urlunsplit

from pipeline.daemon.schedule import JobSpec
from probes.ids import run_id_at
from probes.result import ProbeResult

__all__ = ["bare_row", "endpoint", "version"]


def endpoint(base_url: str) -> str:
    """The base URL without credentials, query or fragment (secrets never reach a row)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@functools.cache
def version() -> str | None:
    """The installed nerfwatch version (None in a plain checkout)."""
    try:
        return _dist_version("nerfwatch")
    except PackageNotFoundError:
        return None


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
        endpoint=endpoint(p.base_url),
        wire_format=p.format,
        plan=p.plan,
        context_class=q.context_class,
        context_target_tokens=q.context_tokens,
        max_output_tokens=q.max_output_tokens,
        temperature=q.temperature,
        streamed=q.stream,
        nerfwatch_version=version(),
    )
