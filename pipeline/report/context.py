"""Typed template context of the weekly report: one dataclass per block of the page.

Every string here that came from a probe (model text, error details, provider names)
is plain ``str`` and is escaped by the template. Only ``Chart.svg`` is ``Markup``: it is
SVG that our own plotting code produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from markupsafe import Markup

from pipeline.report.sites import SitesView

__all__ = [
    "QUIET_WEEK",
    "AnalysisInfo",
    "Chart",
    "ComparisonRow",
    "CycleRow",
    "Example",
    "FixedAnswersView",
    "IndexEntry",
    "QualityNote",
    "Recommendation",
    "ReportContext",
    "Section",
    "SignView",
    "Verdict",
]

QUIET_WEEK = "No notable change this week."


@dataclass(frozen=True, slots=True)
class Chart:
    """One inline SVG chart with a caption saying how to read it."""

    key: str
    title: str
    caption: str
    svg: Markup


@dataclass(frozen=True, slots=True)
class Section:
    """A titled group of charts; ``empty_note`` is shown when there is nothing to plot."""

    key: str
    title: str
    intro: str
    charts: list[Chart]
    empty_note: str


@dataclass(frozen=True, slots=True)
class SignView:
    """A warning sign that fires, in words."""

    label: str
    effect: str
    evidence: str  # persistent or first window (q-values go to the verdict's details)
    detail: str  # the analysis's own numbers, shown on hover


@dataclass(frozen=True, slots=True)
class Verdict:
    """The one-screen answer for one provider."""

    provider: str
    model: str
    tone: str  # ok | warn | bad | unknown: drives the colour only
    status: str  # e.g. "Stable", "Degraded: long-context issues"
    since: str  # "since 2026-10-02 (49 days)" or ""
    severity: str  # "short-context TTFT +38 % (95 % CI +30 % to +47 %)" or ""
    confidence: str  # "moderate confidence (wide interval)": a level in words, or ""
    signs: list[SignView]
    changes: list[str]  # what changed this week, in words
    outlook: str = ""  # with too little data: what it cannot tell yet and what it needs
    details: str = ""  # the raw numbers behind the confidence: probes, CI, p- and q-values
    failing: str = ""  # every probe of the last hours failed (``failing_now``), or ""
    unseen: str = ""  # week-over-week comparisons it could not make, or could not see

    @property
    def quiet(self) -> bool:
        """Stable, nothing firing and nothing new this week: one line, not a card (25
        cards took four screens, most of them saying nothing)."""
        nothing = self.changes in ([QUIET_WEEK], [])
        return self.tone == "ok" and not (self.signs or self.failing or self.outlook) and nothing


@dataclass(frozen=True, slots=True)
class Recommendation:
    """Which provider to use now for one context class, and why."""

    context_class: str
    provider: str | None
    reason: str
    tied: tuple[str, ...] = ()  # no clear pick: these are equally good


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    """This week's figures for one provider (formatted for display)."""

    provider: str
    probes: str
    availability: str
    ttft_short: str  # "p50 / p95"
    ttft_long: str
    output_speed: str
    accuracy: str  # "97.1 % (95.2–98.3)"
    flag_rate: str
    cost_per_probe: str


@dataclass(frozen=True, slots=True)
class CycleRow:
    """Where one provider stands in its release cycle."""

    provider: str
    last_release: str
    days_since: str
    position: str
    lead_times: str
    forecast: str
    forecast_basis: str  # what the forecast rests on, shown on hover


@dataclass(frozen=True, slots=True)
class QualityNote:
    """A data-quality remark; ``level`` is info or warn."""

    level: str
    text: str


@dataclass(frozen=True, slots=True)
class Example:
    """A failed or flagged probe this week, with the (untrusted) text it returned."""

    provider: str
    at: str
    outcome: str
    text: str


@dataclass(frozen=True, slots=True)
class AnalysisInfo:
    """Which analysis run the verdicts rest on."""

    analysis_id: str
    finished_at: str
    window: str


@dataclass(frozen=True, slots=True)
class FixedAnswersView:
    """One provider's fixed-question drift, in words (``fixed_answers_changed`` sign)."""

    provider: str
    sentence: str
    evidence: str
    changed: bool


@dataclass(frozen=True, slots=True)
class ReportContext:
    """Everything ``weekly.html`` shows."""

    title: str
    week: str
    period: str
    generated_at: str
    partial_week: bool
    synthetic_rows: int
    total_rows: int
    providers: list[str]
    analysis: AnalysisInfo | None
    verdicts: list[Verdict]
    recommendations: list[Recommendation]
    comparison: list[ComparisonRow]
    sections: list[Section]
    cycle: list[CycleRow]
    cycle_chart: Chart | None
    cycle_findings: list[str]
    quality: list[QualityNote]
    examples: list[Example]
    index_href: str = "index.html"
    notes: list[str] = field(default_factory=list)
    later_week: str | None = None  # an empty week's first later week with probes
    earlier_week: str | None = None  # the last week with probes before the history window
    fixed_answers: list[FixedAnswersView] = field(default_factory=list)
    sites: list[SitesView] = field(default_factory=list)  # two probe sites or more
    all_failing: str = ""  # every provider failing at once (``all_failing``), or ""
    in_short: str = ""  # the cards and picks in one sentence (``in_short``), or ""
    week_lines: str = ""  # how many week-over-week lines were tested and chosen

    @property
    def empty(self) -> bool:
        return self.total_rows == 0


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One week on the index page."""

    week: str
    href: str
    generated_at: datetime
