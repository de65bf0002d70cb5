"""The report's first line: who needs attention and where to send traffic, in one sentence.

A two-minute reader should not have to read three cards and two boxes to learn whether to
act. The line says nothing the cards and picks below do not: it groups the cards by their
colour (the same tone that colours them) and repeats the picks.
"""

from __future__ import annotations

from pipeline.report.context import Recommendation, Verdict

__all__ = ["in_short"]

# tone -> how the line groups it, most urgent first
_GROUPS = (
    ("bad", "Needs attention"),
    ("warn", "Watch"),
    ("unknown", "Cannot tell yet"),
    ("ok", "Stable"),
)


def in_short(verdicts: list[Verdict], picks: list[Recommendation]) -> str:
    """One sentence over every card and pick; "" for a report without providers."""
    if not verdicts:
        return ""
    parts = []
    for tone, heading in _GROUPS:
        cards = [v for v in verdicts if v.tone == tone]
        if not cards:
            continue
        if tone == "ok":
            parts.append(f"{heading}: {', '.join(v.provider for v in cards)}.")
        else:
            named = ", ".join(f"{v.provider} ({v.status.lower()})" for v in cards)
            parts.append(f"{heading}: {named}.")
    return " ".join([*parts, _traffic(picks)]).strip()


def _traffic(picks: list[Recommendation]) -> str:
    """The picks by context class, one provider named once for all the classes it wins."""
    chosen: dict[str, list[str]] = {}
    unclear = [p.context_class for p in picks if p.provider is None]
    for pick in picks:
        if pick.provider is not None:
            chosen.setdefault(pick.provider, []).append(pick.context_class)
    said = [f"{p} for {' and '.join(classes)} context" for p, classes in chosen.items()]
    if unclear:
        said.append(f"no clear pick for {' and '.join(unclear)} context")
    if not said:
        return ""
    return f"Send traffic to {'; '.join(said)}." if chosen else f"{said[0].capitalize()}."
