"""Count how often a letter occurs in a seeded string (length 40 or 120); exact integer."""

from __future__ import annotations

import random
import re
import string

from probes.tasks.base import Item, Score, header_line, verdicts

NAME = "counting"
VERSION = 1
KIND = "short"
DEFAULT_SIZE = 120
LENGTHS = (40, 120)


def item(
    seed: int, size_tokens: int, chars_per_token: float = 4.0, *, nonce: str | None = None
) -> Item:
    head, cpt = header_line(NAME, VERSION, seed, size_tokens, chars_per_token, nonce)
    rng = random.Random(seed)
    length = LENGTHS[rng.randrange(len(LENGTHS))]
    target = rng.choice(string.ascii_lowercase)
    others = [c for c in string.ascii_lowercase if c != target]
    # Target frequency between 5% and 20% so answers are neither 0 nor trivial.
    share = rng.uniform(0.05, 0.2)
    text = "".join(target if rng.random() < share else rng.choice(others) for _ in range(length))
    expected = text.count(target)
    prompt = (
        f"{head}\nHow many times does the letter '{target}' occur in this string?\n"
        f"{text}\n"
        "Give the count on a final line of the form `ANSWER: <integer>`."
    )
    return Item(prompt, str(expected), {"length": length, "letter": target, "cpt": cpt})


def _strict(expected: str, value: str) -> bool | None:
    if not re.fullmatch(r"\d+", value):
        return None
    return value == expected


def _lenient(expected: str, value: str) -> bool | None:
    numbers = re.findall(r"\d+", value)
    if not numbers:
        return None
    return numbers[-1] == expected


def score(item: Item, text: str) -> Score:
    return verdicts(text, lambda v: _strict(item.expected, v), lambda v: _lenient(item.expected, v))
