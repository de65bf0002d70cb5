"""UUID key→value retrieval from a JSON object sized to the target context (Lost in the
Middle style). The asked key sits at depth 10%, 50% or 90% (``seed % 3``)."""

from __future__ import annotations

import json
import random
import re

from probes.tasks.base import Item, Score, header_line, verdicts
from probes.tasks.haystack import DEPTHS, at_depth, budget_chars, random_uuid

NAME = "kv_lookup"
VERSION = 1
KIND = "long"
DEFAULT_SIZE = 8_000
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PAIR_CHARS = 2 * 36 + 6  # "key": "value", plus separators


def item(
    seed: int, size_tokens: int, chars_per_token: float = 4.0, *, nonce: str | None = None
) -> Item:
    head, cpt = header_line(NAME, VERSION, seed, size_tokens, chars_per_token, nonce)
    rng = random.Random(seed)
    depth = DEPTHS[seed % len(DEPTHS)]
    question_template = (
        'Above is a JSON object of key-value pairs. What is the value for the key "{key}"? '
        "Give it on a final line of the form `ANSWER: <value>`."
    )
    fixed = head + "\n" + question_template.format(key="x" * 36) + "\n\n"
    pairs = max(budget_chars(size_tokens, cpt, fixed) // _PAIR_CHARS, 2)
    data = [(random_uuid(rng), random_uuid(rng)) for _ in range(pairs)]
    target = at_depth(pairs - 1, depth)
    key, value = data[target]
    blob = json.dumps(dict(data), indent=None, separators=(", ", ": "))
    prompt = f"{head}\n{blob}\n\n{question_template.format(key=key)}"
    return Item(prompt, value, {"pairs": pairs, "depth": depth, "cpt": cpt})


def _strict(expected: str, value: str) -> bool | None:
    if not _UUID.fullmatch(value.strip().lower()):
        return None
    return value.strip().lower() == expected


def _lenient(expected: str, value: str) -> bool | None:
    found = _UUID.findall(value.lower())
    if not found:
        return None
    return found[-1] == expected


def score(item: Item, text: str) -> Score:
    return verdicts(text, lambda v: _strict(item.expected, v), lambda v: _lenient(item.expected, v))
