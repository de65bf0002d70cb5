"""The report's words and numbers agree with each other: release-cycle arithmetic,
confidence that the data can carry, and what a first week can and cannot tell.

Warehouses are real DuckDB files; the release-cycle history is analysed by the real
analysis run, and every test pins the report's ``now``.
"""

from __future__ import annotations

import html as html_lib
import re
import uuid
from dataclasses import fields
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from pipeline.analysis.orchestrate import run_analysis
from pipeline.analysis.release_cycles import synchronization_test
from pipeline.report import IsoWeek, render_report
from pipeline.report.claims import cycle_findings
from pipeline.report.confidence import Evidence, grade
from pipeline.report.data import ReportData
from pipeline.warehouse import Warehouse
from tests.support.planted import START, PlantedPhase, PlantedProvider, generate, releases_frame
from tests.support.report import Series, insert_analysis, probe_frame

_ONSETS = re.compile(r"^(?P<who>.+?): (?P<k>\d+) of (?P<n>\d+) degradation onset")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")

# kestrel degrades on days 8-15 (its vendor releases on days 23 and 25: two lead times)
# and again from day 40 on (ongoing, so a forecast). heron degrades on days 15-22 and its
# vendor releases on day 45. heron's onset also lies within 90 days before kestrel's
# releases and kestrel's second onset before heron's release: a pooled test over "any
# vendor's release" counts both, the per-provider tests do not.
CYCLE_PROVIDERS = [
    PlantedProvider(
        "kestrel",
        "Kestrel",
        [PlantedPhase(8, 15, 1.6, 1.6), PlantedPhase(40, 99, 1.6, 1.6)],
        releases=[23, 25],
        gaps=0,
    ),
    PlantedProvider("heron", "Heron", [PlantedPhase(15, 22, 1.6, 1.6)], releases=[45], gaps=0),
]


NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)


def _history(wh: Warehouse) -> None:
    frame = probe_frame([Series("alpha", "alpha-short", "short")], end=NOW, days=60)
    wh.insert_frame("probe_results", frame, key="run_id")


