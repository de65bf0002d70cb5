"""Shared shapes of every task family: ``Item``, ``Score``, the header line, answer extraction.

Every prompt starts with one header line::

    <32 hex nonce> family=<name> v=<version> seed=<int> size=<tokens> cpt=<chars per token>

The nonce is random per request and is the very first text of the message (no label before
it), so a prefix cache can match nothing past the chat template;
the rest is what ``probes.tasks.rebuild`` needs to regenerate the same item (the simulator
uses it to answer correctly). Models are asked to end with a line ``ANSWER: <value>``.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = [
    "Header",
    "Item",
    "Score",
    "TaskFamily",
    "Verdict",
    "extract_lenient",
    "extract_strict",
    "header_line",
    "parse_header",
    "verdicts",
]

Verdict = Literal["correct", "wrong", "unparseable"]


@dataclass(frozen=True, slots=True)
class Item:
    """One probe question. ``expected`` is a correct answer value (what follows ``ANSWER:``)."""

    prompt: str
    expected: str
    meta: dict[str, Any] = field(default_factory=dict)

    def ideal_response(self) -> str:
        """The reply a perfect model gives; strict scoring accepts it."""
        return f"ANSWER: {self.expected}"


@dataclass(frozen=True, slots=True)
class Score:
    strict: Verdict
    lenient: Verdict
    extracted: str | None


class TaskFamily(Protocol):
    """A seeded, versioned generator plus its scorer."""

    NAME: str
    VERSION: int
    KIND: str  # "short" | "long" | "distribution"
    DEFAULT_SIZE: int  # target prompt tokens when the probe does not say

    def item(
        self, seed: int, size_tokens: int, chars_per_token: float = 4.0, *, nonce: str | None = None
    ) -> Item: ...

    def score(self, item: Item, text: str) -> Score: ...


@dataclass(frozen=True, slots=True)
class Header:
    nonce: str
    family: str
    version: int
    seed: int
    size: int
    cpt: float


_HEADER = re.compile(  # older prompts had a "nonce=" label before the nonce; still read
    r"^(?:nonce=)?(?P<nonce>[0-9a-f]{32}) family=(?P<family>[a-z_]+) v=(?P<v>\d+) "
    r"seed=(?P<seed>-?\d+) size=(?P<size>\d+) cpt=(?P<cpt>\d+\.\d{2})$"
)


def header_line(
    family: str, version: int, seed: int, size: int, cpt: float, nonce: str | None
) -> tuple[str, float]:
    """The header line and the chars-per-token value rounded as the header carries it."""
    cpt = round(max(cpt, 0.5), 2)
    nonce = nonce or secrets.token_hex(16)
    return f"{nonce} family={family} v={version} seed={seed} size={size} cpt={cpt:.2f}", cpt


def parse_header(prompt: str) -> Header | None:
    """The header of a prompt, or None when the first line is not one of ours."""
    first = prompt.split("\n", 1)[0].strip()
    match = _HEADER.match(first)
    if match is None:
        return None
    return Header(
        nonce=match["nonce"],
        family=match["family"],
        version=int(match["v"]),
        seed=int(match["seed"]),
        size=int(match["size"]),
        cpt=float(match["cpt"]),
    )


_THINK = re.compile(r"<think>.*?(</think>|$)", re.S)
_ANSWER_LINE = re.compile(r"^ANSWER:[ \t]*(?P<value>.*?)\s*$")
_LOOSE_ANSWER = re.compile(r"answer(?:\s*:|\s+is\s*:?)\s*(?P<value>.+)", re.I)
_FENCE = re.compile(r"```[a-zA-Z]*")


def _clean(text: str) -> str:
    return _THINK.sub("", text).strip()


def extract_strict(text: str) -> str | None:
    """Value of a final ``ANSWER: v`` line, or the whole reply when it is one bare line."""
    lines = [line for line in _clean(text).splitlines() if line.strip()]
    if not lines:
        return None
    match = _ANSWER_LINE.match(lines[-1])
    if match:
        return match["value"] or None
    if len(lines) == 1:
        return lines[0].strip()
    return None


def extract_lenient(text: str) -> str | None:
    """Forgiving extraction: fences, bold and quotes removed; last 'answer:' or last line."""
    cleaned = _FENCE.sub("", _clean(text)).replace("**", "").replace("`", "")
    matches = list(_LOOSE_ANSWER.finditer(cleaned))
    # Everything after the last "answer:" (multi-line JSON stays intact), else the whole reply.
    value = cleaned[matches[-1].start("value") :] if matches else cleaned
    value = value.strip().strip("\"'").strip()
    return value or None


def verdicts(
    text: str,
    strict_ok: Callable[[str], bool | None],
    lenient_ok: Callable[[str], bool | None],
) -> Score:
    """Apply a family's checks. A check returns True/False, or None when it cannot parse."""
    strict_value = extract_strict(text)
    lenient_value = extract_lenient(text)
    strict = _judge(strict_value, strict_ok)
    lenient = _judge(lenient_value, lenient_ok)
    if strict == "correct":
        lenient = "correct"
    extracted = strict_value if strict != "unparseable" else lenient_value
    return Score(strict=strict, lenient=lenient, extracted=extracted)


def _judge(value: str | None, check: Callable[[str], bool | None]) -> Verdict:
    """``check``'s verdict on ``value``. A value the check's parser refuses (``int()`` past
    4,300 digits, JSON nested past the recursion limit) is unparseable, not a crash: it is
    the model's text, and the row must still say what the provider answered."""
    if value is None:
        return "unparseable"
    try:
        ok = check(value)
    except (ValueError, RecursionError):
        return "unparseable"
    if ok is None:
        return "unparseable"
    return "correct" if ok else "wrong"
