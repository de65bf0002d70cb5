"""The simulator's deterministic tokenizer.

A token is optional leading whitespace followed by either up to four word characters
(``\\w{1,4}``: longer words split every four characters) or one other non-space
character; trailing whitespace is a token of its own. Joining the tokens gives the text
back exactly, so the server streams one token per chunk and reports in ``usage`` exactly
the number of tokens it sent. English prose comes out near 3.5-4 characters per token,
close to real tokenizers, which keeps prompt sizing by clients realistic.
"""

from __future__ import annotations

import re

__all__ = ["count_tokens", "tokenize"]

_TOKEN = re.compile(r"\s*(?:\w{1,4}|[^\w\s])|\s+$")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into tokens whose concatenation is ``text``."""
    return _TOKEN.findall(text)


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))
