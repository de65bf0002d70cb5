"""Constructed warehouse contents for report tests and the report benchmark.

Rows are built in bulk with numpy (a year of probes is a million rows) and go in through
``Warehouse.insert_frame``, the same path every writer uses. A degraded window slows
TTFT, adds busy errors, lowers accuracy and shrinks the rate limit, so every chart has
something to show.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import duckdb
import numpy as np
import polars as pl

from pipeline.report.heatmap_cells import cells_sql
from pipeline.warehouse import Warehouse

__all__ = [
    "HOSTILE_TEXT",
    "Series",
    "heatmap_cells",
    "insert_analysis",
    "insert_hostile_rows",
    "probe_frame",
]

HOSTILE_TEXT = '<script>window.__pwned = 1</script><b>bold</b> <img src="http://203.0.113.9/x.png">'


@dataclass(frozen=True, slots=True)
class Series:
    """One (provider, probe) stream of probes."""

    provider: str
    probe: str
    context_class: str  # short | long
    vendor: str = "ExampleAI"
    base_ttft_ms: float = 400.0


def _ids(n: int, rng: np.random.Generator) -> list[str]:
    raw = rng.integers(0, 2**63, size=(n, 2), dtype=np.int64)
    return [str(uuid.UUID(int=(int(a) << 64) | int(b), version=4)) for a, b in raw]


def probe_frame(
    series: Sequence[Series],
    *,
    end: datetime,
    days: float,
    every_min: float = 60.0,
    degraded: tuple[datetime, datetime] | None = None,
    source: str = "synthetic",
    seed: int = 0,
) -> pl.DataFrame:
    """Probe rows for every series at a fixed cadence up to ``end``."""
    rng = np.random.default_rng(seed)
    steps = int(days * 24 * 60 / every_min)
    offsets = np.arange(steps, 0, -1) * every_min * 60_000_000  # microseconds before end
    end_us = int(end.timestamp() * 1_000_000)
    frames = []
    for s in series:
        t_us = end_us - offsets + rng.integers(0, 60_000_000, size=steps)
        frames.append(_series_frame(s, t_us, degraded, source, rng))
    return pl.concat(frames)


def _series_frame(
    s: Series,
    t_us: np.ndarray,
    degraded: tuple[datetime, datetime] | None,
    source: str,
    rng: np.random.Generator,
) -> pl.DataFrame:
    n = t_us.size
    hours = (t_us // 3_600_000_000) % 24
    daily = 1 + 0.25 * np.sin((hours - 9) / 24 * 2 * np.pi)  # busier in the afternoon
    bad = np.zeros(n, dtype=bool)
    if degraded:
        lo, hi = (int(x.timestamp() * 1_000_000) for x in degraded)
        bad = (t_us >= lo) & (t_us < hi)
    size = 8.0 if s.context_class == "long" else 1.0
    slow = np.where(bad, 1.6 if s.context_class == "long" else 1.2, 1.0)
    ttft = s.base_ttft_ms * size**0.6 * daily * slow * rng.lognormal(0, 0.25, n)
    err_draw = rng.random(n)
    error = np.where(err_draw < np.where(bad, 0.08, 0.01), "overloaded", "ok")
    error = np.where((err_draw > 0.995) & (error == "ok"), "rate_limited", error)
    ok = error == "ok"
    correct = rng.random(n) < np.where(bad, 0.86, 0.97)
    limit = np.where(bad, 300, 500)
    return pl.DataFrame(
        {
            "run_id": _ids(n, rng),
            "started_at": pl.Series(t_us).cast(pl.Datetime("us", "UTC")),
            "source": source,
            "provider": s.provider,
            "vendor": s.vendor,
            "model": f"{s.provider}-model",
            "probe": s.probe,
            "task_family": "kv_lookup" if s.context_class == "long" else "arithmetic",
            "context_class": s.context_class,
            "ttft_ms": _where(ok, ttft),
            "total_ms": _where(ok, ttft + 900),
            "output_tokens_per_s": _where(ok, rng.normal(80, 5, n)),
            "error_class": error,
            "score_strict": pl.Series(np.where(correct, "correct", "wrong")).zip_with(
                pl.Series(ok), pl.Series([None] * n, dtype=pl.String)
            ),
            "sanity_flags": pl.Series(
                [["repetition"] if f else [] for f in rng.random(n) < 0.01],
                dtype=pl.List(pl.String),
            ),
            "cost_usd": np.where(ok, 0.0004 * size, 0.0),
            "rl_requests_limit": limit,
            "rl_requests_remaining": (limit * rng.uniform(0.5, 1.0, n)).astype(np.int64),
        }
    )


def _where(mask: np.ndarray, values: np.ndarray) -> pl.Series:
    """Values where ``mask`` holds, null elsewhere."""
    return pl.Series(np.where(mask, values, np.nan)).fill_nan(None)


def insert_hostile_rows(wh: Warehouse, provider: str, at: datetime) -> None:
    """A wrong answer and an error whose texts are HTML and script."""
    base = {
        "provider": provider,
        "model": f"{provider}-model",
        "probe": "short-arith",
        "task_family": "arithmetic",
        "context_class": "short",
        "source": "live",
    }
    rows = [
        {
            **base,
            "run_id": str(uuid.uuid4()),
            "started_at": at,
            "error_class": "ok",
            "ttft_ms": 300.0,
            "score_strict": "wrong",
            "response_text": HOSTILE_TEXT,
        },
        {
            **base,
            "run_id": str(uuid.uuid4()),
            "started_at": at + timedelta(minutes=1),
            "error_class": "server_error",
            "error_detail": "upstream said " + HOSTILE_TEXT,
        },
    ]
    wh.insert_rows("probe_results", rows, key="run_id")


def _put(wh: Warehouse, table: str, rows: list[dict[str, object]]) -> None:
    wh.insert_frame(table, pl.DataFrame(rows))


def insert_analysis(
    wh: Warehouse,
    providers: Sequence[str],
    *,
    end: datetime,
    degraded: tuple[datetime, datetime],
    vendor: str = "ExampleAI",
    escalated_at: datetime | None = None,
) -> str:
    """A finished analysis run: the first provider degraded since ``degraded[0]``
    (long-context issues, then major degradation from ``escalated_at`` if given)."""
    aid = str(uuid.uuid4())
    wh.insert_rows(
        "analysis_runs",
        [
            {
                "analysis_id": aid,
                "started_at": end,
                "finished_at": end,
                "status": "done",
                "since": end - timedelta(days=180),
                "until": end,
            }
        ],
        key="analysis_id",
    )
    phases, probs = [], []
    for i, p in enumerate(providers):
        onset = degraded[0] if i == 0 else None
        phases.append(
            {
                "analysis_id": aid,
                "provider": p,
                "phase_no": 1,
                "label": "stable",
                "stage": "stable",
                "start_at": end - timedelta(days=180),
                "end_at": onset,
                "confidence": 0.9,
                "signals": [],
            }
        )
        if onset:
            stages = [("long_context_issues", onset)]
            if escalated_at is not None:
                stages.append(("major_degradation", escalated_at))
            for n, (stage, start) in enumerate(stages):
                last = n == len(stages) - 1
                phases.append(
                    {
                        "analysis_id": aid,
                        "provider": p,
                        "phase_no": 2 + n,
                        "label": "degraded",
                        "stage": stage,
                        "start_at": start,
                        "end_at": None if last else stages[n + 1][1],
                        "severity": 0.38,
                        "severity_lo": 0.30,
                        "severity_hi": 0.47,
                        "confidence": 0.91,
                        "signals": ["ttft_p50_ms"],
                    }
                )
        for d in range(180):
            day = (end - timedelta(days=180 - d)).date()
            p_deg = 0.9 if onset and day >= onset.date() else 0.05
            probs.append({"analysis_id": aid, "provider": p, "day": day, "p_degraded": p_deg})
    wh.insert_frame("phases", pl.DataFrame(phases))
    wh.insert_frame("degraded_probability", pl.DataFrame(probs))
    _put(
        wh,
        "warning_signs",
        [
            {
                "analysis_id": aid,
                "provider": providers[0],
                "sign": "long_context_slower",
                "effect": 0.42,
                "effect_lo": 0.31,
                "effect_hi": 0.55,
                "pvalue": 0.0001,
                "qvalue": 0.0005,
                "fires": True,
                "persistent": True,
                "test": "mann-whitney",
            }
        ],
    )
    first_release = date(end.year, end.month, 1) - timedelta(days=120)
    _put(
        wh,
        "releases",
        [
            {
                "vendor": vendor,
                "model": "example-3",
                "release_date": first_release,
                "origin": "synthetic",
            }
        ],
    )
    _put(
        wh,
        "release_cycles",
        [
            {
                "analysis_id": aid,
                "provider": providers[0],
                "vendor": vendor,
                "release_model": "example-3",
                "release_date": first_release,
                "lead_days": 58.0,
            }
        ],
    )
    _put(
        wh,
        "release_forecasts",
        [
            {
                "analysis_id": aid,
                "provider": providers[0],
                "vendor": vendor,
                "expected_date": (end + timedelta(days=20)).date(),
                "window_lo": (end + timedelta(days=8)).date(),
                "window_hi": (end + timedelta(days=35)).date(),
                "conclusive": True,
                "basis": "one past cycle, lead 58 days",
            }
        ],
    )
    tests = [
        {
            "analysis_id": aid,
            "provider": None,
            "test": "onsets_before_releases_pooled",
            "statistic": 1.0,
            "pvalue": 0.31,
            "n": 1,
        },
        {
            "analysis_id": aid,
            "provider": None,
            "test": f"synchronized:{providers[0]}|other",
            "statistic": 0.62,
            "pvalue": 0.004,
            "n": 180,
        },
    ]
    _put(wh, "cycle_tests", tests)
    return aid


def heatmap_cells(answers: pl.DataFrame) -> pl.DataFrame:
    """The heatmap's cells of answer rows (provider, dow, hod, ttft), counted by the
    report's own SQL in an in-memory DuckDB."""
    with duckdb.connect() as con:
        con.register("answers", answers)
        return con.sql(cells_sql("SELECT * FROM answers")).pl()
