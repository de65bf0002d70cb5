"""Small-multiple charts, one row per provider: errors, accuracy, headroom."""

from __future__ import annotations

from typing import Any, Literal

import matplotlib.dates as mdates
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter
from statsmodels.stats.proportion import proportion_confint

from pipeline.report.charts import marker
from pipeline.report.context import Chart
from pipeline.report.svg import MUTED, PALETTE, figure_svg, new_figure, plain, style
from pipeline.report.text_width import ROW_LABEL, fit
from pipeline.report.thin_accuracy import MIN_SCORED, ThinAccuracy, thin_accuracy
from pipeline.report.timeline import MARKS_NOTE, Timeline, dates

__all__ = [
    "ERROR_STYLES",
    "MIN_SCORED",
    "accuracy_chart",
    "accuracy_figure",
    "error_style",
    "errors_chart",
    "errors_figure",
    "headroom_chart",
    "wilson",
]

# Okabe & Ito (2008) "Color Universal Design" colours, safe for colour-blind readers.
# Eight hues for the common classes; rarer classes reuse a hue with hatching, so no two
# classes look alike (matplotlib's tab10 is not colour-blind safe).
_OKABE_ITO = {
    "vermillion": "#D55E00",
    "orange": "#E69F00",
    "purple": "#CC79A7",
    "blue": "#0072B2",
    "black": "#000000",
    "yellow": "#F0E442",
    "sky": "#56B4E9",
    "green": "#009E73",
}
ERROR_STYLES: dict[str, tuple[str, str]] = {  # class -> (colour, hatch)
    "overloaded": (_OKABE_ITO["vermillion"], ""),
    "rate_limited": (_OKABE_ITO["orange"], ""),
    "server_error": (_OKABE_ITO["purple"], ""),
    "timeout_first_token": (_OKABE_ITO["blue"], ""),
    "connection_error": (_OKABE_ITO["black"], ""),
    "truncated": (_OKABE_ITO["yellow"], ""),
    "stall": (_OKABE_ITO["sky"], ""),
    "timeout_connect": (_OKABE_ITO["green"], ""),
    "quota_exhausted": (_OKABE_ITO["orange"], "////"),
    "malformed_stream": (_OKABE_ITO["purple"], "////"),
    "empty": (_OKABE_ITO["yellow"], "////"),
    "auth": (_OKABE_ITO["black"], "////"),
    "bad_request": (_OKABE_ITO["sky"], "////"),
    "context_overflow": (_OKABE_ITO["green"], "////"),
    "content_filter": (_OKABE_ITO["blue"], "////"),
    "context_full": (_OKABE_ITO["yellow"], "xx"),
    "response_too_large": (_OKABE_ITO["vermillion"], "////"),  # like truncated: the window ran out
}
_UNKNOWN_STYLE = ("#999999", "xx")


PERCENT = FuncFormatter(lambda x, _pos: f"{x:.3g} %")


def error_style(error_class: str) -> tuple[str, str]:
    """The (colour, hatch) of an error class, the same in every chart and legend."""
    return ERROR_STYLES.get(error_class, _UNKNOWN_STYLE)


def wilson(successes: np.ndarray[Any, Any], n: np.ndarray[Any, Any]) -> tuple[Any, Any]:
    """95 % Wilson score interval; NaN where n = 0."""
    n = np.asarray(n, dtype=float)
    safe = np.where(n > 0, n, 1.0)
    lo, hi = proportion_confint(np.asarray(successes, dtype=float), safe, method="wilson")
    return np.where(n > 0, lo, np.nan), np.where(n > 0, hi, np.nan)


def _rows(
    providers: list[str], height: float, cols: int = 1, *, sharey: bool | Literal["col"] = False
) -> tuple[Any, Any]:
    n = len(providers)
    fig = new_figure(
        9.0, 0.65 + height * n, margins=(1.3, 0.2, 0.35, 0.3), rows=n, cols=cols, gap_in=(0.15, 0.7)
    )
    axes = fig.subplots(len(providers), cols, sharex=True, sharey=sharey, squeeze=False)
    return fig, axes


def _label(ax: Axes, provider: str) -> None:
    ax.set_ylabel(plain(fit(provider, ROW_LABEL)), rotation=0, ha="right", va="center", fontsize=8)


def _floor_zero(ax: Axes, *, min_top: float = 5.0) -> None:
    """A share axis from 0 to at least ``min_top`` %, set once after every row is drawn
    (set_ylim stops autoscaling and the scale is shared). The floor on the top keeps a
    handful of failures from filling the whole height, and zero from 0.04 % ticks."""
    ax.set_ylim(0, max(ax.get_ylim()[1], min_top))


