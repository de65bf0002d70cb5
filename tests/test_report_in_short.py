"""The report's one-sentence summary: grouped by the cards' colours, picks repeated."""

from __future__ import annotations

from pipeline.report.context import Recommendation, Verdict
from pipeline.report.in_short import in_short


def _card(provider: str, tone: str, status: str) -> Verdict:
    return Verdict(provider, f"{provider}-m", tone, status, "", "", "", [], [])


def test_cards_are_grouped_most_urgent_first_and_the_picks_follow() -> None:
    cards = [
        _card("nova", "ok", "Stable"),
        _card("kestrel", "bad", "Major degradation"),
        _card("sable", "warn", "Recovering"),
        _card("young", "unknown", "Not enough data yet"),
    ]
    picks = [Recommendation("short", "nova", "..."), Recommendation("long", "nova", "...")]
    assert in_short(cards, picks) == (
        "Needs attention: kestrel (major degradation). Watch: sable (recovering). "
        "Cannot tell yet: young (not enough data yet). Stable: nova. "
        "Send traffic to nova for short and long context."
    )


def test_split_and_missing_picks_are_said_as_such() -> None:
    cards = [_card("a", "ok", "Stable"), _card("b", "ok", "Stable")]
    split = [
        Recommendation("short", "a", "..."),
        Recommendation("long", None, "...", tied=("a", "b")),
    ]
    assert in_short(cards, split) == (
        "Stable: a, b. Send traffic to a for short context; no clear pick for long context."
    )
    none = [Recommendation("short", None, "..."), Recommendation("long", None, "...")]
    assert in_short(cards, none) == "Stable: a, b. No clear pick for short and long context."
    assert in_short(cards, []) == "Stable: a, b."


def test_no_providers_no_sentence() -> None:
    assert in_short([], [Recommendation("short", None, "...")]) == ""
