"""The canned query ``upstream_mix`` (``nerfwatch sql upstream_mix``) on a real DuckDB file:
each routed model's daily upstream shares with their TTFT and accuracy."""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from pipeline.warehouse import Warehouse
from pipeline.warehouse.queries import resolve_sql
from tests.test_upstream_mix import END, _router


def test_the_upstream_mix_query_gives_each_day_s_shares_speed_and_accuracy(
    warehouse: Warehouse,
) -> None:
    """``nerfwatch sql upstream_mix`` on the moved router: each day's shares sum to 1, and
    the last day's rows match the stored probes counted here independently."""
    frame = _router(warehouse, (0.2, 0.95))
    table = warehouse.query(resolve_sql("upstream_mix"))
    table = table.with_columns(pl.col("day").dt.convert_time_zone("UTC"))
    assert table.columns == [
        "provider", "model", "day", "upstream_provider", "probes", "share",
        "ttft_short_p50_ms", "ttft_long_p50_ms", "n_scored", "accuracy",
    ]  # fmt: skip
    sums = table.group_by("provider", "model", "day").agg(pl.col("share").sum())["share"]
    assert ((sums - 1).abs() <= 0.002).all(), sums
    last = END - timedelta(days=1)
    day = frame.filter(pl.col("started_at") >= last)
    got = {r["upstream_provider"]: r for r in table.filter(pl.col("day") == last).to_dicts()}
    assert set(got) == {"Together", "DeepInfra"}, got
    for name, row in got.items():
        mine = day.filter(pl.col("upstream_provider") == name)
        ok_short = mine.filter(
            (pl.col("error_class") == "ok") & (pl.col("context_class") == "short")
        )
        scored = mine["score_strict"].drop_nulls()
        assert row["probes"] == mine.height
        assert row["share"] == round(mine.height / day.height, 3)
        assert row["ttft_short_p50_ms"] == round(float(ok_short["ttft_ms"].quantile(0.5, "linear")))
        assert row["n_scored"] == scored.len()
        assert row["accuracy"] == round(float((scored == "correct").mean()), 3)
    assert got["Together"]["share"] > 0.8, got
