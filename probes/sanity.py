"""Raw-text sanity flags, computed on every response (each is a rare event with its own
baseline rate; thresholds here are deliberately conservative).

``empty``            no answer text (reasoning alone does not count)
``truncated``        stopped at the output-token limit
``wrong_script``     letters of a script the prompt does not use (e.g. Thai or CJK inside an
                     English answer), not counting characters that appear in the prompt
``invalid_unicode``  U+FFFD, control characters or lone surrogates
``repetition``       a word 8-gram 3+ times, a line 3+ times, or a span repeated 4+ times in a row
``refusal``          a refusal phrase on a benign probe
``model_mismatch``   the reported model is not the configured one (aliases with a date or
                     vendor prefix are accepted)
``cache_hit``        the provider reports cached prompt tokens despite the nonce
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

__all__ = ["FLAGS", "sanity_flags"]

FLAGS = (
    "empty",
    "truncated",
    "wrong_script",
    "invalid_unicode",
    "repetition",
    "refusal",
    "model_mismatch",
    "cache_hit",
)
TRUNCATION_REASONS = frozenset({"length", "max_tokens", "max_output_tokens", "model_length"})

_REFUSAL = re.compile(
    r"\b(I(?:'m| am) (?:sorry|unable|not able)|I can(?:'|no)t (?:help|assist|comply|do that)|"
    r"I (?:must|have to) decline|as an AI(?: language model)?|I won't (?:help|be able))",
    re.I,
)
_RUN = re.compile(r"(.{8,120}?)\1{3,}", re.S)
_CONTROL_OK = {"\n", "\r", "\t"}


def _script(char: str) -> str:
    """First word of the Unicode name (LATIN, CJK, THAI, HIRAGANA...), a cheap script proxy."""
    try:
        return unicodedata.name(char).split(" ", 1)[0]
    except ValueError:
        return "UNKNOWN"


def wrong_script(text: str, prompt: str) -> bool:
    allowed = {_script(c) for c in set(prompt) if c.isalpha()} | {"LATIN"}
    seen = set(prompt)
    return any(c.isalpha() and c not in seen and _script(c) not in allowed for c in set(text))


def invalid_unicode(text: str) -> bool:
    for char in text:
        if char == "\ufffd" or "\ud800" <= char <= "\udfff":
            return True
        if unicodedata.category(char) == "Cc" and char not in _CONTROL_OK:
            return True
    return False


def repetition(text: str) -> bool:
    words = text.split()
    grams = Counter(tuple(words[i : i + 8]) for i in range(len(words) - 7))
    if grams and grams.most_common(1)[0][1] >= 3:
        return True
    lines = Counter(line.strip() for line in text.splitlines() if len(line.strip()) >= 8)
    if lines and lines.most_common(1)[0][1] >= 3:
        return True
    return _RUN.search(text[-4000:]) is not None


def model_mismatch(reported: str | None, configured: str) -> bool:
    if not reported:
        return False
    a, b = reported.strip().lower(), configured.strip().lower()
    a_tail, b_tail = a.rsplit("/", 1)[-1], b.rsplit("/", 1)[-1]
    return not (a_tail.startswith(b_tail) or b_tail.startswith(a_tail))


def sanity_flags(
    *,
    answer: str,
    prompt: str,
    finish_reason: str | None,
    reported_model: str | None,
    configured_model: str,
    cached_tokens: int | None,
    attempted: bool = True,
) -> list[str]:
    """Flags for one response, in ``FLAGS`` order. ``attempted=False`` (the request failed
    before any answer could exist) leaves only the metadata flags."""
    flags: list[str] = []
    if attempted and not answer.strip():
        flags.append("empty")
    if finish_reason in TRUNCATION_REASONS:
        flags.append("truncated")
    if wrong_script(answer, prompt):
        flags.append("wrong_script")
    if invalid_unicode(answer):
        flags.append("invalid_unicode")
    if repetition(answer):
        flags.append("repetition")
    if _REFUSAL.search(answer):
        flags.append("refusal")
    if model_mismatch(reported_model, configured_model):
        flags.append("model_mismatch")
    if cached_tokens:
        flags.append("cache_hit")
    return flags
