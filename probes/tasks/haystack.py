"""Seeded filler prose and sizing for the long-context families.

Filler is fresh per seed (so no prefix cache can match), made of plain English words so
tokenizers behave as on real text. ``fill`` returns sentences totalling about ``chars``
characters; callers insert their needles at chosen depths.
"""

from __future__ import annotations

import random

__all__ = ["DEPTHS", "at_depth", "budget_chars", "fill", "random_uuid"]

DEPTHS = (0.1, 0.5, 0.9)  # where the needle sits, as a share of the haystack; seed % 3 picks

_VOCABULARY = """the a of and to in is was for on that with as by at from it this be are or
which river garden morning window village market winter letter station story mountain
quiet early small old long bright green slow warm cold distant simple open heavy narrow
walked carried painted watched opened followed gathered crossed turned remembered built
farmer teacher sailor baker painter traveller neighbour child clerk miller weaver keeper
road bridge field forest harbor lamp table door stone wall roof cart boat bell clock
under over near beyond along behind across between through around after before during
every each many some few most other another same whole certain usual
"""
_WORDS = _VOCABULARY.split()


def budget_chars(size_tokens: int, cpt: float, fixed: str) -> int:
    """Filler characters left once the fixed parts of the prompt are counted."""
    return max(int(size_tokens * cpt) - len(fixed), 0)


def fill(rng: random.Random, chars: int) -> list[str]:
    """Sentences of filler prose, about ``chars`` characters in all (joined by spaces)."""
    sentences: list[str] = []
    total = 0
    while total < chars:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 14))]
        sentence = " ".join(words).capitalize() + "."
        sentences.append(sentence)
        total += len(sentence) + 1
    return sentences


def at_depth(length: int, depth: float) -> int:
    """Index at which an insertion lands ``depth`` of the way through ``length`` pieces."""
    return min(max(round(length * depth), 0), length)


def random_uuid(rng: random.Random) -> str:
    """A UUID-4-shaped string from the seeded generator (uuid.uuid4 is not seedable)."""
    value = rng.getrandbits(128)
    value = (value & ~(0xF << 76)) | (0x4 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
