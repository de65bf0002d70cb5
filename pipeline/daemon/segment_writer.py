"""Writes sealed spool segments (and queued side rows) into DuckDB, then deletes them.

This is the part of a flush that holds the warehouse file. It runs in the daemon's
flush process (``flush_process``), or in the calling thread where a process is not
worth it (tests, ``quiet`` benchmarks). Everything it needs travels in a ``FlushBatch``
(paths and plain rows), so both places run exactly the same code.

Order, and why it is safe at any crash point: cut torn tails (never acknowledged) →
insert the rows whose ``run_id`` is not stored yet (one transaction) →
release the file → delete the segments. A crash before the delete replays rows that
the insert then skips, so each acknowledged result is stored exactly once.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipeline.daemon.spool import read_segment, remove_segments
from pipeline.warehouse import Warehouse, WarehouseError, insert_new_sql
from probes.result import ProbeResult

__all__ = ["PROBE_SCHEMA", "FlushBatch", "SegmentWriter", "SideRows", "Written", "probe_frame"]

log = logging.getLogger(__name__)

_CHUNK_ROWS = 5_000
REJECTED = "rejected.jsonl"


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
_INSERT_JSON = insert_new_sql(
    "probe_results",
    f"SELECT * FROM read_json(?, format = 'newline_delimited', columns = {{{_COLUMNS}}})",
    key="run_id",
)


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
    """One flush's work: sealed segment files, oldest first, and side rows."""

    paths: list[Path]
    side: list[SideRows] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Written:
    """What a write did. ``finished_at`` is ``time.perf_counter()`` after the segments
    were deleted: CLOCK_MONOTONIC, comparable across processes on one machine."""

    rows: int
    inserted: int
    held_s: float
    finished_at: float
    cpu_s: float  # CPU time of the writing process (all its threads) during the write


class _BadSpoolData(Exception):
    """DuckDB could not parse a spool segment (corruption, not a torn tail)."""


class SegmentWriter:
    """Spool segments → warehouse; raises ``WarehouseBusy``/``WarehouseError`` and then
    leaves every segment in place."""

    def __init__(self, warehouse: Warehouse, spool_dir: Path) -> None:
        self.warehouse = warehouse
        self.spool_dir = spool_dir

    def write(self, batch: FlushBatch) -> Written:
        """Insert the batch under one hold of the file, then delete its segments."""
        cpu = time.process_time()
        existing = [p for p in batch.paths if p.exists()]
        counts = [(p, self._complete_lines(p)) for p in existing]
        live = [p for p, lines in counts if lines > 0]
        rows = sum(lines for _, lines in counts)
        held = 0.0
        inserted = 0
        if live or batch.side:
            held = time.perf_counter()
            session = self.warehouse.connect() if self.warehouse.resident else nullcontext()
            with session:  # a resident warehouse: nested writes share this attach
                inserted = self._insert(live)
                self._insert_side(batch.side)
            held = time.perf_counter() - held
        remove_segments(self.spool_dir, existing)
        return Written(rows, inserted, held, time.perf_counter(), time.process_time() - cpu)

    def start(self) -> None:
        """Nothing to start: the warehouse is opened per write."""

    def close(self) -> None:
        self.warehouse.close()

    def _insert(self, live: list[Path]) -> int:
        """Insert every row of ``live`` in one statement (line by line if DuckDB balks)."""
        if not live:
            return 0
        try:
            return self._insert_json(live)
        except _BadSpoolData as exc:
            log.error("spool data DuckDB cannot parse (%s); inserting line by line", exc)
            return self._insert_lines(live)

    def _complete_lines(self, path: Path) -> int:
        """Cut a torn tail (a write interrupted by a crash) off a sealed segment."""
        data = path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            self._reject(path, data[end:].decode("utf-8", "replace"))
            with open(path, "r+b") as fh:
                fh.truncate(end)
                os.fsync(fh.fileno())
        return data.count(b"\n")

    def _insert_json(self, paths: list[Path]) -> int:
        """DuckDB reads the JSON lines itself: no per-row Python work.

        One auto-committed statement is one transaction.
        """
        with self.warehouse.connect() as con:
            con.execute("SET threads = 1")  # a flush is small: one thread spends the least CPU
            try:
                result = con.execute(_INSERT_JSON, [[str(p) for p in paths]]).fetchall()
            except duckdb.Error as exc:
                if isinstance(exc, (duckdb.InvalidInputException, duckdb.ConversionException)):
                    raise _BadSpoolData(str(exc).splitlines()[0]) from exc
                raise WarehouseError(f"insert into probe_results failed: {exc}") from exc
        return int(result[0][0]) if result else 0

    def _insert_lines(self, paths: list[Path]) -> int:
        """Slow path: decode in Python, set undecodable lines aside."""
        rows: list[dict[str, Any]] = []
        for path in paths:
            for line in read_segment(path):
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    self._reject(path, line)
        inserted = 0
        for start in range(0, len(rows), _CHUNK_ROWS):
            frame = probe_frame(rows[start : start + _CHUNK_ROWS])
            inserted += self.warehouse.insert_frame("probe_results", frame, key="run_id")
        return inserted

    def _reject(self, path: Path, line: str) -> None:
        """Keep an undecodable line aside instead of blocking the spool forever."""
        log.error("spool line in %s is not valid JSON; moved to %s", path.name, REJECTED)
        with open(self.spool_dir / REJECTED, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def _insert_side(self, side: list[SideRows]) -> None:
        """One insert per table; on failure the caller queues every batch again (the
        inserts are idempotent on their key, so a batch that did land is not doubled)."""
        merged: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for batch in side:
            merged.setdefault((batch.table, batch.key), []).extend(batch.rows)
        for (table, key), rows in merged.items():
            self.warehouse.insert_rows(table, rows, key=key)