def _text(fragment: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", fragment)).replace("\u00a0", " ").strip()


def _findings(page: str) -> list[str]:
    block = page.split('<ul class="findings">', 1)[1].split("</ul>", 1)[0]
    return [_text(li) for li in re.findall(r"<li>(.*?)</li>", block, re.S)]


def _cycle_cells(page: str) -> dict[str, list[str]]:
    """Release-cycle table cells per provider; the forecast's hover basis comes last."""
    section = page.split('<h2 id="cycle">', 1)[1].split("</tbody>", 1)[0]
    rows = {}
    for row in re.findall(r"<tr><td>(.*?)</tr>", section, re.S):
        cells = [_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", "<td>" + row, re.S)]
        basis = re.search(r'<td title="([^"]*)">', row)
        rows[cells[0]] = [*cells, html_lib.unescape(basis[1]) if basis else ""]
    return rows


def test_release_cycle_numbers_add_up(warehouse: Warehouse, tmp_path: Path) -> None:
    warehouse.insert_frame("probe_results", generate(CYCLE_PROVIDERS, 60, cadence_min=15, seed=5))
    warehouse.insert_frame("releases", releases_frame(CYCLE_PROVIDERS))
    run_analysis(warehouse)
    now = START + timedelta(days=60)
    page = render_report(warehouse, tmp_path, week=IsoWeek.containing(now), now=now).read_text(
        encoding="utf-8"
    )

    counts = {
        m["who"]: (int(m["k"]), int(m["n"])) for m in map(_ONSETS.match, _findings(page)) if m
    }
    pooled = [who for who in counts if who.startswith("All providers")]
    assert len(pooled) == 1, counts
    per = [v for who, v in counts.items() if who in ("kestrel", "heron")]
    assert len(per) == 2, counts
    assert counts[pooled[0]] == (sum(k for k, _ in per), sum(n for _, n in per)), counts
    assert counts["kestrel"] == (1, 2) and counts["heron"] == (1, 1), counts
    assert "its own vendor's releases" in page

    cells = _cycle_cells(page)
    leads_cell, forecast, basis = cells["kestrel"][4], cells["kestrel"][5], cells["kestrel"][6]
    listed = [float(x) for x in leads_cell.split(" days")[0].split(", ")]
    assert len(listed) == 2, leads_cell
    mean = float(re.search(r"mean (\d+)", leads_cell)[1])  # type: ignore[index]
    assert abs(sum(listed) / len(listed) - mean) <= 0.5 + 1e-9, leads_cell
    # The forecast rests on the same list, with the same mean.
    assert f"lead times {leads_cell.split(' days')[0]} d = {mean:.0f} d" in basis, basis
    first = date.fromisoformat(_DAY.findall(forecast)[0])
    assert first >= now.date() or forecast.startswith("overdue"), forecast


@pytest.mark.parametrize(("analysed_days_ago", "expect"), [(60, "overdue"), (10, "open")])
def test_forecast_window_never_starts_before_now(
    warehouse: Warehouse, tmp_path: Path, analysed_days_ago: int, expect: str
) -> None:
    """The stored window runs from 8 to 35 days after the analysis: seen 60 days later it
    has closed, seen 10 days later it has opened."""
    _history(warehouse)
    end = NOW - timedelta(days=analysed_days_ago)
    insert_analysis(warehouse, ["alpha"], end=end, degraded=(end - timedelta(days=20), end))
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    forecast = _cycle_cells(page)["alpha"][5]
    if expect == "overdue":
        assert forecast.startswith("overdue: the window closed"), forecast
    else:
        assert forecast.startswith(f"{NOW.date()} to ") and "already open" in forecast, forecast
        assert all(date.fromisoformat(d) >= NOW.date() for d in _DAY.findall(forecast)), forecast


# -- confidence --------------------------------------------------------------------------


def _verdict(page: str, provider: str) -> str:
    block = page.split(f'data-provider="{provider}"', 1)[1].split("</section>", 1)[0]
    return _text(block)


def _phase_run(
    wh: Warehouse,
    *,
    onset: datetime,
    p_value: float,
    ci: tuple[float, float],
    label: str = "degraded",
    stage: str = "subtle_degradation",
) -> str:
    """A finished analysis run: alpha stable for 60 days, then ``label`` from ``onset``."""
    aid = str(uuid.uuid4())
    start = NOW - timedelta(days=60)
    wh.insert_rows(
        "analysis_runs",
        [{"analysis_id": aid, "started_at": NOW, "finished_at": NOW, "status": "done",
          "since": start, "until": NOW}],
        key="analysis_id",
    )  # fmt: skip
    common = {"analysis_id": aid, "provider": "alpha", "model": "alpha-model"}
    phases = [
        {**common, "phase_no": 1, "label": "stable", "stage": "stable", "start_at": start,
         "end_at": onset, "severity": 0.0, "severity_lo": -0.03, "severity_hi": 0.03,
         "confidence": 1.0, "signals": []},
        {**common, "phase_no": 2, "label": label, "stage": stage,
         "start_at": onset, "end_at": None, "severity": (ci[0] + ci[1]) / 2,
         "severity_lo": ci[0], "severity_hi": ci[1], "confidence": 1.0 - p_value,
         "signals": ["ttft_short"]},
    ]  # fmt: skip
    wh.insert_frame("phases", pl.DataFrame(phases))
    return aid


def test_a_phase_of_eight_probes_does_not_claim_confidence(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The phase began 8 hours ago (8 hourly probes); its test p-value is tiny and its
    interval narrow, which the old per-phase "confidence" read as 100 %."""
    _history(warehouse)
    _phase_run(warehouse, onset=NOW - timedelta(hours=8), p_value=1.7e-54, ci=(0.30, 0.40))
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    verdict = _verdict(page, "alpha")
    assert "too little data to be sure" in verdict, verdict
    assert "high confidence" not in verdict and "100" not in verdict.split("details")[0]
    # The p-value is in the details line only (stored as 1 - p, so a tiny one shows as a bound).
    assert (
        "phase test p < 1e-15 (latency: the search allowed for; counts: at the boundaries"
        in (verdict.split("details", 1)[1])
    ), verdict


def test_a_long_clear_phase_is_high_confidence(warehouse: Warehouse, tmp_path: Path) -> None:
    _history(warehouse)
    _phase_run(warehouse, onset=NOW - timedelta(days=20), p_value=1e-12, ci=(0.30, 0.40))
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    verdict = _verdict(page, "alpha")
    assert "high confidence" in verdict and "p = 1e-12" not in verdict.split("details")[0]


def test_a_recovery_is_not_judged_by_the_two_regime_model(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The regime model knows degraded and not degraded; a recovery is neither, so its
    low degraded probability is no disagreement (the demo read 'agrees only 0 %')."""
    _history(warehouse)
    onset = NOW - timedelta(days=20)
    aid = _phase_run(warehouse, onset=onset, p_value=1e-12, ci=(0.10, 0.20),
                     label="recovering", stage="recovery")  # fmt: skip
    days = [(onset + timedelta(days=d)).date() for d in range(21)]
    probabilities = {"analysis_id": aid, "provider": "alpha", "model": "alpha-model",
                     "day": days, "p_degraded": [0.0] * len(days)}  # fmt: skip
    warehouse.insert_frame("degraded_probability", pl.DataFrame(probabilities))
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    verdict = _verdict(page, "alpha")
    assert "Recovering" in verdict and "regime model" not in verdict, verdict


@pytest.mark.parametrize(
    ("probes", "hours", "ci", "p", "level"),
    [
        (8, 8, (0.30, 0.40), 1e-54, "too little data"),
        (500, 400, (0.30, 0.40), 1e-12, "high"),
        (500, 400, (0.05, 0.65), 1e-12, "low"),  # the size of the change is unknown
        (500, 400, (0.30, 0.40), 0.005, "moderate"),  # passes the 1 % test, not 0.1 %
        (150, 60, (0.30, 0.40), 1e-12, "moderate"),  # under the 72 h of a baseline
    ],
)
def test_confidence_levels(
    probes: int, hours: int, ci: tuple[float, float], p: float, level: str
) -> None:
    judged = grade(Evidence(True, probes, hours, ci, p, None))
    assert judged.level == level, judged
    assert ("%" not in judged.words) or "regime" in judged.words  # no raw confidence figure


# -- a first week ------------------------------------------------------------------------

FIRST_NOW = datetime(2026, 11, 25, 12, tzinfo=UTC)  # a Wednesday, one day after the first probe
FIRST_WEEK = IsoWeek(2026, 48)


def _first_day(wh: Warehouse) -> None:
    """One day of hourly short-context probes and three long-context ones (every 8 h)."""
    short = probe_frame([Series("alpha", "alpha-short", "short")], end=FIRST_NOW, days=1)
    long = probe_frame(
        [Series("alpha", "alpha-long", "long")], end=FIRST_NOW, days=1, every_min=480, seed=1
    )
    wh.insert_frame("probe_results", pl.concat([short, long]), key="run_id")


def test_first_day_says_what_it_cannot_tell_yet(warehouse: Warehouse, tmp_path: Path) -> None:
    _first_day(warehouse)
    run_analysis(warehouse)
    page = render_report(warehouse, tmp_path, week=FIRST_WEEK, now=FIRST_NOW).read_text(
        encoding="utf-8"
    )
    verdict = _verdict(page, "alpha")
    assert "Not enough data yet" in verdict and "Stable" not in verdict, verdict
    covered = int(re.search(r"short-context answer in (\d+) hours", verdict)[1])  # type: ignore[index]
    assert 20 <= covered <= 25, verdict
    assert f"at least {72 - covered} more short-context probe(s)" in verdict, verdict
    assert "(0 days)" not in page
    text = _text(page)
    assert "No long-context probes ran" not in text
    assert "Too few long-context probes this week to recommend a provider (alpha 3)" in text


def test_one_probe_without_analysis(warehouse: Warehouse, tmp_path: Path) -> None:
    frame = probe_frame([Series("alpha", "alpha-short", "short")], end=FIRST_NOW, days=1 / 24)
    warehouse.insert_frame("probe_results", frame, key="run_id")
    page = render_report(warehouse, tmp_path, week=FIRST_WEEK, now=FIRST_NOW).read_text(
        encoding="utf-8"
    )
    verdict = _verdict(page, "alpha")
    assert "Not enough data yet" in verdict, verdict
    assert "So far 1 probe, with a short-context answer in 1 hour" in verdict, verdict
    assert "at least 71 more short-context probe(s)" in verdict, verdict


def _cycle_data(tests: pl.DataFrame) -> ReportData:
    empty = pl.DataFrame()
    # every frame empty, by name: positional arguments shifted when a field went away
    frames = {f.name: empty for f in fields(ReportData) if f.type == "pl.DataFrame"}
    return ReportData(
        week=WEEK, now=NOW, totals={}, analysis_run=None, analysis={"cycle_tests": tests},
        **frames,
    )  # fmt: skip


def test_independent_providers_rarely_read_as_degrading_together() -> None:
    """Five providers whose degraded days are placed independently: every pair is tested,
    and each test alone keeps its 5 %; but ten pairs at once made some pair 'degraded on
    overlapping days: a shared cause' in about one report in five. With the pairs
    Holm-adjusted the report says so in about one in twenty at most."""
    rng = np.random.default_rng(8)
    providers, days, reports = 5, 180, 120
    claimed = 0
    for _ in range(reports):
        degraded = np.zeros((providers, days), dtype=bool)
        for row in degraded:
            for _stretch in range(int(rng.integers(1, 4))):
                start = int(rng.integers(0, days))
                row[start : start + int(rng.integers(10, 41))] = True
        rows = []
        for i in range(providers):
            for j in range(i + 1, providers):
                jac, p = synchronization_test(degraded[i], degraded[j], reps=400, seed=0)
                rows.append({"test": f"synchronized:p{i}/m|p{j}/m", "statistic": jac,
                             "pvalue": p, "n": days, "provider": None})  # fmt: skip
        lines = cycle_findings(_cycle_data(pl.DataFrame(rows)))
        claimed += any("degraded on overlapping days" in line for line in lines)
    # 5 % of 120 is 6 +- 2.4; the unadjusted pairs gave 29
    assert claimed <= 12, claimed


def test_only_a_conclusive_forecast_names_a_most_likely_day(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """An inconclusive window (one lead time, say) is centred on onset + mean lead; calling
    that day "most likely" would claim what one past cycle cannot carry."""
    _history(warehouse)
    end = NOW - timedelta(days=10)
    insert_analysis(warehouse, ["alpha"], end=end, degraded=(end - timedelta(days=20), end))
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    assert ", most likely " in _cycle_cells(page)["alpha"][5]
    warehouse.execute("UPDATE release_forecasts SET conclusive = false")
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    forecast = _cycle_cells(page)["alpha"][5]
    assert ", centred on " in forecast and "most likely" not in forecast, forecast
    assert forecast.endswith("(inconclusive)"), forecast
