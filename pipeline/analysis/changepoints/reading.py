"""How a candidate change is judged depends on what the series is and who reads it.

**A series read once** (``SERIES``, what ``detect(values)`` does): a reader looking at a
whole history (a population, a price, an emission curve). Its null is any smooth curve
such series follow: a polynomial of degree 1 or 2, or a line plus a slow exponential
(growth, decay, saturation), by BIC. Its test allows for structure the AR(1) model leaves
in the residuals (a prewhitened Newey-West check), and the search's choice of position is
paid for with the effective number of positions of the window, not all of them. Each
change is confirmed at ``1/n`` unless a level is given. The reader sees the whole series at
once, so an excursion shorter than 2 % of it reads as a spike if it returns where it was,
and as one transition if it does not, never as two changes (a plot 500 pixels wide draws
it in ten); and it judges a change's size against the chart's height, which a burst of a
few points sets and a one-point outlier does not (``material.series_range``).

**A monitor's metric** (``monitored(level)``): an hourly latency or error rate that should be
stable. It keeps the test the product's phase benchmark was built and checked with, since
each part of a series' reading, alone, moved that benchmark: its null is the polynomial
drift alone (a growth curve is not what a stable metric is expected to follow), the search
is paid for with every position (Bonferroni), and the AR(1) model is trusted; the level is
fixed because a monitor counts false alarms per day, not per series. A burst that ends is
an incident there, so every excursion that passes is kept, and the materiality floor is
measured on the 1st to 99th percentile range, so that one incident does not hide the next
step (with the chart's height, the product's 180-day TTFT series lost a planted onset).
Its newest change is the news, so a change the search could only place at its limit near
an end is dated where the data put it (``edges``).
"""

from __future__ import annotations

from dataclasses import dataclass

STREAM_LEVEL = 0.01  # a monitor's level per change: its false alarms count per day, not per series


@dataclass(frozen=True, slots=True)
class Reading:
    """The test a candidate change must pass (see the module)."""

    level: float | None = None  # per confirmed change; None: 1/n for n points
    growth_null: bool = True  # the null's curve may be a line plus a slow exponential
    effective_positions: bool = True  # the search paid for by effective positions, not all
    hac: bool = True  # the F statistic checked for dependence the AR(1) model left
    # an excursion shorter than this share of the series is a spike (no change) if it
    # returns, one transition if it does not
    spike_share: float = 0.02
    # the materiality floor's range is the chart's extremes (bursts included, one-point
    # outliers not), as a reader of the whole series sees it; else 1st-99th percentile
    chart_extremes: bool = True
    # in a series with a cycle, a level or slope change must show in whole-cycle means too
    whole_cycles: bool = True
    # a change at the search's limit near either end is dated where the data put it
    # (``edges``): a monitor's newest change is the one it is asked about
    date_at_edges: bool = False

    def alpha(self, n: int) -> float:
        """The level of each confirmed change in a series of ``n`` points."""
        return 1.0 / max(n, 1) if self.level is None else self.level

    def resolution(self, n: int) -> float:
        """How many points of a series of ``n`` this reader sees as one place: two changes
        that close are one transition (0 for a monitor, which keeps every excursion)."""
        return self.spike_share * n


SERIES = Reading()


def monitored(level: float = STREAM_LEVEL) -> Reading:
    """A monitor's reading at a fixed ``level``: polynomial null, Bonferroni, AR(1) trusted."""
    return Reading(
        level,
        growth_null=False,
        effective_positions=False,
        hac=False,
        spike_share=0.0,
        chart_extremes=False,
        whole_cycles=False,
        date_at_edges=True,
    )
