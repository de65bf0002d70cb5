"""Response headers → the typed ``rl_*`` columns, ``retry_after_s``, ``request_id``, and a
scrubbed copy of every other header.

Dialects: OpenAI-style ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` (reset
is a relative Go duration like ``6m0s``; ``_usage_based`` variants exist);
``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}``
(reset is an absolute RFC 3339 time; input and output tokens are separate limits, each
with its own ``rl_input_tokens_*`` / ``rl_output_tokens_*`` columns, while ``rl_tokens_*``
holds the combined ``tokens`` family, or the input family where no combined one is sent,
as it always did); and Anthropic's subscription family
``anthropic-ratelimit-unified-*`` (status, representative claim, 5-hour and 7-day
utilization as a fraction, resets as Unix epoch seconds); and the unsuffixed
``x-ratelimit-{limit,remaining,reset}`` OpenRouter sends (on its error responses, and in
``error.metadata.headers`` of a 429 body): a request limit, so ``rl_requests_*``, whose
reset is a Unix time in milliseconds (``_stamp_reset_s``).

Values that mean "not reported" are stored as NULL, never as a figure: a negative number,
and Azure OpenAI's markers (providers.md §2; openai-dotnet issue 838 shows
``limit-tokens: -1, remaining-tokens: -1, reset-tokens: 0``). A limit of 0 cannot have
admitted any request, so it is such a marker too; and in a family whose limit header is
sent but is no positive number, a 0 in its remaining or reset header is the same marker,
not an exhausted limit or a reset due now.

A wait longer than ``MAX_RETRY_AFTER_S`` (31 days, the longest window a provider's limit
resets on: monthly spend caps, providers.md §1 and §5) describes no limit: a
``Retry-After`` of twenty nines was stored as 1e20 seconds. It is stored as NULL and
named in the caller's ``out_of_range`` set (the runner flags it ``out_of_range:<column>``),
so the nonsense stays visible; an HTTP-date far in the future is the same. Every
``rl_*_reset_s`` column is bounded the same way, whatever its form (a Go duration such as
``99999999999h``, seconds such as ``1e308``, an RFC 3339 time or Unix epoch in year 9999):
the report's rate-limit charts read these columns, and one such value flattened them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from probes.secrets import KEY_SHAPED

__all__ = [
    "MAX_RETRY_AFTER_S",
    "WAIT_COLUMNS",
    "RateLimits",
    "parse_duration_s",
    "rate_limits",
    "request_id",
    "safe_headers",
]

RateLimits = dict[str, float | int | str | None]

MAX_RETRY_AFTER_S = 31 * 24 * 3600.0  # bounds every reset too: no limit's window is longer
_RESET_PREFIXES = ("rl_requests", "rl_tokens", "rl_input_tokens", "rl_output_tokens")
_UNIFIED_RESETS = ("rl_unified_reset_s", "rl_unified_5h_reset_s", "rl_unified_7d_reset_s")
# The columns a value past MAX_RETRY_AFTER_S is cleared from and named in ``out_of_range``.
WAIT_COLUMNS = frozenset(
    {"retry_after_s", *(f"{p}_reset_s" for p in _RESET_PREFIXES), *_UNIFIED_RESETS}
)

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


def _retry_after(headers: Mapping[str, str], now: datetime) -> tuple[float | None, bool]:
    """Seconds to wait, and whether it is None because a wait past ``MAX_RETRY_AFTER_S``
    was sent. A negative value means unknown, as in the other headers; ``retry-after-ms``
    that is negative or too long gives way to ``retry-after``."""
    ms = headers.get("retry-after-ms")
    value = parse_duration_s(ms) if ms is not None else None
    too_long = value is not None and value / 1000 > MAX_RETRY_AFTER_S
    if value is not None and value >= 0 and not too_long:
        return value / 1000, False
    raw = headers.get("retry-after")
    if raw is None:
        return None, too_long
    value = parse_duration_s(raw)
    if value is None:
        try:
            value = max((parsedate_to_datetime(raw) - now).total_seconds(), 0.0)
        except (TypeError, ValueError, OverflowError):
            return None, too_long
    if value > MAX_RETRY_AFTER_S:
        return None, True
    return (value, False) if value >= 0 else (None, too_long)


_FIELDS = ("limit", "remaining", "reset")


Family = tuple[str, ...]  # header name patterns read as one limit, each field first-found


# OpenRouter's family names no kind: its limits count requests (free-model caps, per key).
_UNSUFFIXED: Family = ("x-ratelimit-{}",)


def _families(kind: str) -> tuple[Family, ...]:
    """The header families of one limit, in order of preference. OpenAI's ``_usage_based``
    variants fill the fields its plain headers leave out, as they always did."""
    openai = f"x-ratelimit-{{}}-{kind}"
    families: tuple[Family, ...] = (
        (openai, openai + "_usage_based"),
        (f"anthropic-ratelimit-{kind}-{{}}",),
    )
    if kind == "tokens":
        return (*families, ("anthropic-ratelimit-input-tokens-{}",))
    return (*families, _UNSUFFIXED)


def _first_family(
    headers: Mapping[str, str], families: tuple[Family, ...]
) -> tuple[Family | None, dict[str, str | None]]:
    """The first family sent at all and its three fields, all from that family: a limit
    from one family over the remaining count or reset of another describes neither (an
    Anthropic combined ``tokens`` family sent without its reset took the input one's)."""
    for family in families:
        raw = {field: _pick(headers, family, field) for field in _FIELDS}
        if any(value is not None for value in raw.values()):
            return family, raw
    return None, dict.fromkeys(_FIELDS)


def _pick(headers: Mapping[str, str], family: Family, field: str) -> str | None:
    for pattern in family:
        if pattern.format(field) in headers:
            return headers[pattern.format(field)]
    return None


def rate_limits(
    headers: Mapping[str, str],
    now: datetime | None = None,
    out_of_range: set[str] | None = None,
) -> RateLimits:
    """The typed rate-limit columns from lower-cased response headers; a column whose
    value was sent but is out of range is None and its name added to ``out_of_range``."""
    now = now or datetime.now(UTC)
    out: RateLimits = {}
    for kind in ("requests", "tokens"):
        family, raw = _first_family(headers, _families(kind))
        reset = _stamp_reset_s if family == _UNSUFFIXED else _reset_s
        out.update(_family(f"rl_{kind}", raw, now, reset))
    for kind in ("input", "output"):  # Anthropic's separate input- and output-token limits
        _, raw = _first_family(headers, ((f"anthropic-ratelimit-{kind}-tokens-{{}}",),))
        out.update(_family(f"rl_{kind}_tokens", raw, now))
    out.update(_unified(headers, now))
    out["retry_after_s"], too_long = _retry_after(headers, now)
    too_long_columns = {"retry_after_s"} if too_long else set()
    for column in WAIT_COLUMNS - {"retry_after_s"}:
        seconds = out[column]
        if isinstance(seconds, float) and seconds > MAX_RETRY_AFTER_S:
            out[column] = None
            too_long_columns.add(column)
    if out_of_range is not None:
        out_of_range.update(too_long_columns)
    return out


def _family(
    prefix: str,
    raw: Mapping[str, str | None],
    now: datetime,
    read_reset: Callable[[str | None, datetime], float | None] = _reset_s,
) -> RateLimits:
    """``<prefix>_limit``, ``_remaining`` and ``_reset_s`` of one limit, with the "not
    reported" markers (see the module docstring) as None."""
    limit, remaining = _int(raw["limit"]), _int(raw["remaining"])
    reset = read_reset(raw["reset"], now)
    if raw["limit"] is not None and not limit:  # -1, 0 or unreadable: not reported
        limit = None
        remaining = remaining or None
        reset = reset or None
    return {f"{prefix}_limit": limit, f"{prefix}_remaining": remaining, f"{prefix}_reset_s": reset}


_UNIFIED = "anthropic-ratelimit-unified-"
_WORD = re.compile(r"[A-Za-z0-9_.-]{1,40}")  # a status or claim name; anything else is dropped


def _unified(headers: Mapping[str, str], now: datetime) -> RateLimits:
    """Anthropic's subscription (OAuth) family: status, the window it speaks for, and the
    5-hour and 7-day windows' utilization (fraction used) and reset."""
    out: RateLimits = {}
    for column, name in (("status", "status"), ("claim", "representative-claim")):
        value = headers.get(_UNIFIED + name, "").strip()
        out[f"rl_unified_{column}"] = value if _WORD.fullmatch(value) else None
    out["rl_unified_reset_s"] = _epoch_reset_s(headers.get(_UNIFIED + "reset"), now)
    for window in ("5h", "7d"):
        used = _fraction(headers.get(f"{_UNIFIED}{window}-utilization"))
        out[f"rl_unified_{window}_utilization"] = used
        reset = _epoch_reset_s(headers.get(f"{_UNIFIED}{window}-reset"), now)
        out[f"rl_unified_{window}_reset_s"] = reset
    return out


def _fraction(value: str | None) -> float | None:
    """A utilization such as ``0.42``; None unless a finite number of 0 or more."""
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


_EPOCH_MS_FROM = 1e11  # as milliseconds 1973; as seconds the year 5138
_EPOCH_S_FROM = 1e9  # as seconds 2001; as a wait, 31 years


def _stamp_reset_s(value: str | None, now: datetime) -> float | None:
    """An unsuffixed ``x-ratelimit-reset``: OpenRouter sends Unix milliseconds
    (``1741305600000``); a smaller figure is read as epoch seconds, or below 1e9 as a wait
    in seconds (the form other gateways use), since no figure is plausible in two forms."""
    seconds = _fraction(value)
    if seconds is None:
        return None
    if seconds >= _EPOCH_MS_FROM:
        return _until(seconds / 1000, now)
    if seconds >= _EPOCH_S_FROM:
        return _until(seconds, now)
    return seconds


def _epoch_reset_s(value: str | None, now: datetime) -> float | None:
    """Seconds from ``now`` to a Unix-epoch reset (0 when already past)."""
    seconds = _fraction(value)
    return None if seconds is None else _until(seconds, now)


def _until(stamp: float, now: datetime) -> float:
    """Seconds from ``now`` to the Unix time ``stamp`` (0 when already past)."""
    try:
        when = datetime.fromtimestamp(stamp, UTC)
    except (OverflowError, OSError, ValueError):  # beyond any date: past every window
        return math.inf
    return max((when - now).total_seconds(), 0.0)


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