def _stacked_days(ax: Axes, wide: pl.DataFrame, classes: list[str]) -> None:
    """Stacked daily steps, one patch per class (thousands of bars were slow to draw);
    unlike an area between points, a single day still shows as a block."""
    day = wide["day"]
    span = pl.datetime_range(day.min(), day.max(), "1d", eager=True).cast(day.dtype)  # type: ignore[arg-type]
    wide = pl.DataFrame({"day": span}).join(wide, on="day", how="left").fill_null(0)
    middle = mdates.date2num(dates(wide, "day"))
    edges = np.append(middle - 0.5, middle[-1] + 0.5)
    bottom = np.zeros(wide.height)
    for name in classes:
        colour, hatch = error_style(name)
        top = bottom + wide[name].to_numpy() * 100
        ax.stairs(
            top,
            edges,
            baseline=bottom,
            fill=True,
            color=colour,
            hatch=hatch,
            edgecolor="white" if hatch else colour,
            lw=0,
            zorder=2,
        )
        bottom = top


def errors_chart(errors: pl.DataFrame, providers: list[str], *, timeline: Timeline) -> Chart | None:
    """Daily share of probes per failing error class, stacked, on one scale for all."""
    with style():
        fig = errors_figure(errors, providers, timeline=timeline)
        if fig is None:
            return None
        svg = figure_svg(fig, "errors", label="Errors by class over time")
        svg = timeline.stamp(svg, fig.axes[0])
    return Chart(
        "errors",
        "Errors by class",
        "Share of probes per day that failed, by error class, on the same scale for every "
        "provider. " + MARKS_NOTE,
        svg,
    )


def errors_figure(
    errors: pl.DataFrame, providers: list[str], *, timeline: Timeline
) -> Figure | None:
    """The errors chart's figure: one row per provider, all on one y-scale."""
    failing = errors.filter(pl.col("error_class").is_not_null() & (pl.col("error_class") != "ok"))
    if failing.height == 0 or not providers:
        return None
    totals = errors.group_by("provider", "day").agg(pl.col("n").sum().alias("total"))
    share = failing.join(totals, on=["provider", "day"]).with_columns(
        (pl.col("n") / pl.col("total")).alias("share")
    )
    classes = sorted(share["error_class"].unique().to_list())
    fig, axes = _rows(providers, 1.05, sharey=True)
    for ax, provider in zip(axes[:, 0], providers, strict=True):
        part = share.filter(pl.col("provider") == provider)
        wide = part.pivot("error_class", index="day", values="share").sort("day").fill_null(0)
        if wide.height:
            _stacked_days(ax, wide, [c for c in classes if c in wide.columns])
        _label(ax, provider)
        ax.yaxis.set_major_formatter(PERCENT)
        timeline.mark(ax, provider)
        timeline.axis(ax)
    # Once, after every row is drawn: set_ylim stops autoscaling, and the scale is shared.
    _floor_zero(axes[0, 0])
    handles = [
        Patch(facecolor=error_style(c)[0], hatch=error_style(c)[1], edgecolor="white", label=c)
        for c in classes
    ]
    fig.legend(
        handles=handles,
        loc="upper left",
        ncols=min(6, len(handles)),
        bbox_to_anchor=(1.3 / 9.0, 1.0),
    )
    return fig


def _accuracy_floor(scored: pl.DataFrame) -> float:
    """The shared axis's lower end: below every drawn Wilson band, in steps of 10 points,
    and never above 80 % so a wobble of two points is not drawn as a cliff."""
    part = scored.filter(pl.col("n_scored") >= MIN_SCORED)
    lo, _hi = wilson(part["n_correct"].to_numpy(), part["n_scored"].to_numpy())
    lowest = float(np.nanmin(lo)) * 100 if lo.size else 80.0
    return max(0.0, min(80.0, np.floor(lowest / 10) * 10))


def accuracy_chart(
    accuracy: pl.DataFrame, providers: list[str], *, timeline: Timeline
) -> Chart | None:
    """Daily strict accuracy with a 95 % Wilson band, and the sanity-flag rate."""
    with style():
        fig = accuracy_figure(accuracy, providers, timeline=timeline)
        if fig is None:
            return None
        svg = figure_svg(fig, "accuracy", label="Accuracy and sanity flags over time")
        svg = timeline.stamp(svg, fig.axes[0])
    thin = thin_accuracy(accuracy, providers, timeline.week).values()
    return Chart(
        "accuracy",
        "Accuracy and sanity flags",
        "Left: share of scored answers that were exactly right each day, on one axis for "
        "every provider (its range is in the title); the band is the 95 % Wilson "
        f"interval. Days with fewer than {MIN_SCORED} scored answers are left out: too "
        "few to judge. "
        + "".join(f"{t.sentence} " for t in thin)
        + "Right: share of responses with a "
        "flag on the answer's text (empty, truncated, context full, wrong script, invalid "
        "Unicode, repetition, refusal; not a cache hit or a renamed model), also on one "
        "scale. " + MARKS_NOTE,
        svg,
    )


