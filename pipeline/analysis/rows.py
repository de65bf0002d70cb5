"""Result rows as analysis collects them, and the time conversions every table uses.

Rows are gathered per table and turned into frames with the table's schema at the end
(``pipeline.analysis.schemas``), so an empty table still has its columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import numpy as np
import polars as pl

from pipeline.analysis.schemas import SCHEMAS

__all__ = ["ResultRows", "as_date", "as_datetime", "as_hour64", "finite"]


def as_datetime(h: np.datetime64) -> datetime:
    return datetime.fromtimestamp(int(h.astype("datetime64[s]").astype(np.int64)), tz=UTC)


def as_hour64(t: datetime) -> np.datetime64:
    """A timezone-aware datetime as a naive UTC numpy hour."""
    return np.datetime64(int(t.timestamp()) // 3600, "h")


def as_date(d: np.datetime64) -> date:
    return as_datetime(d.astype("datetime64[h]")).date()


def finite(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


@dataclass
class ResultRows:
    rows: dict[str, list[dict[str, Any]]]

    def add(self, table: str, **row: Any) -> None:
        self.rows.setdefault(table, []).append(row)

    def frames(self) -> dict[str, pl.DataFrame]:
        return {
            t: pl.DataFrame(self.rows.get(t, []), schema=schema, orient="row")
            if self.rows.get(t)
            else pl.DataFrame(schema=schema)
            for t, schema in SCHEMAS.items()
        }
