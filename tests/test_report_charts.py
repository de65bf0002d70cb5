"""Report charts share one time window, honest y-scales and colour-blind-safe colours.

Reports are rendered from real DuckDB files; each time chart carries the x-range it
actually drew as ``data-x-window``.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from matplotlib.colors import to_hex

from pipeline.report import IsoWeek, render_report
from pipeline.report.charts import FORECAST_COLOUR
from pipeline.report.grid_charts import ERROR_STYLES, accuracy_figure, errors_figure
from pipeline.report.timeline import CHART_DAYS, Timeline
from pipeline.warehouse import Warehouse
from probes.errors import ERROR_CLASSES
from tests.support.report import Series, insert_analysis, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)  # Friday of 2026-W47
WEEK = IsoWeek(2026, 47)
WEEK_WINDOW = "2026-11-16T00:00/2026-11-23T00:00"
TIME_CHARTS = {"ttft-0", "penalty", "errors", "accuracy", "headroom"}
# Okabe & Ito (2008), https://jfly.uni-koeln.de/color/
OKABE_ITO = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}


def _fill(wh: Warehouse, *, days: float, end: datetime = NOW, providers: int = 1) -> None:
    series = [
        Series(p, f"{p}-{c}", c)
        for p in ("alpha", "beta", "gamma")[:providers]
        for c in ("short", "long")
    ]
    frame = probe_frame(series, end=end, days=days, every_min=30, source="live")
    wh.insert_frame("probe_results", frame, key="run_id")


def _windows(html: str) -> dict[str, str]:
    """Chart key -> the x-range it drew."""
    found = {}
    for tag in re.findall(r"<svg [^>]*>", html):
        key = re.search(r'data-chart="([^"]+)"', tag)
        window = re.search(r'data-x-window="([^"]+)"', tag)
        if key and window:
            found[key[1]] = window[1]
    return found


def _chart_svg(html: str, key: str) -> str:
    start = html.index(f'data-chart="{key}"')
    return html[start : html.index("</svg>", start)]


def test_first_week_charts_show_that_week(warehouse: Warehouse, tmp_path: Path) -> None:
    """Six hours of probes: every time chart spans the report's week, not 2025 to 2029."""
    _fill(warehouse, days=0.25)
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    windows = _windows(html)
    assert set(windows) >= TIME_CHARTS, windows
    assert set(windows.values()) == {WEEK_WINDOW}


def test_every_time_chart_shares_one_window(warehouse: Warehouse, tmp_path: Path) -> None:
    """120 days of history: all charts start at the first data, end at the week's end."""
    _fill(warehouse, days=120, providers=2)
    degraded = (NOW - timedelta(days=30), NOW)
    insert_analysis(warehouse, ["alpha", "beta"], end=NOW, degraded=degraded)
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    windows = _windows(html)
    assert TIME_CHARTS | {"ttft-1", "cycle"} <= set(windows), windows
    cycle = windows.pop("cycle")
    assert set(windows.values()) == {"2026-07-23T00:00/2026-11-23T00:00"}
    # The cycle chart starts with the others and runs on to show the forecast window
    # (NOW + 35 days, plus three days of margin).
    assert cycle == "2026-07-23T00:00/2026-12-28T00:00"


def test_long_history_is_cut_to_the_chart_window(warehouse: Warehouse, tmp_path: Path) -> None:
    _fill(warehouse, days=250)
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    start = (WEEK.end - timedelta(days=CHART_DAYS)).strftime("%Y-%m-%dT%H:%M")
    assert set(_windows(html).values()) == {f"{start}/2026-11-23T00:00"}


def test_thin_weeks_render(warehouse: Warehouse, tmp_path: Path) -> None:
    """An empty week after older data, a one-probe week, and a one-day-old warehouse."""
    _fill(warehouse, days=10, end=NOW - timedelta(days=21))
    empty = render_report(warehouse, tmp_path / "a", week=WEEK, now=NOW)
    assert "No probes were recorded in this week." in empty.read_text(encoding="utf-8")

    one = Warehouse(tmp_path / "one.duckdb")
    one.migrate()
    row = {"run_id": str(uuid.uuid4()), "provider": "solo", "model": "m", "probe": "p",
           "task_family": "arithmetic", "context_class": "short", "error_class": "ok",
           "ttft_ms": 420.0, "score_strict": "correct",
           "started_at": NOW - timedelta(hours=1)}  # fmt: skip
    one.insert_rows("probe_results", [row], key="run_id")
    html = render_report(one, tmp_path / "b", week=WEEK, now=NOW).read_text(encoding="utf-8")
    assert "ttft-0" in _windows(html) and set(_windows(html).values()) == {WEEK_WINDOW}

    day_old = Warehouse(tmp_path / "day.duckdb")
    day_old.migrate()
    _fill(day_old, days=1)
    html = render_report(day_old, tmp_path / "c", week=WEEK, now=NOW).read_text(encoding="utf-8")
    assert set(_windows(html).values()) == {WEEK_WINDOW}


