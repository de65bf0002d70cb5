"""Moves spooled results into DuckDB in short, idempotent transactions.

Runs in a worker thread (never on the event loop). A flush seals the active spool
segment, inserts every sealed segment's rows keyed by ``run_id`` and deletes the
segments only after the commit. When a reader holds the file the warehouse raises
``WarehouseBusy`` after its (short) lock wait: the segments stay, probing goes on,
and the next flush retries with a growing back-off.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipeline.daemon.spool import Segment, Spool, read_segment
from pipeline.warehouse import Warehouse, WarehouseBusy, WarehouseError
from probes.result import ProbeResult

__all__ = ["PROBE_SCHEMA", "FlushOutcome", "Flusher", "probe_frame"]

log = logging.getLogger(__name__)

_CHUNK_ROWS = 5_000
_REJECTED = "rejected.jsonl"


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


_COLUMNS = ", ".join(f"'{name}': '{_duckdb_type(t)}'" for name, t in PROBE_SCHEMA.items())
_INSERT_JSON = (
    "INSERT INTO probe_results BY NAME SELECT * FROM read_json(?, "
    f"format = 'newline_delimited', columns = {{{_COLUMNS}}}) ON CONFLICT DO NOTHING"
)


class _BadSpoolData(Exception):
    """DuckDB could not parse a spool segment (corruption, not a torn tail)."""


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


@dataclass(frozen=True, slots=True)
class FlushOutcome:
    """What one flush did; ``busy`` means a reader held the file and nothing moved."""

    rows: int = 0
    inserted: int = 0
    segments: int = 0
    seconds: float = 0.0
    busy: bool = False
    error: str | None = None
    held_s: float = 0.0  # how long the DuckDB file was held (open to close)
    depth: int = 0  # rows left in the spool afterwards


@dataclass(slots=True)
class _SideRows:
    table: str
    key: str
    rows: list[dict[str, Any]]


class Flusher:
    """Owns the spool → warehouse move; thread-safe, one flush at a time."""

    def __init__(self, spool: Spool, warehouse: Warehouse) -> None:
        self.spool = spool
        self.warehouse = warehouse
        self._lock = threading.Lock()
        self._side: list[_SideRows] = []
        self._side_lock = threading.Lock()
        self.consecutive_busy = 0

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No flush runs inside this block (e.g. while a report reads the file)."""
        with self._lock:
            yield

    def add_side_rows(self, table: str, rows: list[dict[str, Any]], *, key: str) -> None:
        """Queue rows for another table (daemon events, alert events); best effort."""
        with self._side_lock:
            self._side.append(_SideRows(table, key, rows))

    def flush_once(self) -> FlushOutcome:
        """Seal, insert and delete; never raises for a busy or failing warehouse.

        ``seconds`` runs from the seal to the deletion of the flushed segments: it covers
        opening the file, the insert and its commit, closing (checkpoint, lock release)
        and the spool bookkeeping; ``held_s`` is the part during which the file was held.
        """
        with self._lock:
            started = time.perf_counter()
            segments = self.spool.seal()
            counts = [(s, self._complete_lines(s)) for s in segments]
            live = [s for s, lines in counts if lines > 0]
            rows = sum(lines for _, lines in counts)
            try:
                held = time.perf_counter()
                inserted = self._write(live)
                held = time.perf_counter() - held
            except WarehouseBusy as exc:
                self.consecutive_busy += 1
                if self.consecutive_busy == 1 or self.consecutive_busy % 30 == 0:
                    log.warning("flush deferred, spool keeps the rows: %s", exc)
                seconds = time.perf_counter() - started
                return FlushOutcome(busy=True, seconds=seconds, depth=self.spool.depth())
            except WarehouseError as exc:
                log.error("flush failed, spool keeps the rows: %s", exc)
                seconds = time.perf_counter() - started
                return FlushOutcome(error=str(exc), seconds=seconds, depth=self.spool.depth())
            self.spool.remove(segments)
            if inserted < rows:
                log.info("flush skipped %d rows already stored (replay)", rows - inserted)
            if self.consecutive_busy:
                log.info(
                    "warehouse available again after %d deferred flushes", self.consecutive_busy
                )
            self.consecutive_busy = 0
            return FlushOutcome(
                rows=rows,
                inserted=inserted,
                segments=len(segments),
                seconds=time.perf_counter() - started,
                held_s=held,
                depth=self.spool.depth(),
            )

    def _write(self, live: list[Segment]) -> int:
        """Probe rows, then side rows, under one open of the file (none if idle)."""
        with self._side_lock:
            idle = not live and not self._side
        if idle:
            return 0
        session = self.warehouse.connect() if self.warehouse.resident else nullcontext()
        with session:  # a resident warehouse: nested writes share this attach
            inserted = self._insert(live)
            self._flush_side_rows()
        return inserted

    def _insert(self, live: list[Segment]) -> int:
        """Insert every row of ``live`` in one statement (line by line if DuckDB balks)."""
        if not live:
            return 0
        try:
            return self._insert_json([s.path for s in live])
        except _BadSpoolData as exc:
            log.error("spool data DuckDB cannot parse (%s); inserting line by line", exc)
            return self._insert_lines(live)

    def _complete_lines(self, segment: Segment) -> int:
        """Cut a torn tail (a write interrupted by a crash) off a sealed segment."""
        data = segment.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            self._reject(segment.path, data[end:].decode("utf-8", "replace"))
            with open(segment.path, "r+b") as fh:
                fh.truncate(end)
                os.fsync(fh.fileno())
        return data.count(b"\n")

    def _insert_json(self, paths: list[Path]) -> int:
        """DuckDB reads the JSON lines itself: no per-row Python work, GIL released.

        One auto-committed statement is one transaction; few calls into DuckDB also mean
        few waits for the GIL while the event loop is busy.
        """
        with self.warehouse.connect() as con:
            con.execute("SET threads = 1")  # a flush is small; leave the other core to probes
            try:
                result = con.execute(_INSERT_JSON, [[str(p) for p in paths]]).fetchall()
            except duckdb.Error as exc:
                if isinstance(exc, (duckdb.InvalidInputException, duckdb.ConversionException)):
                    raise _BadSpoolData(str(exc).splitlines()[0]) from exc
                raise WarehouseError(f"insert into probe_results failed: {exc}") from exc
        return int(result[0][0]) if result else 0

    def _insert_lines(self, segments: list[Segment]) -> int:
        """Slow path: decode in Python, set undecodable lines aside."""
        rows: list[dict[str, Any]] = []
        for segment in segments:
            for line in read_segment(segment.path):
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    self._reject(segment.path, line)
        inserted = 0
        for start in range(0, len(rows), _CHUNK_ROWS):
            frame = probe_frame(rows[start : start + _CHUNK_ROWS])
            inserted += self.warehouse.insert_frame("probe_results", frame, key="run_id")
        return inserted

    def _reject(self, path: Path, line: str) -> None:
        """Keep an undecodable line aside instead of blocking the spool forever."""
        log.error("spool line in %s is not valid JSON; moved to %s", path.name, _REJECTED)
        with open(self.spool.directory / _REJECTED, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def _flush_side_rows(self) -> None:
        """One insert per table; rows stay queued when the warehouse is unavailable."""
        with self._side_lock:
            pending, self._side = self._side, []
        merged: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for batch in pending:
            merged.setdefault((batch.table, batch.key), []).extend(batch.rows)
        left = [_SideRows(table, key, rows) for (table, key), rows in merged.items()]
        try:
            while left:
                self.warehouse.insert_rows(left[0].table, left[0].rows, key=left[0].key)
                left.pop(0)
        finally:
            if left:
                with self._side_lock:
                    self._side = left + self._side
