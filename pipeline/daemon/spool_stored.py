"""Which spool segments are already in the warehouse, seen from another process.

The flush leaves a stored mark beside a segment the kernel will not delete, but a folder
that refuses new files (read-only, ``chattr +i``, full) takes no mark either, and only
the daemon remembers such a segment. ``nerfwatch status`` runs in another process: it
asks the warehouse instead. A line is stored when its ``run_id`` (probe row) or
``event_id`` (daemon event) is there, or when the flush quarantined it (its sha256, the
key of ``quarantined_rows``); a segment is stored when all its complete lines are.

Status reads each waiting segment once (``read_waiting``) and decodes each line's JSON
once: the same objects tell which segments are stored, how many lines wait, what they
hold and what they spent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.daemon.flush.segments import EVENT_TABLE, SPOOL_TABLE
from pipeline.daemon.spool import SpoolError, waiting_segments
from pipeline.daemon.spool.segments import lines_of, segment_bytes
from pipeline.daemon.spooled import spooled_object
from pipeline.warehouse import Warehouse

__all__ = ["ReadSegment", "WaitingLine", "WaitingSpool", "read_waiting", "stored_segments"]

_FOUND_SQL = """
SELECT run_id AS key FROM probe_results WHERE run_id IN (SELECT unnest(?::VARCHAR[]))
UNION ALL
SELECT event_id FROM daemon_events WHERE event_id IN (SELECT unnest(?::VARCHAR[]))
UNION ALL
SELECT line_hash FROM quarantined_rows WHERE line_hash IN (SELECT unnest(?::VARCHAR[]))
"""


@dataclass(frozen=True, slots=True)
class _LineKeys:
    """What a line is stored under: its id in its table, or its quarantine hash."""

    probe_id: str | None
    event_id: str | None
    digest: str

    def stored(self, found: set[str]) -> bool:
        return bool({self.probe_id, self.event_id, self.digest} & found)


@dataclass(frozen=True, slots=True)
class WaitingLine:
    """One complete spool line and its JSON object, decoded once (None: not an object,
    a damaged line the next flush quarantines)."""

    text: str
    row: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class ReadSegment:
    """One waiting segment as read once: its complete lines, and its newline count (the
    spool depth's unit, ``pending_lines``: blank lines count, a torn tail does not)."""

    path: Path
    lines: list[WaitingLine]
    newlines: int


@dataclass(frozen=True, slots=True)
class WaitingSpool:
    """The segments without a stored mark, each read once; those the kernel would not
    read are in ``unreadable`` (their rows left out, as ``Spool.iter_pending`` does)."""

    segments: list[ReadSegment] = field(default_factory=list)
    unreadable: list[SpoolError] = field(default_factory=list)

    def pending(self, stored: frozenset[Path]) -> list[ReadSegment]:
        return [s for s in self.segments if s.path not in stored]

    def depth(self, stored: frozenset[Path]) -> int:
        """Lines waiting for the warehouse, as ``pending_lines`` counts them."""
        return sum(s.newlines for s in self.pending(stored))

    def pending_lines(self, stored: frozenset[Path]) -> Iterator[WaitingLine]:
        """Every complete waiting line, oldest segment first (``Spool.iter_pending``)."""
        for segment in self.pending(stored):
            yield from segment.lines


def read_waiting(directory: Path) -> WaitingSpool:
    """Read every segment of ``directory`` that has no stored mark, once."""
    out = WaitingSpool()
    for segment in waiting_segments(directory):
        try:
            data = segment_bytes(segment.path)
        except SpoolError as exc:
            out.unreadable.append(exc)
            continue
        lines = [
            WaitingLine(text, spooled_object(text)) for _, text in lines_of(data, segment.path)
        ]
        out.segments.append(ReadSegment(segment.path, lines, data.count(b"\n")))
    return out


def stored_segments(warehouse: Warehouse, segments: Iterable[ReadSegment]) -> frozenset[Path]:
    """The ``segments`` every complete line of which is in ``warehouse`` (one query).
    A segment that holds no complete line is not reported stored. Raises
    ``WarehouseError`` when the warehouse cannot be read."""
    by_segment: dict[Path, list[_LineKeys]] = {}
    for segment in segments:
        if segment.lines:
            by_segment[segment.path] = [_line_keys(line) for line in segment.lines]
    if not by_segment:
        return frozenset()
    keys = [k for line_keys in by_segment.values() for k in line_keys]
    params = [
        [k.probe_id for k in keys if k.probe_id is not None],
        [k.event_id for k in keys if k.event_id is not None],
        [k.digest for k in keys],
    ]
    found = set(warehouse.query(_FOUND_SQL, params)["key"].to_list())
    return frozenset(
        path for path, line_keys in by_segment.items() if all(k.stored(found) for k in line_keys)
    )


def _line_keys(line: WaitingLine) -> _LineKeys:
    digest = hashlib.sha256(line.text.encode("utf-8", "replace")).hexdigest()
    row = line.row
    if row is None:
        return _LineKeys(None, None, digest)
    table, run_id, event_id = row.get(SPOOL_TABLE), row.get("run_id"), row.get("event_id")
    probe_id = run_id if table is None and isinstance(run_id, str) else None
    event = event_id if table == EVENT_TABLE and isinstance(event_id, str) else None
    return _LineKeys(probe_id, event, digest)
