"""Time-ordered unique ids for probe attempts (UUIDv7, RFC 9562).

Python gains ``uuid.uuid7`` only in 3.14; this is the RFC's layout in a few lines:
48 bits of Unix milliseconds, then version, variant, a counter and random bits.

``new_run_id`` is monotonic within a process (RFC 9562 section 6.2, method 1, as
CPython 3.14's ``uuid.uuid7`` does it): a 42-bit counter, seeded at random for each new
millisecond, orders ids made in the same millisecond, and when the wall clock steps back
(NTP, a clock corrected after boot) the timestamp field stays just past the last id's
instead of following the clock. So every id sorts after every id this process made
before it, and paging rows by id, or "newest by id", follows the order the rows were
made in. The price: after a step back of S seconds, ids carry a time up to S seconds
later than ``started_at`` until the clock catches up. The id orders; ``started_at`` is
the time. Across processes (a restart, another site) ids are ordered by their clocks
only, as any UUIDv7, unless the new process is told the largest id stored
(``new_run_id(after=...)``): analysis runs are, because the phase changes an alert is
raised for are those against the analysis run whose id sorts just before (probe rows and
events are never ordered by id: they are keyed by it and ordered by their times).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable

__all__ = ["MonotonicIds", "new_run_id", "run_id_at"]

_MS_MASK = (1 << 48) - 1
_COUNTER_MAX = (1 << 42) - 1


def _layout(unix_ms: int, counter: int, tail: int) -> int:
    """ms (48) | version 7 (4) | counter high 12 | variant 0b10 (2) | counter low 30 | tail 32."""
    value = (unix_ms & _MS_MASK) << 80
    value |= 0x7 << 76
    value |= (counter >> 30) << 64
    value |= 0b10 << 62
    value |= (counter & ((1 << 30) - 1)) << 32
    return value | (tail & 0xFFFF_FFFF)


def _fresh_counter_and_tail() -> tuple[int, int]:
    """A random counter with its top bit clear (room to count up), and 32 random bits."""
    rand = int.from_bytes(os.urandom(10), "big")
    return (rand >> 32) & (_COUNTER_MAX >> 1), rand & 0xFFFF_FFFF


def _ms_and_counter(run_id: str) -> tuple[int, int] | None:
    """The time and counter fields of a UUIDv7 string; None for anything else."""
    try:
        value = uuid.UUID(run_id).int
    except ValueError:
        return None
    if (value >> 76) & 0xF != 7:
        return None
    counter = ((value >> 64) & 0xFFF) << 30 | ((value >> 32) & ((1 << 30) - 1))
    return value >> 80, counter


def run_id_at(unix_ms: int) -> str:
    """A UUIDv7 string for the given Unix time in milliseconds (not ordered with others)."""
    counter, tail = _fresh_counter_and_tail()
    return str(uuid.UUID(int=_layout(unix_ms, counter, tail)))


class MonotonicIds:
    """UUIDv7s, each greater than the one before, whatever the wall clock does."""

    def __init__(self, clock_ns: Callable[[], int] = time.time_ns) -> None:
        self._clock_ns = clock_ns
        self._lock = threading.Lock()  # probes may run in worker threads
        self._ms = -1
        self._counter = 0

    def next(self, after: str | None = None) -> str:
        """The next id: a fresh counter on a new millisecond, else the counter plus one
        on the last id's millisecond (past its last value: the next millisecond).

        ``after``: an id made elsewhere (the largest stored, by an earlier process whose
        clock was ahead) that this one must sort after too; one that is no UUIDv7 says
        nothing about order and is ignored."""
        with self._lock:
            floor = _ms_and_counter(after) if after is not None else None
            if floor is not None and floor > (self._ms, self._counter):
                self._ms, self._counter = floor
            now_ms = self._clock_ns() // 1_000_000
            if now_ms > self._ms:
                self._ms = now_ms
                self._counter, tail = _fresh_counter_and_tail()
            else:  # same millisecond, or the clock went back: keep counting
                self._counter += 1
                if self._counter > _COUNTER_MAX:
                    self._ms += 1
                    self._counter = _fresh_counter_and_tail()[0]
                tail = _fresh_counter_and_tail()[1]
            return str(uuid.UUID(int=_layout(self._ms, self._counter, tail)))


_PROCESS_IDS = MonotonicIds()  # one per process, as uuid.uuid7 keeps one


def new_run_id(after: str | None = None) -> str:
    """A fresh UUIDv7 for now, greater than every id this process made before (and than
    ``after``, when given)."""
    return _PROCESS_IDS.next(after)
