"""What the simulated model says: the right answer, rebuilt from the prompt, then degraded.

Task prompts lead with the header line of ``probes.tasks``; ``probes.tasks.rebuild``
regenerates the item and so its expected answer. The scenario then decides, per
request, whether the reply is correct, wrong (a plausible near miss), a format slip
(right value but no ``ANSWER:`` line), or carries wrong-script characters. Prompts
without a header get plausible filler text.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from probes.tasks import Item, rebuild
from probes.tasks.base import parse_header

__all__ = ["QUALITY_MODES", "Answer", "compose", "family_of"]

# Values of the ``x-sim-quality`` request header.
QUALITY_MODES = ("correct", "wrong", "format_slip", "wrong_script")

_FILLER = (
    "The short answer depends on the details you care about most.",
    "In practice, most teams start with the simplest option and measure.",
    "There are a few trade-offs worth keeping in mind here.",
    "First, consider how often the data changes and who reads it.",
    "Second, a small experiment usually settles the question faster than debate.",
    "Finally, write down what you expect before you look at the results.",
)
_THOUGHTS = (
    "Let me read the question carefully.",
    "I need to keep track of every value mentioned.",
    "Working through it step by step.",
    "Checking the intermediate result once more.",
    "That looks consistent, so I can answer.",
)
_FOREIGN = ("计算完成。", "Ответ готов.", "答えは次の通り。", "정답입니다.")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    reasoning: str
    family: str | None
    outcome: str  # correct | wrong | format_slip | unknown
    wrong_script: bool


def family_of(prompt: str) -> str | None:
    """The task family named in the prompt's header line, if any."""
    header = parse_header(prompt)
    return header.family if header else None


def compose(
    prompt: str,
    *,
    p_wrong: float,
    p_wrong_script: float,
    reasoning_sentences: int,
    rng: random.Random,
    force: str | None = None,
) -> Answer:
    """Answer ``prompt``; ``force`` (a QUALITY_MODES value) overrides the dice."""
    item = rebuild(prompt) if prompt else None
    reasoning = " ".join(rng.choice(_THOUGHTS) for _ in range(reasoning_sentences))
    family = family_of(prompt)
    wrong_script = force == "wrong_script" or (force is None and rng.random() < p_wrong_script)
    if item is None:
        text = " ".join(rng.choice(_FILLER) for _ in range(rng.randint(2, 5)))
        if wrong_script:
            text = f"{text} {rng.choice(_FOREIGN)}"
        return Answer(text, reasoning, family, "unknown", wrong_script)
    outcome = force if force in ("correct", "wrong", "format_slip") else None
    if outcome is None:
        roll = rng.random()
        outcome = (
            "correct" if roll >= p_wrong else ("format_slip" if roll < 0.15 * p_wrong else "wrong")
        )
    text = _render(item, family, outcome, rng)
    if wrong_script:
        text = f"{rng.choice(_FOREIGN)}\n{text}"
    return Answer(text, reasoning, family, outcome, wrong_script)


def _render(item: Item, family: str | None, outcome: str, rng: random.Random) -> str:
    if outcome == "format_slip":
        return f"I believe the answer is {item.expected}, though I may be mistaken."
    if outcome == "wrong":
        return f"ANSWER: {near_miss(item.expected, family, rng)}"
    return item.ideal_response()


def near_miss(expected: str, family: str | None, rng: random.Random) -> str:
    """A plausible wrong value: one digit or letter changed, or the last word dropped."""
    if family == "instructions" and " " in expected:
        return expected.rsplit(" ", 1)[0]
    for pattern, alphabet in ((_DIGIT, "0123456789"), (_LETTER, "abcdefghijklmnopqrstuvwxyz")):
        spots = [m.start() for m in pattern.finditer(expected)]
        if spots:
            at = rng.choice(spots)
            old = expected[at]
            new = rng.choice([c for c in alphabet if c != old.lower()])
            new = new.upper() if old.isupper() else new
            return expected[:at] + new + expected[at + 1 :]
    return expected + "?"
