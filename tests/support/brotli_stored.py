"""Brotli framing without a brotli library: the data in uncompressed meta-blocks.

RFC 7932 lets an encoder store a meta-block as is (section 9.2); encoders do so for data
that does not compress, so the payload bytes appear verbatim in the stream behind a few
header bits. That is what makes a brotli body dangerous to a client that cannot decode it:
it can look almost like the plain stream.
"""

from __future__ import annotations

__all__ = ["brotli_stored"]

_BLOCK = 1 << 16  # the most one meta-block with four MLEN nibbles holds


class _Bits:
    """Least-significant-bit-first bit writer, as brotli packs its headers."""

    def __init__(self) -> None:
        self.out = bytearray()
        self._acc = 0
        self._n = 0

    def put(self, value: int, width: int) -> None:
        self._acc |= value << self._n
        self._n += width
        while self._n >= 8:
            self.out.append(self._acc & 0xFF)
            self._acc >>= 8
            self._n -= 8

    def align(self) -> None:
        if self._n:
            self.put(0, 8 - self._n)


def brotli_stored(data: bytes) -> bytes:
    """A valid brotli stream (window 2**16) decoding to ``data``."""
    bits = _Bits()
    bits.put(0, 1)  # WBITS: a single 0 bit means a 16-bit window
    for start in range(0, len(data), _BLOCK):
        part = data[start : start + _BLOCK]
        bits.put(0, 1)  # ISLAST = 0
        bits.put(0, 2)  # MNIBBLES = 4
        bits.put(len(part) - 1, 16)  # MLEN - 1
        bits.put(1, 1)  # ISUNCOMPRESSED
        bits.align()
        bits.out += part
    bits.put(1, 1)  # ISLAST
    bits.put(1, 1)  # ISLASTEMPTY
    bits.align()
    return bytes(bits.out)