def accuracy_figure(
    accuracy: pl.DataFrame, providers: list[str], *, timeline: Timeline
) -> Figure | None:
    """The accuracy chart's figure: one row per provider, each column on one y-scale."""
    scored = accuracy.filter(pl.col("n") > 0)
    if scored.filter(pl.col("n_scored") > 0).height == 0 or not providers:
        return None
    floor = _accuracy_floor(scored)
    thin = thin_accuracy(accuracy, providers, timeline.week)
    fig, axes = _rows(providers, 1.0, cols=2, sharey="col")
    for i, provider in enumerate(providers):
        part = scored.filter(pl.col("provider") == provider).sort("day")
        left, right = axes[i, 0], axes[i, 1]
        colour = PALETTE[i % len(PALETTE)]
        if provider in thin:
            _too_few(left, thin[provider])
        elif part.height:
            _accuracy_line(left, part, colour)
        if part.height:  # a flag rate counts every response, not scored answers alone
            flags = part["n_flagged"].to_numpy() / part["n"].to_numpy() * 100
            dot = marker(part.height)
            right.plot(dates(part, "day"), flags, color=colour, lw=1.0, marker=dot, ms=3)
        _label(left, provider)
        for ax in (left, right):
            ax.yaxis.set_major_formatter(PERCENT)
            timeline.mark(ax, provider)
            timeline.axis(ax)
    axes[0, 0].set_ylim(floor, 100.5)
    _floor_zero(axes[0, 1])
    top = axes[0, 1].get_ylim()[1]
    axes[0, 1].set_ylim(-0.03 * top, top)  # a rate of 0 drawn above the axis line, not on it
    axes[0, 0].set_title(f"accuracy (95 % Wilson band), axis {floor:.0f}–100 %")
    axes[0, 1].set_title("sanity-flag rate")
    return fig


def _too_few(ax: Axes, thin: ThinAccuracy) -> None:
    """Words instead of an empty axis; the y-ticks of this panel alone are hidden (the
    column shares one y-axis, so its ticks cannot be removed for one panel)."""
    ax.tick_params(axis="y", left=False, labelleft=False)
    ax.grid(False)
    ax.text(0.5, 0.5, thin.panel, transform=ax.transAxes, ha="center", va="center",
            fontsize=7.5, color=MUTED, linespacing=1.5)  # fmt: skip


def _accuracy_line(ax: Axes, part: pl.DataFrame, colour: str) -> None:
    """The daily rate with its Wilson interval: a band, or error bars when days are few.
    Days under ``MIN_SCORED`` scored answers are gaps (NaN), not points."""
    days = dates(part, "day")
    n, k = part["n_scored"].to_numpy(), part["n_correct"].to_numpy()
    judged = n >= MIN_SCORED
    n, k = np.where(judged, n, 0), np.where(judged, k, 0)  # NaN rate and band where n = 0
    lo, hi = wilson(k, n)
    rate = np.where(n > 0, k / np.where(n > 0, n, 1), np.nan) * 100
    if marker(part.height):
        # clipped at zero: at 0 % or 100 % rounding can put the rate a hair outside its band
        below, above = np.maximum(rate - lo * 100, 0), np.maximum(hi * 100 - rate, 0)
        ax.errorbar(days, rate, yerr=[below, above], color=colour, fmt="o", ms=3, capsize=2)
        return
    ax.fill_between(days, lo * 100, hi * 100, color=colour, alpha=0.22, lw=0)
    ax.plot(days, rate, color=colour)


def headroom_chart(
    headroom: pl.DataFrame, providers: list[str], *, timeline: Timeline
) -> Chart | None:
    """Reported request headroom and the request limit itself, per day."""
    if headroom.height == 0:
        return None
    shown = [p for p in providers if headroom.filter(pl.col("provider") == p).height]
    if not shown:
        return None
    with style():
        fig, axes = _rows(shown, 0.95, cols=2)
        for i, provider in enumerate(shown):
            part = headroom.filter(pl.col("provider") == provider).sort("day")
            colour = PALETTE[providers.index(provider) % len(PALETTE)]
            days, dot = dates(part, "day"), marker(part.height)
            axes[i, 0].plot(
                days, part["req_headroom"].to_numpy() * 100, color=colour, marker=dot, ms=3
            )
            axes[i, 0].set_ylim(0, 105)
            axes[i, 0].yaxis.set_major_formatter(PERCENT)
            axes[i, 1].plot(
                days,
                part["req_limit"].to_numpy(),
                color=colour,
                drawstyle="steps-mid",
                marker=dot,
                ms=3,
            )
            axes[i, 1].set_ylim(bottom=0)
            _label(axes[i, 0], provider)
            for ax in axes[i]:
                timeline.mark(ax, provider)
                timeline.axis(ax)
        axes[0, 0].set_title("request headroom (daily median)")
        axes[0, 1].set_title("request limit reported")
        svg = figure_svg(fig, "headroom", label="Rate-limit headroom over time")
        svg = timeline.stamp(svg, axes[-1, 0])
    # A provider left out must be named, or its absence reads as a chart that lost it.
    silent = [p for p in providers if p not in shown]
    absent = f"Not shown: {', '.join(silent)} (no rate-limit headers reported). " if silent else ""
    return Chart(
        "headroom",
        "Rate-limit headroom",
        "Share of the request limit still "
        "available when each probe ran, as the provider's headers reported it, and "
        "the limit itself (each provider on its own scale from zero: plans differ): a "
        "limit that steps down is a quiet tightening. " + absent + MARKS_NOTE,
        svg,
    )
