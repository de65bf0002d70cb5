"""Verifiable instruction constraints on a short sentence (exact word count, upper case,
no commas, a required last word). ``expected`` is one sentence that satisfies them all;
scoring checks the constraints, not equality."""

from __future__ import annotations

import random
import re

from probes.tasks.base import Item, Score, header_line, verdicts

NAME = "instructions"
VERSION = 1
KIND = "short"
DEFAULT_SIZE = 120

_TOPICS = ("the sea", "a mountain", "autumn", "a library", "rain", "a bridge", "coffee", "stars")
_WORDS = (
    "quiet", "waves", "roll", "under", "silver", "light", "every", "morning", "brings", "calm",
    "tall", "stone", "paths", "wind", "through", "old", "pages", "slow", "warm", "bright",
)  # fmt: skip
_LAST = ("ZEBRA", "LANTERN", "COPPER", "VELVET", "ORBIT", "MAPLE")


def item(
    seed: int, size_tokens: int, chars_per_token: float = 4.0, *, nonce: str | None = None
) -> Item:
    head, cpt = header_line(NAME, VERSION, seed, size_tokens, chars_per_token, nonce)
    rng = random.Random(seed)
    words = rng.randint(5, 12)
    last = rng.choice(_LAST)
    topic = rng.choice(_TOPICS)
    upper = rng.random() < 0.5
    rules = [f"exactly {words} words", f"the last word is {last}", "no commas"]
    if upper:
        rules.append("every letter is upper case")
    prompt = (
        f"{head}\nWrite one sentence about {topic} with these rules: {'; '.join(rules)}. "
        "No punctuation other than an optional final period. Put the sentence on a final line "
        "of the form `ANSWER: <sentence>`."
    )
    body = [rng.choice(_WORDS) for _ in range(words - 1)] + [last]
    example = " ".join(body)
    if upper:
        example = example.upper()
    meta = {"words": words, "last": last, "upper": upper, "cpt": cpt}
    return Item(prompt, example, meta)


def check(meta: dict[str, object], value: str) -> bool:
    """True when the sentence satisfies every constraint in ``meta``."""
    sentence = value.strip().removesuffix(".")
    tokens = sentence.split()
    if len(tokens) != meta["words"] or "," in sentence:
        return False
    if tokens[-1] != meta["last"]:
        return False
    return not (meta["upper"] and sentence != sentence.upper())


def _lenient(meta: dict[str, object], value: str) -> bool | None:
    line = value.strip().splitlines()[0] if value.strip() else ""
    line = re.sub(r"^[\"'“”]+|[\"'“”]+$", "", line.strip())
    return check(meta, line) if line else None


def score(item: Item, text: str) -> Score:
    return verdicts(text, lambda v: check(item.meta, v), lambda v: _lenient(item.meta, v))
