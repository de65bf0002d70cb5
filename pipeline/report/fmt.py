"""Number and time formatting for the report: one place, so every table reads alike."""

from __future__ import annotations

import math
from datetime import date, datetime

__all__ = ["age", "count", "day", "days", "known", "ms", "pct", "points", "rel", "stamp"]

DASH = "–"


def known(value: float | None) -> bool:
    """A number that can be shown: not None and not NaN."""
    return value is not None and not math.isnan(value)


def ms(value: float | None) -> str:
    """A latency: ``840 ms`` or ``2.31 s``."""
    if value is None or not known(value):
        return DASH
    if value >= 1000:
        return f"{value / 1000:.2f} s"
    return f"{value:.0f} ms"


def pct(value: float | None, digits: int = 1) -> str:
    """A share in [0, 1] as a percentage."""
    if value is None or not known(value):
        return DASH
    return f"{value * 100:.{digits}f}\u00a0%"


def rel(value: float | None) -> str:
    """A relative change (after/before - 1) as a signed percentage; one that rounds to
    zero has no sign (a stable phase's interval read "-0 % to +0 %")."""
    if value is None or not known(value):
        return DASH
    if round(value * 100) == 0:
        return "0\u00a0%"
    return f"{value * 100:+.0f}\u00a0%"


def rel_interval(lo: float, hi: float) -> str:
    """An interval of relative changes: "+12 % to +32 %", or "within ±0.5 %" when both
    ends round to zero (a stable phase's interval read "0 % to 0 %", as if it had no
    width at all)."""
    if round(lo * 100) == 0 and round(hi * 100) == 0:
        return "within \u00b10.5\u00a0%"
    return f"{rel(lo)} to {rel(hi)}"


def points(value: float | None) -> str:
    """A difference of two shares, in percentage points."""
    if value is None or not known(value):
        return DASH
    return f"{value * 100:+.1f}\u00a0points"


def days(count: int) -> str:
    """``1 day``, ``5 days``."""
    return f"{count} day" if count == 1 else f"{count} days"


def count(n: int, noun: str) -> str:
    """``1 probe``, ``3 probes``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def age(since: datetime, now: datetime) -> str:
    """How long ago ``since`` was, in whole days; ``under a day`` rather than ``0 days``."""
    elapsed = (now - since).days
    return "under a day" if elapsed < 1 else days(elapsed)


def day(value: date | datetime | None) -> str:
    if value is None:
        return DASH
    return value.strftime("%Y-%m-%d")


def stamp(value: datetime | None) -> str:
    if value is None:
        return DASH
    return value.strftime("%Y-%m-%d %H:%M UTC")
