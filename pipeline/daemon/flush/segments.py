"""Writes sealed spool segments (and queued side rows) into DuckDB, then deletes them.

This is the part of a flush that holds the warehouse file. It runs in the daemon's
flush process (``in_flush_process``), or in the calling thread where a process is not
worth it (tests, ``quiet`` benchmarks). Everything it needs travels in a ``FlushBatch``
(paths and plain rows), so both places run exactly the same code.

Order, and why it is safe at any crash point: cut torn tails (never acknowledged) →
insert the rows whose ``run_id`` is not stored yet (one transaction) →
release the file → delete the segments. A crash before the delete replays rows that
the insert then skips, so each acknowledged result is stored exactly once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipeline.daemon.flush.heartbeats import EVERY, thin_heartbeats
from pipeline.daemon.spool import SpoolError, numbered_lines, remove_segments, segment_bytes
from pipeline.warehouse import Warehouse, WarehouseBusy, WarehouseError, insert_new_sql
from probes.result import ProbeResult, clamp_row

__all__ = ["PROBE_SCHEMA", "FlushBatch", "SegmentWriter", "SideRows", "Written", "probe_frame"]

log = logging.getLogger(__name__)

_CHUNK_ROWS = 5_000
QUARANTINE_TABLE = "quarantined_rows"


def _polars_type(annotation: str) -> pl.DataType:
    base = annotation.replace(" | None", "").strip()
    mapping: dict[str, pl.DataType] = {
        "str": pl.String(),
        "int": pl.Int64(),
        "float": pl.Float64(),
        "bool": pl.Boolean(),
        "datetime": pl.Datetime("us", "UTC"),
        "dict[str, str]": pl.String(),  # serialized JSON text (see ProbeResult.as_row)
        "list[str]": pl.List(pl.String()),
    }
    if base not in mapping:
        raise TypeError(f"ProbeResult field type {annotation!r} has no warehouse mapping")
    return mapping[base]


PROBE_SCHEMA: dict[str, pl.DataType] = {
    f.name: _polars_type(str(f.type)) for f in dataclasses.fields(ProbeResult)
}


def _duckdb_type(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMPTZ"
    if isinstance(dtype, pl.List):
        return "VARCHAR[]"
    return {"String": "VARCHAR", "Int64": "BIGINT", "Float64": "DOUBLE", "Boolean": "BOOLEAN"}[
        str(dtype)
    ]


SPOOL_TABLE = "spool_table"  # marks a spool line that is not a probe row (see EVENT_TABLE)
EVENT_TABLE = "daemon_events"
EVENT_SCHEMA: dict[str, str] = {
    "event_id": "VARCHAR",
    "session_id": "VARCHAR",
    "occurred_at": "TIMESTAMPTZ",
    "kind": "VARCHAR",
    "detail": "VARCHAR",
    "host": "VARCHAR",
    "pid": "INTEGER",
    "nerfwatch_version": "VARCHAR",
    "rows_lost": "BIGINT",
    "site": "VARCHAR",
}


def _read_json(columns: dict[str, str]) -> str:
    """A reader of spool files for ``columns``, plus the marker column (keys a line does
    not have read as NULL; keys it has beyond these are ignored)."""
    listed = ", ".join(
        f"'{name}': '{kind}'" for name, kind in {**columns, SPOOL_TABLE: "VARCHAR"}.items()
    )
    return f"read_json(?, format = 'newline_delimited', columns = {{{listed}}})"


_PROBE_COLUMNS = {name: _duckdb_type(t) for name, t in PROBE_SCHEMA.items()}


@functools.cache
def _insert_spooled() -> tuple[str, str]:
    """The inserts of spooled probe rows and events (built on first use: the checks they
    carry come from the schema, which is not worth reading at import)."""
    # A line for a table this version does not know (a newer nerfwatch wrote it) would
    # match neither insert and leave with its segment: it fails this one instead, and the
    # line-by-line path quarantines it.
    probes = insert_new_sql(
        "probe_results",
        f"SELECT * EXCLUDE ({SPOOL_TABLE}) FROM {_read_json(_PROBE_COLUMNS)} "
        f"WHERE CASE WHEN {SPOOL_TABLE} IS NULL THEN true "
        f"WHEN {SPOOL_TABLE} = '{EVENT_TABLE}' THEN false "
        f"ELSE error('a spool line for an unknown table') END",
        key="run_id",
    )
    events = insert_new_sql(
        EVENT_TABLE,
        f"SELECT * EXCLUDE ({SPOOL_TABLE}) FROM {_read_json(EVENT_SCHEMA)} "
        f"WHERE {SPOOL_TABLE} = '{EVENT_TABLE}'",
        key="event_id",
    )
    return probes, events


def probe_frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Spool rows (decoded JSON) as a frame with the warehouse's column types."""
    columns: dict[str, list[Any]] = {name: [] for name in PROBE_SCHEMA}
    for row in rows:
        for name, values in columns.items():
            values.append(row.get(name))
    started = columns["started_at"]
    columns["started_at"] = [
        datetime.fromisoformat(v) if isinstance(v, str) else v for v in started
    ]
    headers = columns["response_headers"]
    columns["response_headers"] = [
        json.dumps(v, sort_keys=True) if isinstance(v, dict) else v for v in headers
    ]
    columns["sanity_flags"] = [v if v is not None else [] for v in columns["sanity_flags"]]
    return pl.DataFrame(columns, schema=PROBE_SCHEMA)


