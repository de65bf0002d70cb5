"""A provider that answered under more than one model name this week.

The verdict's header shows the newest name only, and the week's figures (table, picks,
week-over-week moves) pool every probe of the provider: a rename on Wednesday, to another
model or another version, must be said on the card, or the week's numbers read as one
model's.
"""

from __future__ import annotations

from itertools import pairwise

import polars as pl

from pipeline.report import fmt
from pipeline.report.data import ReportData

__all__ = ["model_names_this_week"]


def model_names_this_week(data: ReportData, provider: str) -> list[str]:
    """One line when ``provider`` answered under two or more names this week, else none."""
    names = data.model_names
    if names.height == 0:
        return []
    mine = names.filter(pl.col("provider") == provider).sort("first_at")
    if mine.height < 2:
        return []
    rows = list(mine.iter_rows(named=True))
    if any(b["first_at"] < a["last_at"] for a, b in pairwise(rows)):
        counts = ", ".join(f"{r['model']} ({fmt.count(int(r['n']), 'probe')})" for r in rows)
        return [
            f"Answered under {len(rows)} model names in turn this week: {counts}. This "
            "week's figures mix them."
        ]
    spans = "; ".join(
        f"{r['model']} from {fmt.stamp(r['first_at'])} to {fmt.stamp(r['last_at'])} "
        f"({fmt.count(int(r['n']), 'probe')})"
        for r in rows
    )
    return [f"Model name changed this week: {spans}. This week's figures mix them."]
