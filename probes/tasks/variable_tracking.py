"""Variable tracking across a long haystack (RULER VT): a chain of 4–8 assignments
``VAR B = VAR A`` from one value, plus a distractor chain with another value. The answer is
every variable that holds the asked value. The chain starts at depth 10%, 50% or 90%
(``seed % 3``) and runs in order to the end of the haystack."""

from __future__ import annotations

import random
import re
import string

from probes.tasks.base import Item, Score, header_line, verdicts
from probes.tasks.haystack import DEPTHS, at_depth, budget_chars, fill

NAME = "variable_tracking"
VERSION = 1
KIND = "long"
DEFAULT_SIZE = 8_000
_NAME = re.compile(r"\b[A-Z]{5}\b")


def _chain(
    rng: random.Random, value: int, hops: int, taken: set[str]
) -> tuple[list[str], list[str]]:
    names: list[str] = []
    while len(names) < hops + 1:
        name = "".join(rng.choice(string.ascii_uppercase) for _ in range(5))
        if name not in taken:
            taken.add(name)
            names.append(name)
    lines = [f"VAR {names[0]} = {value}."]
    lines += [f"VAR {names[i]} = VAR {names[i - 1]}." for i in range(1, len(names))]
    return names, lines


def item(
    seed: int, size_tokens: int, chars_per_token: float = 4.0, *, nonce: str | None = None
) -> Item:
    head, cpt = header_line(NAME, VERSION, seed, size_tokens, chars_per_token, nonce)
    rng = random.Random(seed)
    depth = DEPTHS[seed % len(DEPTHS)]
    hops = rng.randint(4, 8)
    value, other = rng.sample(range(10_000, 99_999), 2)
    taken: set[str] = set()
    names, lines = _chain(rng, value, hops, taken)
    _, decoy = _chain(rng, other, hops, taken)
    question = (
        f"Find every variable that is assigned the value {value}, directly or through other "
        "variables. Give their names separated by spaces on a final line of the form "
        "`ANSWER: <names>`."
    )
    fixed = head + "\n" + " ".join(lines + decoy) + "\n\n" + question
    text = fill(rng, budget_chars(size_tokens, cpt, fixed))
    start = at_depth(len(text), depth)
    slots = sorted(rng.randint(start, len(text)) for _ in lines)
    decoy_slots = sorted(rng.randint(0, len(text)) for _ in decoy)
    inserts = sorted(
        [(s, 1, i, line) for i, (s, line) in enumerate(zip(slots, lines, strict=True))]
        + [(s, 0, i, line) for i, (s, line) in enumerate(zip(decoy_slots, decoy, strict=True))],
        reverse=True,
    )
    # Insert from the back so earlier slot indices stay valid; chain order is preserved.
    for slot, _, _, line in inserts:
        text.insert(slot, line)
    prompt = f"{head}\n{' '.join(text)}\n\n{question}"
    expected = " ".join(sorted(names))
    return Item(prompt, expected, {"hops": hops, "depth": depth, "cpt": cpt})


def _strict(expected: str, value: str) -> bool | None:
    tokens = re.split(r"[\s,]+", value.strip())
    if not tokens or not all(re.fullmatch(r"[A-Z]{5}", t) for t in tokens):
        return None
    return set(tokens) == set(expected.split())


def _lenient(expected: str, value: str) -> bool | None:
    found = set(_NAME.findall(value.replace("VAR ", "")))
    if not found:
        return None
    return found == set(expected.split())


def score(item: Item, text: str) -> Score:
    return verdicts(text, lambda v: _strict(item.expected, v), lambda v: _lenient(item.expected, v))
