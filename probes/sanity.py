"""Raw-text sanity flags, computed on every response (each is a rare event with its own
baseline rate; thresholds here are deliberately conservative).

``empty``            no answer text (reasoning alone does not count)
``truncated``        stopped at the output-token limit
``context_full``     stopped because prompt and output filled the context window (see
                     ``stop_cause``), not at the output limit
``wrong_script``     letters of a script the prompt does not use (e.g. Thai or CJK inside an
                     English answer), not counting characters that appear in the prompt
``invalid_unicode``  U+FFFD, control characters or lone surrogates
``repetition``       a word 8-gram 3+ times, a line 3+ times, or a span repeated 4+ times in a row
``refusal``          a refusal phrase on a benign probe
``model_mismatch``   the reported model is not the configured one (aliases with a date or
                     vendor prefix are accepted)
``cache_hit``        the provider reports more cached prompt tokens than the fixed text ahead
                     of the nonce can explain (see ``cache_hit``)

The flag rate (the ``flagged`` column of the ``probes`` view, which the report's chart, the
phases and the "dumber answers" sign count) counts only ``ANSWER_FLAGS``, the flags about
the answer's text. ``model_mismatch`` and ``cache_hit`` here, and the runner's
``out_of_range:<column>`` and ``usage_says_no_output``, describe the response's metadata: a
server that always reports 0 output tokens would otherwise read as 100 % flagged answers.
Metadata has its own sign (``pipeline.analysis.metadata_sign``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

__all__ = ["ANSWER_FLAGS", "FLAGS", "cache_hit", "sanity_flags", "stop_cause"]

FLAGS = (
    "empty",
    "truncated",
    "context_full",
    "wrong_script",
    "invalid_unicode",
    "repetition",
    "refusal",
    "model_mismatch",
    "cache_hit",
)
ANSWER_FLAGS = FLAGS[:7]  # empty ... refusal; sql/views/010_probes.sql lists the same
# The nonce is the first thing in the user message, so a prefix cache can only match the
# chat template ahead of it (3-7 tokens on ChatML, Llama 3 and Gemma templates) and any
# preamble the provider injects. Caches count in blocks (vLLM 16 tokens, DeepSeek 64,
# OpenAI 128 past 1,024), so a real hit past the nonce is at least one block and shows as
# more than 64 tokens, or, on our shortest prompts (about 60 tokens), half the prompt.
CACHE_PREFIX_ALLOWANCE_TOKENS = 64
CACHE_PROMPT_SHARE = 0.5
TRUNCATION_REASONS = frozenset({"length", "max_tokens", "max_output_tokens", "model_length"})
CONTEXT_FULL_REASONS = frozenset({"model_context_window_exceeded"})  # Anthropic stop_reason
AMBIGUOUS_LENGTH = "length"


def stop_cause(
    finish_reason: str | None,
    *,
    input_tokens: int | None,
    output_tokens: int | None,
    max_output_tokens: int,
    max_context: int,
) -> str | None:
    """``truncated`` when the output limit ended the answer, ``context_full`` when the
    context window did, None for any other finish.

    Anthropic names the two apart; the OpenAI wire has only ``length``, which llama.cpp and
    vLLM also send when the window is full. Usage tells them apart: prompt plus output
    reaching the configured window, or output stopping short of the limit it was given
    (every documented provider counts reasoning inside output tokens, so an answer that
    used its whole budget reports exactly the limit).
    """
    if finish_reason in CONTEXT_FULL_REASONS:
        return "context_full"
    if finish_reason not in TRUNCATION_REASONS:
        return None
    if finish_reason != AMBIGUOUS_LENGTH or output_tokens is None:
        return "truncated"  # a named output limit, or no usage to tell otherwise
    if input_tokens is not None and input_tokens + output_tokens >= max_context:
        return "context_full"
    return "context_full" if output_tokens < max_output_tokens else "truncated"


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


def cache_hit(cached_tokens: int | None, prompt_tokens: int | None) -> bool:
    """Cached tokens beyond the template allowance, or covering half the prompt: the nonce
    itself must have been cached, so the prompt was not unique to the provider's cache."""
    if not cached_tokens:
        return False
    if cached_tokens > CACHE_PREFIX_ALLOWANCE_TOKENS:
        return True
    return prompt_tokens is not None and cached_tokens >= CACHE_PROMPT_SHARE * prompt_tokens


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
    prompt_tokens: int | None = None,
    stopped_by: str | None = None,
    attempted: bool = True,
) -> list[str]:
    """Flags for one response, in ``FLAGS`` order. ``stopped_by`` is ``stop_cause``'s answer
    (when not given, a length-type finish reads as the output limit). ``attempted=False``
    (the request failed before any answer could exist) leaves only the metadata flags."""
    flags: list[str] = []
    if attempted and not answer.strip():
        flags.append("empty")
    if stopped_by is None and finish_reason in TRUNCATION_REASONS:
        stopped_by = "truncated"
    if stopped_by in ("truncated", "context_full"):
        flags.append(stopped_by)
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
    if cache_hit(cached_tokens, prompt_tokens):
        flags.append("cache_hit")
    return flags
