"""Human durations in config files: ``"500ms"``, ``"30s"``, ``"10m"``, ``"1h30m"``, ``"1d"``."""

from __future__ import annotations

import re
from datetime import timedelta

__all__ = [
    "DurationError",
    "DurationTooLongError",
    "format_duration",
    "parse_duration",
    "parse_timedelta",
]

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
# Whole days a timedelta holds (parse_timedelta's limit).
_MAX_DAYS = timedelta.max.days
_MAX_S = _MAX_DAYS * 86400.0


class DurationError(ValueError):
    """Text that is not a duration."""


class DurationTooLongError(DurationError):
    """A duration longer than a timedelta holds (a caller may say why that is too long)."""


def parse_duration(text: str) -> float:
    """Seconds in ``text``; parts add up (``1h30m`` is 5400)."""
    compact = text.replace(" ", "").lower()
    parts = _PART.findall(compact)
    if not compact or "".join(n + u for n, u in parts) != compact:
        raise DurationError(f'expected a duration such as "30s", "10m" or "1h", got {text!r}')
    seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
    if seconds <= 0:
        raise DurationError(f"expected a duration above zero, got {text!r}")
    return seconds


def parse_timedelta(text: str) -> timedelta:
    """``parse_duration`` as a timedelta, for options used in date arithmetic: a duration
    longer than a timedelta holds is a DurationTooLongError, not an OverflowError.
    (Config durations keep their own, smaller cap in the checker.)"""
    seconds = parse_duration(text)
    if not seconds <= _MAX_S:
        raise DurationTooLongError(f"expected a duration of at most {_MAX_DAYS}d, got {text!r}")
    return timedelta(seconds=seconds)


def format_duration(seconds: float) -> str:
    """The shortest readable form: 90 → ``1m30s``, 0.5 → ``500ms``."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    out = []
    rest = round(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, rest = divmod(rest, size)
        if count:
            out.append(f"{count}{unit}")
    return "".join(out)
