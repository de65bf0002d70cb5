"""Remove known secret values from text before it is stored, logged or shown.

Pattern matching (``sk-...``, ``Bearer ...``) misses keys of other shapes (Gemini's
``AIza...``, Z.ai's ``id.secret``), and a server may echo a key back in a request id, a
header or an error body. The exact values are known at run time (they come from the
environment), so they are removed exactly, together with the encodings a server or a
debug log is likely to show: percent-encoded, base64 (plain and URL-safe, with or without
padding), and each long part of a compound ``id.secret`` key.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from urllib.parse import quote

__all__ = ["KEY_SHAPED", "MASK", "Secrets", "secrets_of_key"]

MASK = "[redacted]"
MIN_LENGTH = 8  # shorter values would mask ordinary words; no real key is this short
_PART_SPLIT = re.compile(r"[.:]")
# Text shaped like a common credential whatever its value: OpenAI/Anthropic sk-..., Google
# AIza..., JWTs, bearer tokens. For where the exact key is not known (another provider's,
# a header a server invented).
KEY_SHAPED = re.compile(
    r"\b(sk-[A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{30,}|eyJ[A-Za-z0-9_-]{10,}|Bearer\s+\S+)"
)


def _forms(value: str) -> set[str]:
    raw = value.encode()
    forms = {
        value,
        quote(value, safe=""),
        base64.b64encode(raw).decode(),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    }
    forms.update(part for part in _PART_SPLIT.split(value) if len(part) >= 12)
    return {f for f in forms if len(f) >= MIN_LENGTH}


class Secrets:
    """The secret values of this process, ready to be masked anywhere."""

    def __init__(self, values: Iterable[str | None]) -> None:
        forms: set[str] = set()
        for value in values:
            if value and len(value.strip()) >= MIN_LENGTH:
                forms |= _forms(value.strip())
        # Longest first, so a key is masked whole before any of its parts.
        ordered = sorted(forms, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def scrub(self, text: str) -> str:
        """``text`` with every known secret (in any of its forms) replaced by ``MASK``."""
        return self._pattern.sub(MASK, text) if self._pattern and text else text

    def scrub_optional(self, text: str | None) -> str | None:
        return self.scrub(text) if text else text

    def scrub_headers(self, headers: Mapping[str, str] | None) -> dict[str, str] | None:
        if headers is None:
            return None
        return {name: self.scrub(value) for name, value in headers.items()}


@lru_cache(maxsize=64)
def secrets_of_key(key: str | None) -> Secrets:
    """The ``Secrets`` of one API key, built once: every probe's row is scrubbed with it,
    and building means encoding the key and compiling a pattern."""
    return Secrets([key])
