"""The upstream-mix part of a response_metadata_changed sign, as the report's words.

The analysis writes the sign's detail as "; "-separated parts, each opening with its kind
(``pipeline.analysis.metadata_sign``); the upstream mix's part reads
"upstream_provider served by A 80 %, ... (N calls on D days) -> B 95 %, ... (M calls on
the last R days) (p=0.001)". Its words say what changed better than a token count, so the
report shows them as the sign's effect; the p-value stays in the hover detail (q-values
go to the verdict's details).

D and R count only the days with calls (``upstream_mix._counts``): one day with calls in
a three-day window read "on the last 1 days", as if the provider had been probed on the
last day and nothing before it. The detail ends with the windows it compared ("(windows:
the last 3 days against the 28 before)"), so the report says both numbers: "on 1 day with
probes in the last 3"; a detail stored before that clause existed gives its windows by
the sign's row.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from pipeline.report import fmt

__all__ = ["mix_windows", "served_by"]

_PREFIX = (
    "upstream_provider "  # pipeline.analysis.upstream_mix.COLUMN (the report reads tables only)
)
_BEFORE = re.compile(r"\((?P<calls>[\d,]+ calls?) on (?P<days>\d+) days?\)(?= -> )")
_RECENT = re.compile(r"\((?P<calls>[\d,]+ calls?) on the last (?P<days>\d+) days?\)")
_WINDOWS = re.compile(
    r" ?\(windows: the last (?P<recent>\d+) days? against the (?P<before>\d+) before\)"
)


def _days(start: Any, end: Any) -> int | None:
    if start is None or end is None:
        return None
    return round((end - start) / timedelta(days=1))


def _span(calls: str, days: int, window: int | None, *, recent: bool) -> str:
    """ "(N calls on each of the last 3 days)", "(N calls on 1 day with probes in the last
    3)", "(N calls on 20 days with probes in the 28 before)"; without a known window, the
    count alone, said to be of days with probes."""
    probed = f"{fmt.days(days)} with probes"
    if window is None:
        return f"({calls} on {probed})"
    if days >= window:
        whole = f"the last {fmt.days(window)}" if recent else f"the {fmt.days(window)} before"
        return f"({calls} on each of {whole})"
    where = f"the last {window}" if recent else f"the {window} before"
    return f"({calls} on {probed} in {where})"


def mix_windows(detail: str, row: dict[str, Any]) -> str:
    """``detail`` with each window's count of days with calls said against the window's
    length: the detail's own windows clause (then dropped from the words), else the
    sign's ``row`` (window and baseline bounds)."""
    recent = _days(row.get("window_start"), row.get("window_end"))
    before = _days(row.get("baseline_start"), row.get("baseline_end"))
    if stated := _WINDOWS.search(detail):
        recent, before = int(stated["recent"]), int(stated["before"])
        detail = _WINDOWS.sub("", detail)
    detail = _BEFORE.sub(lambda m: _span(m["calls"], int(m["days"]), before, recent=False), detail)
    return _RECENT.sub(lambda m: _span(m["calls"], int(m["days"]), recent, recent=True), detail)


def served_by(detail: str, row: dict[str, Any] | None = None) -> str | None:
    """ "served by A 80 % → B 95 % ..." from a metadata sign's detail, or None without one;
    with the sign's ``row``, its days said against its windows (``mix_windows``)."""
    for part in detail.split("; "):
        if part.startswith(_PREFIX + "served by "):
            words = part.removeprefix(_PREFIX).rsplit(" (p=", 1)[0]
            if row is not None:
                words = mix_windows(words, row)
            return words.replace(" -> ", " \u2192 ")
    return None
