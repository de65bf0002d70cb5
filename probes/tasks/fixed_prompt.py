"""The same short prompt every time (after the nonce line), to record the answer distribution.

A shift in the distribution of answers to an unchanged prompt signals a changed model or
serving stack (B3IT / MET style). Any integer 1–10 is ``correct``; ``expected`` is just a
valid example; the analysis looks at the distribution of ``extracted``."""

from __future__ import annotations

import re

from probes.tasks.base import Item, Score, header_line, verdicts

NAME = "fixed_prompt"
VERSION = 1
KIND = "distribution"
DEFAULT_SIZE = 60
PROMPT = (
    "Pick a whole number from 1 to 10 that you find most fitting for a calm afternoon. "
    "Reply with a final line of the form `ANSWER: <number>` and nothing else."
)


def item(
    seed: int, size_tokens: int, chars_per_token: float = 4.0, *, nonce: str | None = None
) -> Item:
    head, cpt = header_line(NAME, VERSION, seed, size_tokens, chars_per_token, nonce)
    return Item(f"{head}\n{PROMPT}", "7", {"valid": "1-10", "cpt": cpt})


def _check(value: str, *, strict: bool) -> bool | None:
    if strict:
        if not re.fullmatch(r"\d+", value):
            return None
        number = int(value)
    else:
        found = re.findall(r"\d+", value)
        if not found:
            return None
        number = int(found[-1])
    return 1 <= number <= 10


def score(item: Item, text: str) -> Score:
    del item  # every item is the same question
    return verdicts(text, lambda v: _check(v, strict=True), lambda v: _check(v, strict=False))
