"""Sort seeded integers ascending and answer with a JSON array (length 8, 16 or 32)."""

from __future__ import annotations

import json
import random
import re

from probes.tasks.base import Item, Score, header_line, verdicts

NAME = "sorting"
VERSION = 1
KIND = "short"
DEFAULT_SIZE = 200
LENGTHS = (8, 16, 32)


def item(
    seed: int, size_tokens: int, chars_per_token: float = 4.0, *, nonce: str | None = None
) -> Item:
    head, cpt = header_line(NAME, VERSION, seed, size_tokens, chars_per_token, nonce)
    rng = random.Random(seed)
    length = LENGTHS[rng.randrange(len(LENGTHS))]
    numbers = [rng.randint(-999, 9_999) for _ in range(length)]
    prompt = (
        f"{head}\nSort these integers in ascending order: {', '.join(map(str, numbers))}\n"
        "Give the sorted list as a JSON array on a final line of the form "
        "`ANSWER: [ ... ]`."
    )
    expected = json.dumps(sorted(numbers), separators=(",", ":"))
    return Item(prompt, expected, {"length": length, "cpt": cpt})


def _strict(expected: str, value: str) -> bool | None:
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    if not isinstance(parsed, list):
        return None
    return parsed == json.loads(expected)


def _lenient(expected: str, value: str) -> bool | None:
    numbers = [int(n) for n in re.findall(r"-?\d+", value)]
    if not numbers:
        return None
    return numbers == json.loads(expected)


def score(item: Item, text: str) -> Score:
    return verdicts(text, lambda v: _strict(item.expected, v), lambda v: _lenient(item.expected, v))