def _daily(day_count: int, rates: dict[str, float]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Daily error and accuracy frames where each provider fails at its own fixed rate."""
    start = WEEK.end - timedelta(days=day_count)
    errors, accuracy = [], []
    for provider, rate in rates.items():
        for d in range(day_count):
            day = start + timedelta(days=d)
            bad = round(200 * rate)
            errors += [
                {"provider": provider, "day": day, "error_class": "ok", "n": 200 - bad},
                {"provider": provider, "day": day, "error_class": "overloaded", "n": bad},
            ]
            accuracy.append({"provider": provider, "day": day, "n": 200, "n_scored": 200,
                             "n_correct": 200 - bad, "n_flagged": bad // 4})  # fmt: skip
    return pl.DataFrame(errors), pl.DataFrame(accuracy)


def test_errors_and_accuracy_share_one_y_scale() -> None:
    """A 2 % wobble must not be drawn as tall as a 30 % failure rate."""
    rates = {"alpha": 0.02, "beta": 0.30}
    errors, accuracy = _daily(30, rates)
    window = Timeline.for_week((WEEK.start, WEEK.end), now=NOW, first_data=NOW - timedelta(30))
    fig = errors_figure(errors, list(rates), timeline=window)
    assert fig is not None
    assert len({ax.get_ylim() for ax in fig.axes}) == 1
    assert fig.axes[0].get_ylim()[1] >= 30
    fig = accuracy_figure(accuracy, list(rates), timeline=window)
    assert fig is not None
    left, right = fig.axes[0::2], fig.axes[1::2]
    assert len({ax.get_ylim() for ax in left}) == 1 and len({ax.get_ylim() for ax in right}) == 1
    low, high = left[0].get_ylim()
    assert low <= 70 and high >= 100  # beta's 70 % fits, and the axis never zooms past 80 %


def test_accuracy_axis_never_zooms_into_a_small_wobble() -> None:
    _errors, accuracy = _daily(30, {"alpha": 0.02, "beta": 0.04})
    window = Timeline.for_week((WEEK.start, WEEK.end), now=NOW, first_data=None)
    fig = accuracy_figure(accuracy, ["alpha", "beta"], timeline=window)
    assert fig is not None and fig.axes[0].get_ylim()[0] <= 80


def _luminance(hex_colour: str) -> float:
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_error_classes_have_distinct_colour_blind_safe_styles() -> None:
    failing = [c for c in ERROR_CLASSES if c != "ok"]
    styles = [ERROR_STYLES[c] for c in failing]
    assert len(set(styles)) == len(failing)
    assert {colour.upper() for colour, _hatch in styles} <= OKABE_ITO
    solid = {c for c in failing if not ERROR_STYLES[c][1]}
    assert len({ERROR_STYLES[c][0] for c in solid}) == len(solid)


def test_truncated_and_connection_errors_look_different() -> None:
    """Drawn and in the legend, the two classes are far apart in lightness (once both grey)."""
    day = WEEK.start
    errors = pl.DataFrame(
        [
            {"provider": "alpha", "day": day, "error_class": "ok", "n": 80},
            {"provider": "alpha", "day": day, "error_class": "truncated", "n": 10},
            {"provider": "alpha", "day": day, "error_class": "connection_error", "n": 10},
        ]
    )
    window = Timeline.for_week((WEEK.start, WEEK.end), now=NOW, first_data=day)
    fig = errors_figure(errors, ["alpha"], timeline=window)
    assert fig is not None
    legend = fig.legends[0]
    colours = {
        text.get_text(): to_hex(patch.get_facecolor())
        for text, patch in zip(legend.get_texts(), legend.get_patches(), strict=True)
    }
    drawn = {to_hex(bar.get_facecolor()) for bar in fig.axes[0].patches}
    assert {colours["truncated"], colours["connection_error"]} <= drawn
    gap = _luminance(colours["truncated"]) - _luminance(colours["connection_error"])
    assert abs(gap) > 0.5, colours


def test_forecast_is_an_outline_not_a_fill_over_phases(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    _fill(warehouse, days=60, providers=2)
    insert_analysis(warehouse, ["alpha", "beta"], end=NOW, degraded=(NOW - timedelta(days=30), NOW))
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    svg = _chart_svg(html, "cycle").lower()
    colour = FORECAST_COLOUR.lower()
    patterns = [p for p in re.findall(r"<pattern.*?</pattern>", svg, flags=re.S) if colour in p]
    assert patterns, "the forecast window is hatched in its colour"
    # A hatch's background is the patch's fill: it must stay empty, or it mixes with the
    # phase colour beneath into one the legend does not show.
    assert all('fill="none"' in p for p in patterns), patterns
    drawn = re.sub(r"<pattern.*?</pattern>", "", svg, flags=re.S)
    assert f"fill: {colour}" not in drawn


def test_the_cycle_chart_draws_a_forecast_from_today_as_the_table_does() -> None:
    """A window that opened before now starts at now; one that closed is not drawn."""
    from matplotlib.figure import Figure

    from pipeline.report.charts import _day_x, _forecast_windows

    today = date(2026, 11, 23)
    forecasts = pl.DataFrame(
        {
            "window_lo": [date(2026, 10, 25), date(2026, 9, 1)],
            "window_hi": [date(2026, 12, 24), date(2026, 10, 1)],  # the second is overdue
            "conclusive": [False, True],
        }
    )
    ax = Figure().add_subplot()
    _forecast_windows(ax, forecasts, today)
    (window,) = ax.patches
    left, right = window.get_x(), window.get_x() + window.get_width()  # type: ignore[attr-defined]
    assert left == pytest.approx(_day_x(today))
    assert right == pytest.approx(_day_x(date(2026, 12, 24)))


def test_a_provider_without_rate_limit_headers_is_named_under_the_headroom_chart(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """beta sends no rate-limit headers: its row is left out of the chart, and the caption
    says so rather than letting a reader wonder where it went."""
    _fill(warehouse, days=3, providers=2)
    warehouse.execute(
        "UPDATE probe_results SET rl_requests_limit = NULL, rl_requests_remaining = NULL "
        "WHERE provider = 'beta'"
    )
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    figure = html[html.index('id="chart-headroom"') :]
    caption = figure[: figure.index("</figcaption>")]
    assert "Not shown: beta (no rate-limit headers reported)." in caption
    assert "Not shown: alpha" not in caption


def _dashed_points(html: str, key: str) -> list[int]:
    """Markers of each dashed (p95) line of a TTFT chart, its legend's sample included."""
    svg = _chart_svg(html, key)
    groups = re.findall(rf'<g id="{key}-line2d_\d+">(.*?)</g>', svg, flags=re.S)
    return sorted(g.count("<use") for g in groups if "stroke-dasharray" in g)


def test_a_day_s_p95_is_drawn_only_from_enough_answers(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """'sparse' answered 20 probes in the week, about three a day: the chart drew the
    slowest of three as each day's 95th percentile, which the table withholds under 20
    answers. 'hourly' (24 a day) keeps its p95 line, one point a day."""
    end = WEEK.end
    hourly = probe_frame([Series("hourly", "h-short", "short")], end=end, days=7, seed=1)
    sparse = probe_frame(
        [Series("sparse", "s-short", "short")], end=end, days=7, every_min=7 * 24 * 60 / 20
    )
    warehouse.insert_frame("probe_results", pl.concat([hourly, sparse]), key="run_id")
    html = render_report(warehouse, tmp_path, week=WEEK, now=end).read_text(encoding="utf-8")
    assert _dashed_points(html, "ttft-0") == [1, 7]  # legend sample, seven days
    assert _dashed_points(html, "ttft-1") == [0, 1], "a p95 from about three answers a day"
    caption = html.split('id="chart-ttft-1"', 1)[1].split("</figcaption>", 1)[0]
    assert "95th percentile only on days with at least 20 answers" in caption