@dataclass(slots=True)
class SideRows:
    """Rows for another table (daemon events, alert events), idempotent on ``key``."""

    table: str
    key: str
    rows: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class FlushBatch:
    """One flush's work: sealed segment files, oldest first, and side rows. ``stored``:
    those of ``paths`` an earlier flush stored but could not delete; they are only
    deleted (their rows are not read or inserted again)."""

    paths: list[Path]
    side: list[SideRows] = field(default_factory=list)
    stored: list[Path] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Written:
    """What a write did. ``finished_at`` is ``time.perf_counter()`` after the segments
    were deleted: CLOCK_MONOTONIC, comparable across processes on one machine."""

    rows: int  # complete spool lines read: probe rows, events, damaged lines
    inserted: int  # probe rows new to the warehouse
    held_s: float
    finished_at: float
    cpu_s: float  # CPU time of the writing process (all its threads) during the write
    replayed: int = 0  # lines already stored (a flush cut short before its delete)
    # segments stored but not deleted (the kernel refused): path -> why
    undeletable: dict[Path, str] = field(default_factory=dict)


class _BadSpoolData(Exception):
    """DuckDB could not take a segment's rows as they are (corruption, an unstorable value)."""


# Errors that come from the rows themselves, not from the file or the lock: such a row is
# quarantined. Anything else (I/O, a full disk) fails the flush and the spool keeps it all.
_ROW_ERRORS: tuple[type[BaseException], ...] = (
    duckdb.DataError,
    duckdb.IntegrityError,
    duckdb.InvalidInputException,
    pl.exceptions.PolarsError,
    TypeError,
    ValueError,
    OverflowError,
)


def _is_row_problem(exc: BaseException) -> bool:
    if isinstance(exc, WarehouseBusy):
        return False
    if isinstance(exc, WarehouseError):
        return isinstance(exc.__cause__, _ROW_ERRORS)
    return isinstance(exc, _ROW_ERRORS)


@dataclass(frozen=True, slots=True)
class _Line:
    """One decoded spool line and where it came from (for quarantine and its message)."""

    text: str
    row: dict[str, Any]
    segment: str
    number: int  # 1-based line number in the segment file


