"""Ending a transaction that failed, on any backend."""

from __future__ import annotations

import contextlib

import duckdb

__all__ = ["rollback"]


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back what a failed statement left open. A failed COMMIT (a lake's catalog
    refusing it) leaves no transaction, and ROLLBACK's error would hide the real one."""
    with contextlib.suppress(duckdb.TransactionException):
        con.execute("ROLLBACK")
