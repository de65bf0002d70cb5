"""The single DuckDB file: the embedded default backend, the only code that opens the file.

DuckDB lets one process write *or* many processes read a file, never both. So nothing
here keeps the file open: every operation opens a connection, does its work in a short
transaction and closes it. A lock held by another process is retried briefly and then
reported as ``WarehouseBusy`` naming the holder, never as a raw DuckDB error.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from pipeline.warehouse.errors import (
    NewerFile,
    WarehouseBusy,
    WarehouseError,
    cannot_open,
    make_folder,
)
from pipeline.warehouse.extensions import offline
from pipeline.warehouse.migrations import NewerSchema, unchanged

__all__ = ["FileStore"]

_LOCK_PATTERNS = ("Could not set lock", "Conflicting lock")
_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.+?) \(PID (?P<pid>\d+)\)")
_ALIAS = "warehouse"  # the file's catalog name inside a resident instance


def _is_lock_error(exc: BaseException) -> bool:
    return any(pattern in str(exc) for pattern in _LOCK_PATTERNS)


def _busy_message(path: Path, exc: BaseException, waited_s: float) -> str:
    match = _HOLDER.search(str(exc))
    holder = f"process {match['pid']} ({match['exe']})" if match else "another process"
    return (
        f"warehouse {path} is locked by {holder}; waited {waited_s:.1f}s. "
        "Stop that process or retry when it is done."
    )


_HEADER_BYTES = 3 * 4096  # DuckDB's file header and its two database headers


def _cause(refusal: WarehouseError, exc: duckdb.Error) -> BaseException:
    """What ``refusal`` to open the file is chained to: DuckDB's error, except that a newer
    DuckDB's file is refused because of a ``NewerSchema``, the cause the daemon's start
    treats as final (no flush could ever store a row in it, so it stops before any probe
    instead of spooling for ever)."""
    if not isinstance(refusal, NewerFile):
        return exc
    newer = NewerSchema(str(refusal))
    newer.__cause__ = exc
    return newer


class FileStore:
    """Connections to one DuckDB file, opened briefly per operation."""

    def translate(self, statement: str) -> list[str]:
        return unchanged(statement)  # the schema runs as written

    def __init__(self, path: Path, *, lock_wait_s: float, resident: bool) -> None:
        """``resident``: keep one in-memory DuckDB instance for writes and ATTACH the file
        to it per operation (a frequent writer: ~2 ms instead of ~12 ms to open). The file
        is still held only during the operation; DETACH checkpoints and releases it."""
        self.path = path
        self.where = str(path)
        self.lock_wait_s = lock_wait_s
        self.resident = resident
        self._instance: duckdb.DuckDBPyConnection | None = None
        self._attach_lock = threading.RLock()
        self._attached = 0

    def transient(self, exc: duckdb.Error) -> bool:
        """Locks are waited for when opening; a failed statement is final."""
        return False

    def exists(self) -> bool:
        return self.path.exists()

    def writable(self) -> bool:
        """Whether this process may write the file and create its WAL beside it (false on a
        read-only mount, for root too)."""
        return os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)

    @contextmanager
    def schema_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A plain read-write connection for migrations (the folder is created first)."""
        make_folder(self.path.parent)
        created = not self.path.exists()
        try:
            con = self._open(read_only=False)
        except WarehouseBusy:
            raise  # another process holds the file: it is that process's, never ours
        except WarehouseError:
            if created:
                self._remove_cut_header()
            raise
        try:
            yield con
        finally:
            con.close()

    def _remove_cut_header(self) -> None:
        """Remove a file this process began and a full disk cut short inside DuckDB's
        header: every later open would fail on it, space or not. A file holding a whole
        header may be another process's (it created the file meanwhile) and is kept."""
        try:
            cut_short = self.path.stat().st_size < _HEADER_BYTES
        except OSError:
            return
        if cut_short:
            self.path.unlink(missing_ok=True)
            self.path.with_name(f"{self.path.name}.wal").unlink(missing_ok=True)

    def _open(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        """Open the file, retrying while another process holds the lock."""

        def opened() -> duckdb.DuckDBPyConnection:
            con = offline(self._connect(read_only))
            # no progress bar: it would write to the stdout of whoever called us
            con.execute("SET enable_progress_bar = false")
            return con

        return self._retry_lock(opened)

    def _retry_lock(
        self, attempt: Callable[[], duckdb.DuckDBPyConnection]
    ) -> duckdb.DuckDBPyConnection:
        """Run ``attempt`` until it gets the file lock or ``lock_wait_s`` runs out."""
        deadline = time.monotonic() + self.lock_wait_s
        delay = 0.01
        started = time.monotonic()
        while True:
            try:
                return attempt()
            except duckdb.Error as exc:
                if not _is_lock_error(exc):
                    refusal = cannot_open(self.path, exc)
                    raise refusal from _cause(refusal, exc)
                if time.monotonic() >= deadline:
                    waited = time.monotonic() - started
                    raise WarehouseBusy(_busy_message(self.path, exc, waited)) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _connect(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        """One connection. Inside one process DuckDB refuses a read-only connection while a
        read-write one to the same file is open (the demo reads while its daemon flushes);
        the process already owns the file then, so reading through read-write is safe."""
        try:
            return duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.ConnectionException as exc:
            if read_only and "different configuration" in str(exc):
                return duckdb.connect(str(self.path), read_only=False)
            raise

    @contextmanager
    def connect(self, *, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived connection (a resident writer shares one attach across nesting)."""
        if self.resident and not read_only:
            with self._attach_lock:  # one thread at a time; nested calls share the attach
                con = self._attach() if self._attached == 0 else self._instance
                assert con is not None
                self._attached += 1
                failed = False
                try:
                    yield con
                except BaseException:
                    failed = True
                    raise
                finally:
                    self._attached -= 1
                    if self._attached == 0:
                        self._detach(rollback=failed)
            return
        con = self._open(read_only)
        try:
            yield con
        finally:
            con.close()

    def _attach(self) -> duckdb.DuckDBPyConnection:
        if self._instance is None:
            self._instance = offline(duckdb.connect(":memory:"))
            self._instance.execute("SET enable_progress_bar = false")
        instance = self._instance
        quoted = str(self.path).replace("'", "''")

        def attached() -> duckdb.DuckDBPyConnection:
            instance.execute(f"ATTACH '{quoted}' AS {_ALIAS}")
            instance.execute(f"USE {_ALIAS}")
            return instance

        try:
            return self._retry_lock(attached)
        except WarehouseError:
            self.close()
            raise

    def _detach(self, *, rollback: bool) -> None:
        """Checkpoint and release the file; if that fails, drop the instance (also releases)."""
        if self._instance is None:
            return
        try:
            if rollback:  # a failed caller may have left a transaction open
                with contextlib.suppress(duckdb.TransactionException):
                    self._instance.execute("ROLLBACK")
            self._instance.execute("USE memory")
            self._instance.execute(f"DETACH {_ALIAS}")
        except duckdb.Error as exc:
            self.close()
            raise WarehouseError(f"closing warehouse {self.path} failed: {exc}") from exc

    def close(self) -> None:
        """Drop the resident instance (a later write starts a new one)."""
        with self._attach_lock:
            if self._instance is not None:
                instance, self._instance = self._instance, None
                with contextlib.suppress(duckdb.Error):
                    instance.close()
