"""Small-multiple charts, one row per provider: errors, accuracy, headroom, hour of week."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.colors import TwoSlopeNorm
from matplotlib.ticker import FuncFormatter
from statsmodels.stats.proportion import proportion_confint

from pipeline.report.charts import dates, time_axis
from pipeline.report.context import Chart
from pipeline.report.svg import MUTED, PALETTE, figure_svg, new_figure, plain, style

__all__ = ["accuracy_chart", "errors_chart", "headroom_chart", "heatmap_chart", "wilson"]

_ERROR_COLOURS = {
    "rate_limited": "#f59e0b",
    "overloaded": "#dc2626",
    "server_error": "#991b1b",
    "timeout_first_token": "#7c3aed",
    "timeout_connect": "#a78bfa",
    "stall": "#c084fc",
    "quota_exhausted": "#ea580c",
    "connection_error": "#64748b",
}
_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


PERCENT = FuncFormatter(lambda x, _pos: f"{x:.3g} %")


def wilson(successes: np.ndarray[Any, Any], n: np.ndarray[Any, Any]) -> tuple[Any, Any]:
    """95 % Wilson score interval; NaN where n = 0."""
    n = np.asarray(n, dtype=float)
    safe = np.where(n > 0, n, 1.0)
    lo, hi = proportion_confint(np.asarray(successes, dtype=float), safe, method="wilson")
    return np.where(n > 0, lo, np.nan), np.where(n > 0, hi, np.nan)


def _rows(providers: list[str], height: float, cols: int = 1) -> tuple[Any, Any]:
    n = len(providers)
    fig = new_figure(
        9.0, 0.65 + height * n, margins=(1.3, 0.2, 0.35, 0.3), rows=n, cols=cols, gap_in=(0.15, 0.7)
    )
    axes = fig.subplots(len(providers), cols, sharex=True, squeeze=False)
    return fig, axes


def errors_chart(errors: pl.DataFrame, providers: list[str]) -> Chart | None:
    """Daily share of probes per failing error class, stacked."""
    failing = errors.filter(pl.col("error_class").is_not_null() & (pl.col("error_class") != "ok"))
    if failing.height == 0:
        return None
    totals = errors.group_by("provider", "day").agg(pl.col("n").sum().alias("total"))
    share = failing.join(totals, on=["provider", "day"]).with_columns(
        (pl.col("n") / pl.col("total")).alias("share")
    )
    classes = sorted(share["error_class"].unique().to_list())
    with style():
        fig, axes = _rows(providers, 1.05)
        for ax, provider in zip(axes[:, 0], providers, strict=True):
            part = share.filter(pl.col("provider") == provider)
            wide = part.pivot("error_class", index="day", values="share").sort("day").fill_null(0)
            if wide.height:
                present = [c for c in classes if c in wide.columns]
                ax.stackplot(
                    dates(wide, "day"),
                    *[wide[c].to_numpy() * 100 for c in present],
                    colors=[_ERROR_COLOURS.get(c, MUTED) for c in present],
                    labels=present,
                    step="mid",
                    lw=0,
                )
            ax.set_ylabel(plain(provider), rotation=0, ha="right", va="center", fontsize=8)
            ax.yaxis.set_major_formatter(PERCENT)
            ax.set_ylim(bottom=0)
        time_axis(axes[-1, 0])
        handles, labels = [], []
        for ax in axes[:, 0]:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(
            handles,
            labels,
            loc="upper left",
            ncols=min(6, len(labels)),
            bbox_to_anchor=(1.3 / 9.0, 1.0),
        )
        svg = figure_svg(fig, "errors", label="Errors by class, last eight weeks")
    return Chart(
        "errors",
        "Errors by class",
        "Share of probes per day that failed, by error class, over the last eight weeks.",
        svg,
    )


def accuracy_chart(accuracy: pl.DataFrame, providers: list[str]) -> Chart | None:
    """Daily strict accuracy with a 95 % Wilson band, and the sanity-flag rate."""
    scored = accuracy.filter(pl.col("n") > 0)
    if scored.filter(pl.col("n_scored") > 0).height == 0:
        return None
    with style():
        fig, axes = _rows(providers, 1.0, cols=2)
        for i, provider in enumerate(providers):
            part = scored.filter(pl.col("provider") == provider).sort("day")
            left, right = axes[i, 0], axes[i, 1]
            colour = PALETTE[i % len(PALETTE)]
            if part.height:
                x = dates(part, "day")
                n, k = part["n_scored"].to_numpy(), part["n_correct"].to_numpy()
                lo, hi = wilson(k, n)
                rate = np.where(n > 0, k / np.where(n > 0, n, 1), np.nan)
                left.fill_between(x, lo * 100, hi * 100, color=colour, alpha=0.22, lw=0)
                left.plot(x, rate * 100, color=colour)
                flags = part["n_flagged"].to_numpy() / part["n"].to_numpy() * 100
                right.plot(x, flags, color=colour, lw=1.0)
            left.set_ylabel(plain(provider), rotation=0, ha="right", va="center", fontsize=8)
            left.yaxis.set_major_formatter(PERCENT)
            right.yaxis.set_major_formatter(PERCENT)
            right.set_ylim(bottom=0)
        time_axis(axes[-1, 0])
        time_axis(axes[-1, 1])
        axes[0, 0].set_title("accuracy (95 % Wilson band)")
        axes[0, 1].set_title("sanity-flag rate")
        svg = figure_svg(fig, "accuracy", label="Accuracy and sanity flags, last eight weeks")
    return Chart(
        "accuracy",
        "Accuracy and sanity flags",
        "Left: share of scored answers "
        "that were exactly right each day; the band is the 95 % Wilson interval, "
        "wide when few probes were scored. Right: share of responses with a sanity "
        "flag (empty, truncated, wrong script, repetition, refusal).",
        svg,
    )


def headroom_chart(headroom: pl.DataFrame, providers: list[str]) -> Chart | None:
    """Reported request headroom and the request limit itself, per day."""
    if headroom.height == 0:
        return None
    shown = [p for p in providers if headroom.filter(pl.col("provider") == p).height]
    with style():
        fig, axes = _rows(shown, 0.95, cols=2)
        for i, provider in enumerate(shown):
            part = headroom.filter(pl.col("provider") == provider).sort("day")
            colour = PALETTE[providers.index(provider) % len(PALETTE)]
            x = dates(part, "day")
            axes[i, 0].plot(x, part["req_headroom"].to_numpy() * 100, color=colour)
            axes[i, 0].set_ylim(0, 105)
            axes[i, 0].yaxis.set_major_formatter(PERCENT)
            axes[i, 1].plot(x, part["req_limit"].to_numpy(), color=colour, drawstyle="steps-mid")
            axes[i, 1].set_ylim(bottom=0)
            axes[i, 0].set_ylabel(plain(provider), rotation=0, ha="right", va="center", fontsize=8)
        time_axis(axes[-1, 0])
        time_axis(axes[-1, 1])
        axes[0, 0].set_title("request headroom (daily median)")
        axes[0, 1].set_title("request limit reported")
        svg = figure_svg(fig, "headroom", label="Rate-limit headroom, last eight weeks")
    return Chart(
        "headroom",
        "Rate-limit headroom",
        "Share of the request limit still "
        "available when each probe ran, as the provider's headers reported it, and "
        "the limit itself: a limit that steps down is a quiet tightening.",
        svg,
    )


def heatmap_chart(how: pl.DataFrame, providers: list[str]) -> Chart | None:
    """Median short-context TTFT by weekday and hour, relative to the provider's median."""
    shown = [p for p in providers if how.filter(pl.col("provider") == p).height]
    if not shown:
        return None
    cols = min(3, len(shown))
    rows = -(-len(shown) // cols)
    with style():
        width = 9.0 if cols > 1 else 4.5
        fig = new_figure(
            width,
            0.25 + 1.5 * rows,
            margins=(0.5, 1.1, 0.3, 0.3),
            rows=rows,
            cols=cols,
            gap_in=(0.45, 0.55),
        )
        axes = fig.subplots(rows, cols, squeeze=False)
        norm = TwoSlopeNorm(vmin=0.5, vcenter=1.0, vmax=2.0)
        mesh = None
        for ax, provider in zip(axes.flat, shown, strict=False):
            part = how.filter(pl.col("provider") == provider)
            grid = np.full((7, 24), np.nan)
            median = float(np.nanmedian(part["ttft"].to_numpy()))
            for row in part.iter_rows(named=True):
                grid[int(row["dow"]), int(row["hod"])] = row["ttft"] / median
            mesh = ax.pcolormesh(np.clip(grid, 0.5, 2.0), cmap="RdBu_r", norm=norm)
            ax.set_title(plain(provider), fontsize=8.5)
            ax.set_yticks(np.arange(7) + 0.5, _DAYS, fontsize=7)
            ax.set_xticks([0, 6, 12, 18, 24], ["0h", "6h", "12h", "18h", "24h"], fontsize=7)
            ax.invert_yaxis()
            ax.grid(False)
        for ax in list(axes.flat)[len(shown) :]:
            ax.set_visible(False)
        if mesh is not None:
            cax = fig.add_axes((1 - 0.9 / width, 0.3, 0.1 / width, 0.5))
            fig.colorbar(mesh, cax=cax, label="× median TTFT", ticks=[0.5, 1, 2])
        svg = figure_svg(fig, "heatmap", label="TTFT by hour of week")
    return Chart(
        "heatmap",
        "Hour of week",
        "Median short-context TTFT in each hour of the "
        "week (UTC) over the last four weeks, relative to the provider's overall "
        "median. Red hours are slower. A regular pattern is demand, not "
        "degradation.",
        svg,
    )
