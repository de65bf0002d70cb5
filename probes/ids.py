"""Time-ordered unique ids for probe attempts (UUIDv7, RFC 9562).

Python gains ``uuid.uuid7`` only in 3.14; this is the RFC's layout in a few lines:
48 bits of Unix milliseconds, then version, variant and random bits.
"""

from __future__ import annotations

import os
import time
import uuid

__all__ = ["new_run_id", "run_id_at"]


def run_id_at(unix_ms: int) -> str:
    """A UUIDv7 string for the given Unix time in milliseconds."""
    rand = int.from_bytes(os.urandom(10), "big")
    value = (unix_ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76  # version
    value |= ((rand >> 68) & 0xFFF) << 64  # rand_a
    value |= 0b10 << 62  # variant
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


def new_run_id() -> str:
    """A fresh UUIDv7 for now."""
    return run_id_at(time.time_ns() // 1_000_000)
