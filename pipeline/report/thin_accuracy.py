"""Accuracy panels with no day the chart may draw, said in words instead.

The accuracy chart leaves out every day with fewer than ``MIN_SCORED`` scored answers
(a rate from a handful of answers reads as a measurement it is not). A provider probed
lightly, or scored on only some probes, can have no such day at all: its panel was an
empty axis with no word why. Its panel and the chart's caption now say what there is:
how many scored answers the charted days hold, and the week's total as a count, with no
rate or interval the answers cannot carry.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

__all__ = ["MIN_SCORED", "ThinAccuracy", "thin_accuracy"]

MIN_SCORED = 30
"""Scored answers an accuracy needs before the report shows it as a rate with an interval.

Below 30 even a perfect score's 95 % Wilson interval is over 11 points wide (30 of 30:
88.6-100 %), and at the 90-97 % that probes usually score it spans 16-23 points (19 of
20: 76-99 %): wider than the drop between a healthy and a degraded model. A percentage
to one decimal would read as a measurement ("100 %" from one answer), so the table shows
the count and says it is too few to judge, and the chart leaves such days out (also of
its shared axis, which one answer at 0 % would stretch down to zero for everyone)."""


@dataclass(frozen=True, slots=True)
class ThinAccuracy:
    """One provider whose charted days all have fewer than ``MIN_SCORED`` scored answers."""

    provider: str
    scored: int  # scored answers over the charted days
    week_scored: int  # of them, in the report's week
    week_correct: int

    @property
    def panel(self) -> str:
        """The words drawn in the provider's empty accuracy panel (two short lines)."""
        if self.scored == 0:
            return "no scored answers on the charted days"
        few = f"{self.scored} scored answers, under {MIN_SCORED} a day: too few to chart"
        return f"{few}\n{self._week}"

    @property
    def sentence(self) -> str:
        """The same, as a sentence of the chart's caption."""
        if self.scored == 0:
            return f"{self.provider}: no scored answers over the charted days."
        return (
            f"{self.provider}: {self.scored} scored answers over the charted days, fewer than "
            f"{MIN_SCORED} on every day, so none is charted; {self._week}."
        )

    @property
    def _week(self) -> str:
        if self.week_scored == 0:
            return "none scored this week"
        return f"week total: {self.week_correct} of {self.week_scored} correct"


def thin_accuracy(
    accuracy: pl.DataFrame, providers: list[str], week: tuple[datetime, datetime]
) -> dict[str, ThinAccuracy]:
    """Providers with probes on the charted days but no day of ``MIN_SCORED`` scored
    answers (none at all included: every probe failed, or none is scored)."""
    if accuracy.height == 0:
        return {}
    per = (
        accuracy.filter(pl.col("provider").is_in(providers))
        .group_by("provider")
        .agg(
            pl.col("n_scored").sum().alias("scored"),
            pl.col("n_scored").max().alias("most"),
            pl.col("n_scored")
            .filter(pl.col("day").is_between(*week, closed="left"))
            .sum()
            .alias("ws"),
            pl.col("n_correct")
            .filter(pl.col("day").is_between(*week, closed="left"))
            .sum()
            .alias("wc"),
        )
        .filter(pl.col("most") < MIN_SCORED)
    )
    return {
        str(r["provider"]): ThinAccuracy(
            str(r["provider"]), int(r["scored"]), int(r["ws"]), int(r["wc"])
        )
        for r in per.iter_rows(named=True)
    }
