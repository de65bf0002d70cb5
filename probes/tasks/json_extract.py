"""Extract a seeded record from prose into a JSON object (4 or 8 fields, str/int/bool values)."""

from __future__ import annotations

import json
import random
from typing import Any

from probes.tasks.base import Item, Score, header_line, verdicts

NAME = "json_extract"
VERSION = 1
KIND = "short"
DEFAULT_SIZE = 250
FIELD_COUNTS = (4, 8)

_WORDS = (
    "amber", "basalt", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo",
    "juniper", "kestrel", "lagoon", "meadow", "nimbus", "orchid", "prairie", "quartz", "raven",
)  # fmt: skip
_KEYS = (
    "order_id", "customer", "city", "quantity", "priority", "express", "warehouse",
    "weight_kg", "gift_wrap", "carrier", "floor", "insured",
)  # fmt: skip


def _value(rng: random.Random, kind: int) -> Any:
    if kind == 0:
        return f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}"
    if kind == 1:
        return rng.randint(1, 9_999)
    return rng.random() < 0.5


def _phrase(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return f"The {key} flag is {'set' if value else 'not set'}."
    return f"Its {key} is {value}."


def item(
    seed: int, size_tokens: int, chars_per_token: float = 4.0, *, nonce: str | None = None
) -> Item:
    head, cpt = header_line(NAME, VERSION, seed, size_tokens, chars_per_token, nonce)
    rng = random.Random(seed)
    count = FIELD_COUNTS[rng.randrange(len(FIELD_COUNTS))]
    keys = rng.sample(_KEYS, count)
    record = {key: _value(rng, rng.randrange(3)) for key in keys}
    prose = " ".join(_phrase(key, value) for key, value in record.items())
    prompt = (
        f"{head}\nA shipment is described as follows. {prose}\n"
        f"Return a JSON object with exactly the keys {', '.join(keys)}: strings as strings, "
        "numbers as numbers, flags as true/false. Put it on one final line of the form "
        "`ANSWER: {...}`."
    )
    expected = json.dumps(record, sort_keys=True, separators=(",", ":"))
    return Item(prompt, expected, {"fields": count, "cpt": cpt})


def _parse_object(value: str) -> dict[str, Any] | None:
    start, end = value.find("{"), value.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        parsed = json.loads(value[start : end + 1])
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _strict(expected: str, value: str) -> bool | None:
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    return parsed == json.loads(expected)


def _lenient(expected: str, value: str) -> bool | None:
    parsed = _parse_object(value)
    if parsed is None:
        return None

    def norm(obj: dict[str, Any]) -> dict[str, str]:
        return {str(k).strip().lower(): str(v).strip().lower() for k, v in obj.items()}

    return norm(parsed) == norm(json.loads(expected))


def score(item: Item, text: str) -> Score:
    return verdicts(text, lambda v: _strict(item.expected, v), lambda v: _lenient(item.expected, v))
