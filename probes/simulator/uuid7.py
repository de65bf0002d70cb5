"""UUIDv7 strings for many timestamps at once (the vectorized twin of ``probes.ids``).

Same layout as ``probes.ids.run_id_at``: 48 bits of Unix milliseconds, version 7, 12
random bits, variant 0b10, 62 random bits. The random bits come from the caller's seeded
generator, so a history regenerated with the same seed and window has the same ids
(and re-inserting it is a no-op).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

__all__ = ["uuid7_batch"]

# Two ASCII hex digits per byte value, as one little-endian-agnostic 2-byte entry.
_PAIRS = np.frombuffer(b"".join(f"{i:02x}".encode() for i in range(256)), dtype=np.uint16)
# (text columns, digit columns) of the 8-4-4-4-12 groups.
_GROUPS = ((0, 8, 0), (9, 13, 8), (14, 18, 12), (19, 23, 16), (24, 36, 20))


def uuid7_batch(unix_ms: npt.NDArray[np.int64], rng: np.random.Generator) -> pa.StringArray:
    """One UUIDv7 string per millisecond timestamp, as an Arrow string array."""
    ms = np.asarray(unix_ms, dtype=np.uint64)
    n = ms.shape[0]
    raw = np.empty((n, 16), dtype=np.uint8)
    for i in range(6):  # big-endian 48-bit timestamp
        raw[:, i] = (ms >> np.uint64(8 * (5 - i))) & np.uint64(0xFF)
    raw[:, 6:] = rng.integers(0, 256, size=(n, 10), dtype=np.uint8)
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x70
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    digits = _PAIRS[raw].view(np.uint8).reshape(n, 32)
    text = np.full((n, 36), ord("-"), dtype=np.uint8)
    for lo, hi, at in _GROUPS:
        text[:, lo:hi] = digits[:, at : at + hi - lo]
    offsets = np.arange(0, 36 * (n + 1), 36, dtype=np.int32)
    return pa.StringArray.from_buffers(
        n, pa.py_buffer(offsets.tobytes()), pa.py_buffer(text.tobytes())
    )