class SegmentWriter:
    """Spool segments → warehouse; raises ``WarehouseBusy``/``WarehouseError`` and then
    leaves every segment in place, or ``SpoolError`` naming a segment the kernel refuses
    to read or cut (after storing the rows of the others). A segment stored but not
    deleted is no error: ``Written.undeletable`` names it, and the caller passes it back
    as ``FlushBatch.stored`` so that only its deletion is tried again.

    A line that cannot become a row never blocks the lines behind it: it goes to the
    ``quarantined_rows`` table (``sql/schema/007_quarantine.sql``), kept verbatim and
    counted by ``nerfwatch status``. The table lives in the warehouse, so draining the
    spool writes nothing to the spool's own file system, which may be full.
    """

    def __init__(
        self,
        warehouse: Warehouse,
        spool_dir: Path,
        *,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.warehouse = warehouse
        self.spool_dir = spool_dir
        self._wall = wall  # the clock old heartbeats are aged by
        self._monotonic = monotonic
        self._thinned_at: float | None = None

    def write(self, batch: FlushBatch) -> Written:
        """Insert the batch under one hold of the file, then delete its segments."""
        cpu = time.process_time()
        quarantine: list[dict[str, Any]] = []
        stored = [p for p in batch.paths if p in batch.stored]
        fresh = [p for p in batch.paths if p not in batch.stored and p.exists()]
        counts, refused = self._readable(fresh, quarantine)
        live = [p for p, lines in counts if lines > 0]
        rows = sum(lines for _, lines in counts)
        held = 0.0
        inserted = events = 0
        if live or batch.side or quarantine:
            held = time.perf_counter()
            session = self.warehouse.connect() if self.warehouse.resident else nullcontext()
            with session:  # a resident warehouse: nested writes share this attach
                inserted, events = self._insert(live, quarantine)
                self._insert_side(batch.side)
                self._quarantine(quarantine)
                if events:
                    self._thin_heartbeats()
            held = time.perf_counter() - held
        undeletable = remove_segments(self.spool_dir, [p for p, _ in counts] + stored)
        if refused:  # the others are stored; these stay for the operator (and a later flush)
            raise SpoolError(
                "; ".join(refused) + "; its rows stay in the spool, the other segments' are stored"
            )
        # a torn tail is no complete line, so it is not among ``rows``
        set_aside = sum(1 for q in quarantine if q["reason"] != "torn_tail")
        replayed = max(0, rows - inserted - events - set_aside)
        finished = time.perf_counter()
        cpu_s = time.process_time() - cpu
        return Written(rows, inserted, held, finished, cpu_s, replayed, undeletable)

    def start(self) -> None:
        """Nothing to start: the warehouse is opened per write."""

    def _thin_heartbeats(self) -> None:
        """Thin old heartbeats at the first flush of events, then at most once per
        ``heartbeats.EVERY`` (a failure waits as long)."""
        now = self._monotonic()
        if self._thinned_at is not None and now - self._thinned_at < EVERY.total_seconds():
            return
        self._thinned_at = now
        thin_heartbeats(self.warehouse, self._wall())

    def close(self) -> None:
        self.warehouse.close()

    def _insert(self, live: list[Path], quarantine: list[dict[str, Any]]) -> tuple[int, int]:
        """Insert every row of ``live`` in one statement (line by line if DuckDB balks);
        the probe rows and events that were new."""
        if not live:
            return 0, 0
        try:
            return self._insert_json(live)
        except _BadSpoolData as exc:
            log.error("spool rows DuckDB cannot take as they are (%s); inserting one by one", exc)
            return self._insert_lines(live, quarantine)

    def _readable(
        self, paths: list[Path], quarantine: list[dict[str, Any]]
    ) -> tuple[list[tuple[Path, int]], list[str]]:
        """Each segment that can be read (and cut at a torn tail) with its line count, and
        why the others cannot: one such segment must not hold back the rows of the rest."""
        counts: list[tuple[Path, int]] = []
        refused: list[str] = []
        for path in paths:
            try:
                counts.append((path, self._complete_lines(path, quarantine)))
            except SpoolError as exc:
                refused.append(str(exc))
        return counts, refused

    def _complete_lines(self, path: Path, quarantine: list[dict[str, Any]]) -> int:
        """Cut a torn tail (a write interrupted by a crash) off a sealed segment.

        Truncating needs no free space; the tail (never acknowledged) is kept in the
        quarantine table, not in a file beside the spool. A segment the kernel refuses to
        read or cut is a ``SpoolError`` naming it; the flush fails and the spool keeps it.
        """
        data = segment_bytes(path)
        end = data.rfind(b"\n") + 1
        if end < len(data):
            tail = data[end:].decode("utf-8", "replace")
            number = data.count(b"\n") + 1
            log.error(
                "spool segment %s ends with a torn line (line %d, at byte %d, %d bytes);"
                " quarantined",
                path.name,
                number,
                end,
                len(data) - end,
            )
            try:
                with open(path, "r+b") as fh:
                    fh.truncate(end)
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise SpoolError(
                    f"spool segment {path} cannot be cut at its torn line: {exc.strerror}"
                ) from exc
            quarantine.append(_quarantine_row(tail, "torn_tail", path.name, number, None))
        return data.count(b"\n")

    def _insert_json(self, paths: list[Path]) -> tuple[int, int]:
        """DuckDB reads the JSON lines itself: no per-row Python work. One transaction."""
        files = [str(p) for p in paths]
        with self.warehouse.connect() as con:
            con.execute("SET threads = 1")  # a flush is small: one thread spends the least CPU
            try:
                con.execute("BEGIN TRANSACTION")
                insert_probes, insert_events = _insert_spooled()
                probes = con.execute(insert_probes, [files]).fetchall()
                events = con.execute(insert_events, [files]).fetchall()
                con.execute("COMMIT")
            except duckdb.Error as exc:
                with contextlib.suppress(duckdb.Error):
                    con.execute("ROLLBACK")
                if isinstance(exc, _ROW_ERRORS):
                    raise _BadSpoolData(str(exc).splitlines()[0]) from exc
                where = self.warehouse.where  # which lake, when sites share one
                raise WarehouseError(
                    f"insert into probe_results on {where} failed: {self.warehouse.scrub(exc)}"
                ) from exc
        return (int(probes[0][0]) if probes else 0), (int(events[0][0]) if events else 0)

    def _insert_lines(self, paths: list[Path], quarantine: list[dict[str, Any]]) -> tuple[int, int]:
        """Slow path: decode in Python, set unstorable numbers to NULL (``clamp_row``),
        insert in chunks, and narrow a failing chunk down to the rows to quarantine."""
        probes: list[_Line] = []
        events: list[_Line] = []
        for path in paths:
            for number, text in numbered_lines(path):
                try:
                    row = json.loads(text)
                    if not isinstance(row, dict):
                        raise ValueError("not a JSON object")
                except ValueError:
                    log.error(
                        "spool line %d of %s is not valid JSON; quarantined", number, path.name
                    )
                    quarantine.append(
                        _quarantine_row(text, "invalid_json", path.name, number, None)
                    )
                    continue
                table = row.get(SPOOL_TABLE)
                if table == EVENT_TABLE:
                    events.append(_Line(text, row, path.name, number))
                elif table is None:
                    probes.append(_Line(text, clamp_row(row), path.name, number))
                else:
                    reason = f"unknown table: {str(table)[:100]}"
                    log.error(
                        "spool line %d of %s is for an %s; quarantined", number, path.name, reason
                    )
                    run_id = row.get("run_id") or row.get("event_id")
                    quarantine.append(_quarantine_row(text, reason, path.name, number, run_id))
        inserted = 0
        for start in range(0, len(probes), _CHUNK_ROWS):
            chunk = probes[start : start + _CHUNK_ROWS]
            inserted += self._insert_or_quarantine(chunk, self._insert_probes, quarantine)
        new_events = self._insert_or_quarantine(events, self._insert_events, quarantine)
        return inserted, new_events

    def _insert_probes(self, lines: Sequence[_Line]) -> int:
        frame = probe_frame([line.row for line in lines])
        return self.warehouse.insert_frame("probe_results", frame, key="run_id")

    def _insert_events(self, lines: Sequence[_Line]) -> int:
        rows = [{k: line.row.get(k) for k in EVENT_SCHEMA} for line in lines]
        for row in rows:
            row["occurred_at"] = datetime.fromisoformat(str(row["occurred_at"]))
        return self.warehouse.insert_rows(EVENT_TABLE, rows, key="event_id")

    def _insert_or_quarantine(
        self,
        lines: Sequence[_Line],
        insert: Callable[[Sequence[_Line]], int],
        quarantine: list[dict[str, Any]],
    ) -> int:
        """Insert ``lines``; when that fails because of the rows, split in halves until
        the failing rows are alone, and quarantine those."""
        if not lines:
            return 0
        try:
            return insert(lines)
        except Exception as exc:
            if not _is_row_problem(exc):
                raise
            if len(lines) == 1:
                line = lines[0]
                reason = f"rejected: {str(exc).splitlines()[0][:300]}"
                log.error(
                    "spool row at line %d of %s cannot be stored (%s); quarantined",
                    line.number,
                    line.segment,
                    reason,
                )
                run_id = line.row.get("run_id") or line.row.get("event_id")
                quarantine.append(
                    _quarantine_row(line.text, reason, line.segment, line.number, run_id)
                )
                return 0
            half = len(lines) // 2
            return self._insert_or_quarantine(
                lines[:half], insert, quarantine
            ) + self._insert_or_quarantine(lines[half:], insert, quarantine)

    def _quarantine(self, rows: list[dict[str, Any]]) -> None:
        if rows:
            self.warehouse.insert_rows(QUARANTINE_TABLE, rows, key="line_hash")

    def _insert_side(self, side: list[SideRows]) -> None:
        """One insert per table; on failure the caller queues every batch again (the
        inserts are idempotent on their key, so a batch that did land is not doubled)."""
        merged: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for batch in side:
            merged.setdefault((batch.table, batch.key), []).extend(batch.rows)
        for (table, key), rows in merged.items():
            self.warehouse.insert_rows(table, rows, key=key)


def _quarantine_row(
    line: str, reason: str, segment: str, number: int, run_id: object
) -> dict[str, Any]:
    """A ``quarantined_rows`` row; ``number`` is the line's 1-based number in ``segment``
    (``sql/schema/013_quarantine_line_number.sql``), as the log message gives it."""
    return {
        "line_hash": hashlib.sha256(line.encode("utf-8", "replace")).hexdigest(),
        "quarantined_at": datetime.now(UTC),
        "run_id": run_id if isinstance(run_id, str) else None,
        "reason": reason,
        "segment": segment,
        "line_number": number,
        "line": line,
    }
