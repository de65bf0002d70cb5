"""Task families: seeded, versioned probe items with a known answer, and their scorers.

``FAMILIES`` maps a family name to a module with ``NAME``, ``VERSION``, ``KIND``,
``DEFAULT_SIZE``, ``item(seed, size_tokens, chars_per_token=4.0, *, nonce=None) -> Item`` and
``score(item, text) -> Score``. ``rebuild(prompt)`` regenerates an item from the header line
that leads every prompt (the simulator answers with it).
"""

from __future__ import annotations

import re

from probes.tasks import (
    arithmetic,
    counting,
    fixed_prompt,
    instructions,
    json_extract,
    kv_lookup,
    multi_needle,
    sorting,
    variable_tracking,
)
from probes.tasks.base import Item, Score, TaskFamily, Verdict, parse_header

__all__ = [
    "CONTEXT_LADDER",
    "FAMILIES",
    "Item",
    "Score",
    "TaskFamily",
    "Verdict",
    "ladder",
    "parse_context",
    "rebuild",
]

FAMILIES: dict[str, TaskFamily] = {
    family.NAME: family
    for family in (
        arithmetic,
        sorting,
        counting,
        json_extract,
        instructions,
        kv_lookup,
        multi_needle,
        variable_tracking,
        fixed_prompt,
    )
}

CONTEXT_LADDER = (1_000, 8_000, 32_000, 128_000)


def rebuild(prompt: str) -> Item | None:
    """The item a prompt was built from, or None if its header is missing or unknown.

    The rebuilt prompt equals ``prompt`` when the generator version matches."""
    header = parse_header(prompt)
    if header is None:
        return None
    family = FAMILIES.get(header.family)
    if family is None or header.version != family.VERSION:
        return None
    return family.item(header.seed, header.size, header.cpt, nonce=header.nonce)


def ladder(max_context: int) -> list[int]:
    """Context sizes to probe for a model: the fixed ladder up to its maximum, plus the max
    (less a margin for the answer) when it lies beyond the last rung."""
    sizes = [size for size in CONTEXT_LADDER if size <= max_context]
    top = int(max_context * 0.9)
    if top > CONTEXT_LADDER[-1]:
        sizes.append(top)
    return sizes


_MAX_CONTEXT = 1e12  # tokens: far beyond any model, yet a size an int and a float both hold


def parse_context(value: str | int) -> int:
    """``"32k"`` → 32000, ``"1m"`` → 1000000, ``"2048"`` or 2048 → 2048 (k = 1000).

    Raises ValueError for anything else, including zero, negatives and booleans."""
    if isinstance(value, bool):
        raise ValueError("not a token count")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("must be positive")
        if value >= _MAX_CONTEXT:
            raise ValueError(f"larger than any model's context ({_MAX_CONTEXT:.0e} tokens)")
        return value
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([km]?)", value.strip().lower())
    if not match:
        raise ValueError("not a token count")
    tokens = float(match[1]) * {"": 1, "k": 1_000, "m": 1_000_000}[match[2]]
    if not tokens < _MAX_CONTEXT:  # also infinity: 300 digits overflow a float
        raise ValueError(f"larger than any model's context ({_MAX_CONTEXT:.0e} tokens)")
    if int(tokens) <= 0:
        raise ValueError("must be positive")
    return int(tokens)
