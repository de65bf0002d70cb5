"""What a heatmap cell is, and its answers counted inside DuckDB at every level.

Returning every answer to Python made the report's cost grow with the probe cadence;
``cells_sql`` counts the cells and takes their medians in the query, so the report
reads at most ``len(LEVELS)`` x 168 rows per provider, whatever the cadence. It lives
apart from the chart so the report's data module can use it without the chart's imports.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DAYS", "LEVELS", "Cells", "cells_sql"]

DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


@dataclass(frozen=True, slots=True)
class Cells:
    """What one heatmap cell is: a weekday (or every day pooled) and a block of hours."""

    pool_days: bool
    hours: int

    @property
    def rows(self) -> int:
        return 1 if self.pool_days else 7

    @property
    def cols(self) -> int:
        return 24 // self.hours

    def name(self, row: int, col: int) -> str:
        """A cell in words, for its tooltip: "Tue 12-15h", "every day 06h"."""
        day = "every day" if self.pool_days else DAYS[row]
        start = col * self.hours
        hours = f"{start:02d}h" if self.hours == 1 else f"{start:02d}-{start + self.hours:02d}h"
        return f"{day} {hours}"

    def words(self) -> str:
        """The caption's "a cell is ..."."""
        span = "one hour" if self.hours == 1 else f"{self.hours} hours"
        if self.pool_days:
            return f"A cell is {span} of the day, all days of the last four weeks pooled"
        return f"A cell is {span} of one weekday over the last four weeks"


# Finest first: hour of week, wider blocks of the week, then hour of day (weekdays
# pooled), then wider blocks of the day. Hourly probing over 28 days gives 4 answers an
# hour of the week, too few; 3-hour blocks of the week give 12.
LEVELS = tuple(Cells(False, h) for h in (1, 2, 3, 4)) + tuple(
    Cells(True, h) for h in (1, 2, 3, 4, 6)
)


def cells_sql(answers: str) -> str:
    """Per provider, level (index into ``LEVELS``) and cell: answers ``n`` and their
    median ``ttft``, from ``answers``, a query of (provider, dow, hod, ttft) with dow 0
    for Monday. Successful probes may carry no TTFT (nothing usable streamed), and a zero
    one has no ratio: such answers count in no cell."""
    levels = ", ".join(f"({i}, {c.pool_days}, {c.hours})" for i, c in enumerate(LEVELS))
    return f"""
SELECT a.provider, l.level,
       CASE WHEN l.pool_days THEN 0 ELSE a.dow END AS "row", a.hod // l.hours AS col,
       count(*) AS n, median(a.ttft) AS ttft
FROM ({answers}) AS a CROSS JOIN (VALUES {levels}) AS l(level, pool_days, hours)
WHERE a.ttft > 0 AND isfinite(a.ttft)
GROUP BY ALL
"""
