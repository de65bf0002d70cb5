"""Text files a user hands us (a config, a CSV): UTF-8, a byte-order mark allowed.

Editors on some systems start a file with a byte-order mark, and a spreadsheet's export
may not be UTF-8 at all; the first should just work, the second should say on which line
the file stops being text, not at which byte offset a decoder gave up.
"""

from __future__ import annotations

__all__ = ["NotUtf8", "decode_utf8"]


class NotUtf8(ValueError):
    """The bytes are not UTF-8; ``line`` is the 1-based line of the first bad byte."""

    def __init__(self, line: int, byte: int) -> None:
        self.line = line
        super().__init__(f"not UTF-8 text (byte 0x{byte:02x})")


def decode_utf8(raw: bytes) -> str:
    """``raw`` as text, a leading byte-order mark dropped, or ``NotUtf8``."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotUtf8(raw[: exc.start].count(b"\n") + 1, raw[exc.start]) from None
