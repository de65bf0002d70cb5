"""Response headers → the typed ``rl_*`` columns, ``retry_after_s``, ``request_id``, and a
scrubbed copy of every other header.

Two dialects: OpenAI-style ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` (reset
is a relative Go duration like ``6m0s``; ``_usage_based`` variants exist) and
``anthropic-ratelimit-{requests,tokens,input-tokens}-{limit,remaining,reset}`` (reset is an
absolute RFC 3339 time). Negative values (Azure sends -1) mean unknown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from probes.secrets import KEY_SHAPED

__all__ = ["RateLimits", "parse_duration_s", "rate_limits", "request_id", "safe_headers"]

RateLimits = dict[str, float | int | None]

_GO_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_SECRET_NAME = re.compile(
    r"authorization|cookie|api[-_]?key|secret|password|credential|session|signature|"
    r"^x-goog-|token$|^proxy-",
    re.I,
)
_REQUEST_ID = ("x-request-id", "request-id", "x-generation-id", "trace-id", "trace_id",
               "x-trace-id", "x-amzn-requestid", "x-dashscope-request-id")  # fmt: skip


def parse_duration_s(text: str) -> float | None:
    """``"1m30s"`` → 90.0, ``"12ms"`` → 0.012, ``"7"`` → 7.0; None when unreadable or not
    finite (``float`` reads ``nan``, ``inf`` and 400 digits, none of them a duration)."""
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        parts = _GO_PART.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            return None
        seconds = sum(float(n) * _GO_UNITS[u] for n, u in parts)
    return seconds if math.isfinite(seconds) else None


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        number = int(float(value.strip()))
    except (ValueError, OverflowError):  # "inf" too; a huge finite value is range-checked later
        return None
    return number if number >= 0 else None


def _reset_s(value: str | None, now: datetime) -> float | None:
    if value is None:
        return None
    seconds = parse_duration_s(value)
    if seconds is None:
        try:
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - now).total_seconds()
        return max(seconds, 0.0)
    return seconds if seconds >= 0 else None


def _retry_after(headers: Mapping[str, str], now: datetime) -> float | None:
    """Seconds to wait; a negative value means unknown, as in the other headers."""
    ms = headers.get("retry-after-ms")
    value = parse_duration_s(ms) if ms is not None else None
    if value is not None and value >= 0:
        return value / 1000
    raw = headers.get("retry-after")
    if raw is None:
        return None
    value = parse_duration_s(raw)
    if value is not None:
        return value if value >= 0 else None
    try:
        return max((parsedate_to_datetime(raw) - now).total_seconds(), 0.0)
    except (TypeError, ValueError):
        return None


def rate_limits(headers: Mapping[str, str], now: datetime | None = None) -> RateLimits:
    """The typed rate-limit columns from lower-cased response headers."""
    now = now or datetime.now(UTC)

    def pick(*names: str) -> str | None:
        for name in names:
            if name in headers:
                return headers[name]
        return None

    out: RateLimits = {}
    for kind in ("requests", "tokens"):
        o = f"x-ratelimit-{{}}-{kind}"
        a = f"anthropic-ratelimit-{kind}-{{}}"
        ai = "anthropic-ratelimit-input-tokens-{}" if kind == "tokens" else a
        for field in ("limit", "remaining"):
            raw = pick(o.format(field), o.format(field) + "_usage_based", a.format(field),
                       ai.format(field))  # fmt: skip
            out[f"rl_{kind}_{field}"] = _int(raw)
        raw = pick(o.format("reset"), o.format("reset") + "_usage_based", a.format("reset"),
                   ai.format("reset"))  # fmt: skip
        out[f"rl_{kind}_reset_s"] = _reset_s(raw, now)
    out["retry_after_s"] = _retry_after(headers, now)
    return out


def request_id(headers: Mapping[str, str]) -> str | None:
    for name in _REQUEST_ID:
        if headers.get(name):
            return headers[name][:200]
    return None


def safe_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Every header except credentials, cookies and anything key-like (names or values)."""
    kept: dict[str, str] = {}
    for name, value in headers.items():
        lower = name.lower()
        if _SECRET_NAME.search(lower) and not lower.startswith(("x-ratelimit", "anthropic-rate")):
            continue
        if KEY_SHAPED.search(value):
            continue
        kept[lower] = value[:500]
    return kept
