"""Chars-per-token estimates for sizing prompts, corrected from the provider's usage.

Token counts always come from the provider; this estimate only decides how many characters
to generate for a target context size. It starts from the provider's configured value times
a per-family factor (UUID soup tokenizes far denser than prose) and follows each observed
ratio with an exponential moving average. The daemon keeps one ``CharsPerToken`` per
provider and passes it to every ``run_probe``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping

__all__ = ["FAMILY_FACTOR", "CharsPerToken", "overflow_prompt_tokens"]

FAMILY_FACTOR = {"kv_lookup": 0.55}  # hex UUIDs: about 2.2 chars/token where prose gives 4
MIN_CHARS = 2_000  # short prompts are dominated by the chat template's own tokens
ALPHA = 0.3


class CharsPerToken:
    """Per-family estimate for one provider; safe to share between tasks and threads."""

    def __init__(self, initial: float = 4.0, learned: Mapping[str, float] | None = None) -> None:
        """``learned``: ratios per family from earlier runs (the warehouse keeps them)."""
        self.initial = initial
        self._values: dict[str, float] = {
            family: ratio for family, ratio in (learned or {}).items() if _plausible(ratio)
        }
        self._lock = threading.Lock()

    def estimate(self, family: str) -> float:
        with self._lock:
            return self._values.get(family, self.initial * FAMILY_FACTOR.get(family, 1.0))

    def knows(self, family: str) -> bool:
        """True once a ratio was measured or learned for ``family`` (not just assumed)."""
        with self._lock:
            return family in self._values

    def measured(self, family: str, prompt_chars: int, tokens: int) -> None:
        """An exact count of the prompt's own tokens (a tokenize endpoint): taken as is."""
        ratio = prompt_chars / tokens if tokens > 0 else 0.0
        if _plausible(ratio):
            with self._lock:
                self._values[family] = ratio

    def observe(self, family: str, prompt_chars: int, input_tokens: int | None) -> None:
        """Fold in one request's ratio; ignored when too short or implausible."""
        if not input_tokens or prompt_chars < MIN_CHARS:
            return
        ratio = prompt_chars / input_tokens
        if not _plausible(ratio):
            return
        with self._lock:
            current = self._values.get(family)
            self._values[family] = ratio if current is None else current + ALPHA * (ratio - current)


def _plausible(ratio: float) -> bool:
    return 0.5 <= ratio <= 12.0


# How servers state the prompt's size when it overflows the window (first match wins).
# A request that overflows reports no usage, so this is the only count it gives.
_OVERFLOW_COUNTS = [
    re.compile(p, re.I)
    for p in (
        r'"n_prompt_tokens"\s*:\s*(\d+)',  # llama.cpp, in the error object
        r"request \((\d+) tokens\) exceeds",  # llama.cpp
        r"\((\d+) in the messages",  # DeepSeek, older vLLM
        r"\((\d+) of text input",  # OpenRouter
        r"(\d+) tokens from the input",  # SGLang
        r"requested (\d+) tokens in the messages",  # vLLM
        r"messages resulted in (\d+) tokens",  # OpenAI
        r"request has (\d+) input tokens",  # vLLM, max_tokens too large
        r"prompt is too long: (\d+) tokens",  # Anthropic
        r"exceed context limit: (\d+) \+",  # Anthropic, with max_tokens
        r"input token count \((\d+)\)",  # Gemini
        r"decoder prompt \(length (\d+)\)",  # vLLM
        r"the input \((\d+) tokens\)",  # SGLang
    )
]


_MAX_DIGITS = 18


def overflow_prompt_tokens(text: str) -> int | None:
    """The prompt's token count a context-overflow error states, if it states one."""
    for pattern in _OVERFLOW_COUNTS:
        match = pattern.search(text)
        if match:
            # No window needs more than 18 digits, and int() refuses past 4,300 of them.
            return int(match[1]) if len(match[1]) <= _MAX_DIGITS else None
    return None
