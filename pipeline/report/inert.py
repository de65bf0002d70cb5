"""Untrusted text made inert for the page: bidi controls shown, keys masked.

Autoescaping stops markup; it does not stop U+202E and its kin from reordering what a
reader sees (a "Trojan Source" answer can make ``ok`` read as something else). Every
such control becomes a visible, harmless marker such as ``[U+202E]``. Model text is
stored verbatim, so a key a server echoed into an answer is masked here, when shown:
the exact keys the report knows, and anything shaped like a common key format.
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup

from probes.secrets import KEY_SHAPED, MASK, Secrets

__all__ = ["BIDI_CONTROLS", "Finalize", "inert"]

# Embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), plus the marks
# that can flip neutral characters (LRM, RLM, ALM).
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def inert(text: str) -> str:
    """``text`` with every bidirectional control replaced by a visible marker."""
    return BIDI_CONTROLS.sub(lambda m: f"[U+{ord(m[0]):04X}]", text)


class Finalize:
    """Jinja ``finalize``: plain strings made inert and masked; our markup left alone."""

    def __init__(self, secrets: Secrets | None = None) -> None:
        self.secrets = secrets or Secrets(())

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str) and not isinstance(value, Markup):
            return KEY_SHAPED.sub(MASK, self.secrets.scrub(inert(value)))
        return value
