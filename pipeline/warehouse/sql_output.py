"""Print or save a query result as a table, CSV, JSON or Parquet."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.table import Table

from pipeline.atomic_files import replacing

__all__ = ["FORMATS", "write_frame"]

FORMATS = ("table", "csv", "json", "parquet")


def _table(frame: pl.DataFrame, max_rows: int = 200) -> Table:
    table = Table(show_lines=False)
    for name in frame.columns:
        table.add_column(name, overflow="fold")
    for row in frame.head(max_rows).iter_rows():
        table.add_row(*("" if v is None else str(v) for v in row))
    if frame.height > max_rows:
        table.caption = f"{max_rows} of {frame.height} rows shown; use --format csv for all"
    return table


def _flatten_nested(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV has no lists or structs: nested cells become JSON text."""
    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    return frame.with_columns(
        pl.Series(name, [json.dumps(v, default=str) for v in frame[name].to_list()])
        for name in nested
    )


def write_frame(frame: pl.DataFrame, fmt: str, out: Path | None) -> None:
    """Write ``frame`` in ``fmt`` to ``out`` (or stdout; parquet needs a file)."""
    if fmt not in FORMATS:
        raise ValueError(f"--format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt == "parquet" and out is None:
        raise ValueError("--format parquet needs --out FILE")
    if out is None and fmt == "table":
        Console(width=200).print(_table(frame))  # styled when stdout is a terminal
        return
    if out is None:
        sys.stdout.write(_text(frame, fmt))
        return
    with replacing(out) as temporary:  # a reader of ``out`` never sees half a result
        if fmt == "parquet":
            frame.write_parquet(temporary)
        else:
            temporary.write_text(_text(frame, fmt), encoding="utf-8")


def _text(frame: pl.DataFrame, fmt: str) -> str:
    """``frame`` as a table, CSV or JSON, ending with one newline."""
    if fmt == "table":
        buffer = io.StringIO()
        Console(file=buffer, width=200).print(_table(frame))
        text = buffer.getvalue()
    elif fmt == "csv":
        text = _flatten_nested(frame).write_csv()
    else:
        text = frame.write_json()
    return text if text.endswith("\n") else text + "\n"
