"""Spooled lines read back for a look (``nerfwatch status``, today's spend at start).

The flush decides what a spool line is worth and quarantines what the warehouse cannot
take; until that flush runs (the warehouse may be held or broken for hours) the status
and the budget still read the spool. A damaged line (cut by a power loss, an array,
a field of the wrong type) must not crash them, so every field is checked here and a
line that is not a readable probe row is left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = ["SpooledProbe", "spooled_object", "spooled_probe"]


@dataclass(frozen=True, slots=True)
class SpooledProbe:
    """The fields of a spooled probe row that status and spend read, type-checked."""

    provider: str
    started_at: datetime  # UTC
    source: str
    run_status: str | None
    error_class: str | None
    error_detail: str | None
    tokens: int
    cost_usd: float
    # what the budget needs to tell a probe billed without usage (budget.billed_without_usage)
    input_tokens: float | None = None
    output_tokens: float | None = None
    http_status: int | None = None
    context_target_tokens: float = 0.0
    max_output_tokens: float = 0.0


def spooled_object(line: str) -> dict[str, Any] | None:
    """The line's JSON object, or None when it is not one."""
    try:
        row = json.loads(line)
    except ValueError:
        return None
    return row if isinstance(row, dict) else None


def spooled_probe(row: dict[str, Any]) -> SpooledProbe | None:
    """``row`` as a probe row, or None when a field it needs is missing or of a wrong type."""
    provider, started = row.get("provider"), row.get("started_at")
    if not isinstance(provider, str) or not isinstance(started, str):
        return None
    try:
        started_at = datetime.fromisoformat(started).astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    source = row.get("source", "live")
    texts = (row.get("run_status"), row.get("error_class"), row.get("error_detail"))
    if not isinstance(source, str) or not all(t is None or isinstance(t, str) for t in texts):
        return None
    return SpooledProbe(
        provider,
        started_at,
        source,
        *texts,
        tokens=int(_number(row.get("input_tokens")) + _number(row.get("output_tokens"))),
        cost_usd=_number(row.get("cost_usd")),
        input_tokens=_count(row.get("input_tokens")),
        output_tokens=_count(row.get("output_tokens")),
        http_status=status if isinstance(status := row.get("http_status"), int) else None,
        context_target_tokens=_number(row.get("context_target_tokens")),
        max_output_tokens=_number(row.get("max_output_tokens")),
    )


def _count(value: object) -> float | None:
    """A count as ``_number`` reads it, but None when the row has none (not 0)."""
    return None if value is None else _number(value)


def _number(value: object) -> float:
    """A count or cost; 0 for a missing one, or one that is no finite number (NaN and
    infinity fail the comparison; a huge int is not turned into a float that overflows)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value) if abs(value) < 1e300 else 0.0
