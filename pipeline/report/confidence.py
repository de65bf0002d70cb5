"""How sure a verdict can be, in words, from the data behind its phase.

The analysis stores a per-phase ``confidence`` of one minus the smallest p-value among the
signals that moved (and 1.0 for stable phases), which reads "100 %" for any sizeable
sample and says nothing about a stable phase. The report grades the evidence instead:

* **too little data**: fewer than ``MIN_PROBES`` probes or ``MIN_HOURS`` probed hours in
  the phase. 30 probes is the usual floor for a bootstrap interval of a median to mean
  anything; 24 hours is the analysis's own resolution (change points closer than a day
  are merged), so a shorter phase is below what it can date.
* **high**: at least ``HIGH_PROBES`` probes over ``MIN_BASELINE_HOURS`` probed hours (the
  span the analysis demands of a baseline), a severity interval at most ``HIGH_WIDTH``
  wide (+-10 %, twice the 5 % smallest latency change the analysis reports, so the size
  of the change is known to within its own threshold), for a degradation a phase test
  p <= ``HIGH_P`` (ten times stricter than the 0.01 the analysis tests at) with an
  interval that excludes no change, and the two-regime model's average daily probability
  agreeing with the label (>= 0.8 degraded, <= 0.2 stable) when that model was fitted.
* **moderate**: at least ``MODERATE_PROBES`` probes, an interval at most
  ``MODERATE_WIDTH`` wide (+-25 %), and for a degradation p < 0.01.
* **low**: everything else.

A degradation whose answers are too few for a latency severity (an outage;
``severity.MIN_SEVERITY_HOURS``) is sized by the share of its probes that failed. That
share needs no interval test: the probe counts above bound it (a 95 % Wilson interval is
at most +-9.8 points at ``MODERATE_PROBES`` and +-5.7 at ``HIGH_PROBES``).

Each level carries the reasons it is not higher, so the reader sees what limits it.
Raw p-values go to a details line, never into the verdict's sentence. A latency signal's
phase p is at least that of a test of the whole series for a level change anywhere
(``phases.series_gate``), so the search that placed the phase is allowed for; error,
accuracy and flag counts are still tested at the boundaries the search chose, and the
details line says which. How often a changeless series gets a phase is also measured
(``bench_analysis_accuracy.py``: false phases per 180 stable days).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pipeline.analysis.phases import MIN_BASELINE_HOURS
from pipeline.report import fmt

__all__ = ["Evidence", "Grade", "grade"]

MIN_PROBES = 30
MIN_HOURS = 24
MODERATE_PROBES = 100
HIGH_PROBES = 300
MODERATE_WIDTH = 0.50
HIGH_WIDTH = 0.20
PHASE_ALPHA = 0.01
HIGH_P = 0.001
AGREE = 0.8


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one phase rests on.

    Attributes:
        degraded: whether the phase claims a change (degraded or recovering).
        probes: attempted probes of the provider inside the phase.
        hours: hours with at least one probe inside the phase.
        interval: the severity's 95 % interval (relative change), or None.
        pvalue: the smallest p-value of the signals that moved (degradations only).
        agreement: the two-regime model's mean probability that the label is right, or None.
        sized_by_failures: the phase is sized by its failed probes, not by a latency
            interval (too few answers for one).
    """

    degraded: bool
    probes: int
    hours: int
    interval: tuple[float, float] | None
    pvalue: float | None
    agreement: float | None
    sized_by_failures: bool = False


@dataclass(frozen=True, slots=True)
class Grade:
    """A confidence level in words, what keeps it from the next level, and raw numbers."""

    level: str  # high | moderate | low | too little data
    limits: list[str]
    details: str

    @property
    def words(self) -> str:
        if self.level == "too little data":
            return "too little data to be sure: " + "; ".join(self.limits)
        text = f"{self.level} confidence"
        return f"{text} ({'; '.join(self.limits)})" if self.limits else text


def _width(interval: tuple[float, float] | None) -> float:
    return interval[1] - interval[0] if interval else math.inf


def _details(e: Evidence) -> str:
    parts = [f"{e.probes:,} probes in {e.hours} probed hours"]
    if e.interval:
        parts.append(f"severity 95 % CI {fmt.rel_interval(*e.interval)}")
    if e.pvalue is not None and fmt.known(e.pvalue):
        # 1 - p was stored as a float: below ~1e-15 it rounds to 1 and p reads as 0.
        shown = "< 1e-15" if e.pvalue < 1e-15 else f"= {e.pvalue:.2g}"
        parts.append(
            f"phase test p {shown} (latency: the search allowed for; counts: at the "
            "boundaries it chose)"
        )
    if e.agreement is not None:
        parts.append(f"regime model agrees {fmt.pct(e.agreement, 0)}")
    return "; ".join(parts)


def _high_limits(e: Evidence) -> list[str]:
    limits = []
    if e.probes < HIGH_PROBES or e.hours < MIN_BASELINE_HOURS:
        limits.append(f"{e.probes:,} probes over {e.hours} h")
    if not e.sized_by_failures and _width(e.interval) > HIGH_WIDTH:
        limits.append("wide interval" if e.interval else "no size estimate")
    if e.degraded and (e.pvalue is None or e.pvalue > HIGH_P):
        limits.append("weak test")
    elif e.degraded and e.interval is not None and e.interval[0] <= 0 <= e.interval[1]:
        limits.append("interval includes no change")
    if e.agreement is not None and e.agreement < AGREE:
        limits.append(f"regime model agrees only {fmt.pct(e.agreement, 0)}")
    return limits


def grade(e: Evidence) -> Grade:
    """The confidence level of one phase by the rule in the module docstring."""
    details = _details(e)
    if e.probes < MIN_PROBES or e.hours < MIN_HOURS:
        need = [f"only {e.probes:,} probe(s) over {e.hours} h"]
        need.append(f"a phase needs {MIN_PROBES} probes over {MIN_HOURS} h")
        return Grade("too little data", need, details)
    limits = _high_limits(e)
    if not limits:
        return Grade("high", [], details)
    moderate = (
        e.probes >= MODERATE_PROBES
        and (e.sized_by_failures or _width(e.interval) <= MODERATE_WIDTH)
        and not (e.degraded and (e.pvalue is None or e.pvalue >= PHASE_ALPHA))
    )
    return Grade("moderate" if moderate else "low", limits, details)
