"""Multi-key needle in a haystack with prefix-sharing distractors (RULER MK-NIAH style).

Needles read "The special magic number for <key> is <7 digits>."; 4–8 distractor keys share
the target key's prefix. The target sits at depth 10%, 50% or 90% (``seed % 3``)."""

from __future__ import annotations

import random
import re

from probes.tasks.base import Item, Score, header_line, verdicts
from probes.tasks.haystack import DEPTHS, at_depth, budget_chars, fill

NAME = "multi_needle"
VERSION = 1
KIND = "long"
DEFAULT_SIZE = 8_000
_ADJ = ("crimson", "silent", "golden", "hollow", "frozen", "amber", "restless", "velvet")
_NOUN = ("falcon", "harbor", "lantern", "meadow", "glacier", "compass", "orchard", "beacon")


def _needle(key: str, number: str) -> str:
    return f"The special magic number for {key} is {number}."


def item(
    seed: int, size_tokens: int, chars_per_token: float = 4.0, *, nonce: str | None = None
) -> Item:
    head, cpt = header_line(NAME, VERSION, seed, size_tokens, chars_per_token, nonce)
    rng = random.Random(seed)
    depth = DEPTHS[seed % len(DEPTHS)]
    prefix = f"{rng.choice(_ADJ)}-{rng.choice(_NOUN)}-"
    keys = rng.sample(range(1000, 10000), rng.randint(5, 9))
    names = [f"{prefix}{k}" for k in keys]
    numbers = [str(rng.randint(1_000_000, 9_999_999)) for _ in names]
    target, answer = names[0], numbers[0]
    question = (
        f"What is the special magic number for {target}? "
        "Give it on a final line of the form `ANSWER: <number>`."
    )
    needles = [_needle(n, v) for n, v in zip(names, numbers, strict=True)]
    fixed = head + "\n" + " ".join(needles) + "\n\n" + question
    text = fill(rng, budget_chars(size_tokens, cpt, fixed))
    for needle in needles[1:]:
        text.insert(rng.randrange(len(text) + 1), needle)
    text.insert(at_depth(len(text), depth), needles[0])
    prompt = f"{head}\n{' '.join(text)}\n\n{question}"
    meta = {"distractors": len(names) - 1, "depth": depth, "cpt": cpt}
    return Item(prompt, answer, meta)


def _strict(expected: str, value: str) -> bool | None:
    if not re.fullmatch(r"\d+", value):
        return None
    return value == expected


def _lenient(expected: str, value: str) -> bool | None:
    numbers = re.findall(r"\d{5,}", value.replace(",", ""))
    if not numbers:
        return None
    return numbers[-1] == expected


def score(item: Item, text: str) -> Score:
    return verdicts(text, lambda v: _strict(item.expected, v), lambda v: _lenient(item.expected, v))
