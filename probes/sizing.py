"""Chars-per-token estimates for sizing prompts, corrected from the provider's usage.

Token counts always come from the provider; this estimate only decides how many characters
to generate for a target context size. It starts from the provider's configured value times
a per-family factor (UUID soup tokenizes far denser than prose) and follows each observed
ratio with an exponential moving average. The daemon keeps one ``CharsPerToken`` per
provider and passes it to every ``run_probe``.
"""

from __future__ import annotations

import threading

__all__ = ["FAMILY_FACTOR", "CharsPerToken"]

FAMILY_FACTOR = {"kv_lookup": 0.55}  # hex UUIDs: about 2.2 chars/token where prose gives 4
MIN_CHARS = 2_000  # short prompts are dominated by the chat template's own tokens
ALPHA = 0.3


class CharsPerToken:
    """Per-family estimate for one provider; safe to share between tasks and threads."""

    def __init__(self, initial: float = 4.0) -> None:
        self.initial = initial
        self._values: dict[str, float] = {}
        self._lock = threading.Lock()

    def estimate(self, family: str) -> float:
        with self._lock:
            return self._values.get(family, self.initial * FAMILY_FACTOR.get(family, 1.0))

    def observe(self, family: str, prompt_chars: int, input_tokens: int | None) -> None:
        """Fold in one request's ratio; ignored when too short or implausible."""
        if not input_tokens or prompt_chars < MIN_CHARS:
            return
        ratio = prompt_chars / input_tokens
        if not 0.5 <= ratio <= 12.0:
            return
        with self._lock:
            current = self._values.get(family)
            self._values[family] = ratio if current is None else current + ALPHA * (ratio - current)
