"""Multi-step integer arithmetic: ``(a × b + c) mod m`` or ``a × b − c × d``; exact integer answer.

Digits per operand come from the seed (3, 5 or 7), the fixed strata of the quality design.
"""

from __future__ import annotations

import random
import re

from probes.tasks.base import Item, Score, header_line, verdicts

NAME = "arithmetic"
VERSION = 1
KIND = "short"
DEFAULT_SIZE = 120
DIGITS = (3, 5, 7)

_INT = re.compile(r"-?\d+")


def item(
    seed: int, size_tokens: int, chars_per_token: float = 4.0, *, nonce: str | None = None
) -> Item:
    """One question; ``size_tokens`` is recorded but a short task does not grow with it."""
    head, cpt = header_line(NAME, VERSION, seed, size_tokens, chars_per_token, nonce)
    rng = random.Random(seed)
    digits = DIGITS[rng.randrange(len(DIGITS))]

    def operand() -> int:
        return rng.randint(10 ** (digits - 1), 10**digits - 1)

    a, b, c, d = operand(), operand(), operand(), operand()
    if rng.random() < 0.5:
        m = rng.randint(97, 9_973)
        question = f"Compute ({a} × {b} + {c}) mod {m}."
        answer = (a * b + c) % m
        form = "mul_add_mod"
    else:
        question = f"Compute {a} × {b} − {c} × {d}."
        answer = a * b - c * d
        form = "mul_sub_mul"
    prompt = (
        f"{head}\n{question}\n"
        "Work it out, then give the integer on a final line of the form `ANSWER: <integer>` "
        "(digits only, no separators)."
    )
    return Item(prompt, str(answer), {"digits": digits, "form": form, "cpt": cpt})


def _strict(expected: str, value: str) -> bool | None:
    if not re.fullmatch(r"-?\d+", value):
        return None
    return value == expected


def _lenient(expected: str, value: str) -> bool | None:
    numbers = _INT.findall(value.replace(",", "").replace("_", "").replace("−", "-"))
    if not numbers:
        return None
    return numbers[-1] == expected


def score(item: Item, text: str) -> Score:
    return verdicts(text, lambda v: _strict(item.expected, v), lambda v: _lenient(item.expected, v))
