"""How wide a name is drawn, counted in Latin letters, so a chart can fit it.

Chart layout measures text in DejaVu Sans, which has no CJK glyphs, and the browser
draws the names from its own fonts: an East Asian wide or fullwidth character (Unicode
East_Asian_Width W or F) is about one em wide there, nearly twice a Latin letter (about
0.55 em). Counting characters let a Chinese or Japanese name run past the chart's edge
or into the next panel.
"""

from __future__ import annotations

import unicodedata

__all__ = ["ROW_LABEL", "WIDE", "fit", "letters"]

WIDE = 1.8  # a wide character, in Latin letters: 1 em against about 0.55 em
# A provider's name left of its row of a chart, in the 1.1 to 1.3 inch left margin
# beside the tick labels, at 8 to 8.5 pt.
ROW_LABEL = 12


def _width(char: str) -> float:
    return WIDE if unicodedata.east_asian_width(char) in ("W", "F") else 1.0


def letters(text: str) -> float:
    """How many Latin letters ``text`` is as wide as."""
    return sum(_width(c) for c in text)


def fit(text: str, room: float) -> str:
    """``text`` cut (with "…") to at most ``room`` Latin letters' width."""
    if letters(text) <= room:
        return text
    kept, used = [], 1.0  # the ellipsis
    for char in text:
        used += _width(char)
        if used > room:
            break
        kept.append(char)
    return "".join(kept) + "…"
