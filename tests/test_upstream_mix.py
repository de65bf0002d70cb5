"""The upstreams a router names (OpenRouter's ``upstream_provider``) in the metadata sign.

Through the real path (a DuckDB file, ``run_analysis``, ``render_report``, ``now``
pinned): traffic moved to another upstream fires the sign and the report says who served
it before and after; a provider that never names an upstream gets exactly the old output;
a router whose mix held stays quiet. On frames: routing that sticks to one upstream for
hours or days is no change, and the test (days as the unit, an AR(1) across days) keeps
its level there.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from pipeline.analysis.upstream_mix import upstream_shift
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame
from tests.test_report_odd_weeks import WEEK, _render, _verdict

END = datetime(2026, 11, 20, tzinfo=UTC)  # in WEEK; the analysis's data end here
SPLIT = END - timedelta(days=3)  # the metadata sign's recent window starts here
SIGN = "response_metadata_changed"
LABEL = "Response metadata changed (model name, token counts)"


def _router(
    wh: Warehouse,
    together: tuple[float, float] | None,
    *,
    renamed: str | None = None,
) -> pl.DataFrame:
    """60 days of 'router', short and long probes hourly, with the columns the metadata
    sign reads. ``together``: the chance each probe names Together as its upstream (else
    DeepInfra) before and from ``SPLIT``; None: no upstream is ever named. ``renamed``:
    the model name reported from ``SPLIT`` on."""
    series = [Series("router", "router-short", "short"), Series("router", "router-long", "long")]
    frame = probe_frame(series, end=END, days=60, seed=3)
    recent = (frame["started_at"] >= SPLIT).to_numpy()
    upstream = pl.Series("upstream_provider", [None] * frame.height, dtype=pl.Utf8)
    if together is not None:
        chance = np.where(recent, together[1], together[0])
        drawn = np.random.default_rng(5).random(frame.height) < chance
        upstream = pl.Series("upstream_provider", np.where(drawn, "Together", "DeepInfra"))
    name = np.where(recent & (renamed is not None), renamed or "", "router-model-1")
    frame = frame.with_columns(
        upstream, prompt_chars=pl.lit(400), input_tokens=pl.lit(100), reported_model=name
    )
    wh.insert_frame("probe_results", frame, key="run_id")
    return frame


def _sign(wh: Warehouse) -> dict[str, Any]:
    rows = wh.query("SELECT * FROM warning_signs WHERE sign = ?", [SIGN])
    assert rows.height == 1, rows
    return rows.row(0, named=True)


def test_traffic_moved_to_another_upstream_fires_and_is_said_in_words(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """Together served 20 % for 57 days, then 95 %: the sign fires, and the verdict says
    who served before and after. The old code never read the column: quiet."""
    _router(warehouse, (0.2, 0.95))
    page = _render(warehouse, tmp_path, WEEK, END)
    sign = _sign(warehouse)
    assert sign["fires"], sign
    assert "upstream mix by day (AR(1) across days)" in sign["test"], sign
    # 20 % to 91 % of calls on 3 days, hourly probes drawn call by call: far beyond
    # the baseline days' spread, so p is tiny even times 5 tests
    assert sign["pvalue"] < 1e-6, sign
    verdict = _verdict(page, "router")
    assert (
        f"{LABEL} served by DeepInfra 79 %, Together 21 % (1,344 calls on each of the 28 days "
        "before) \u2192 Together 91 %, DeepInfra 9 % (144 calls on each of the last 3 days), "
        "70 % of calls moved (first window)"
    ) in verdict, verdict
    assert "(p=" not in verdict and "\u2013 token count" not in verdict, verdict


def test_a_provider_that_never_names_an_upstream_reads_as_before(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """No upstream_provider at all, a new model name in the recent window: the sign, its
    test, detail and p, and the verdict's line are the old code's, word for word."""
    _router(warehouse, None, renamed="router-model-2")
    page = _render(warehouse, tmp_path, WEEK, END)
    sign = _sign(warehouse)
    assert sign["fires"] and sign["pvalue"] == 0.0, sign
    assert sign["test"] == "new values; Mann-Whitney x families, Bonferroni", sign
    assert sign["detail"] == "reported_model 'router-model-2' (baseline: router-model-1)", sign
    assert f"{LABEL} \u2013 token count (first window)" in _verdict(page, "router")


def test_a_router_whose_mix_held_is_quiet(warehouse: Warehouse, tmp_path: Path) -> None:
    """Together 30 % before and after: tested, no change reported, nothing in the verdict."""
    _router(warehouse, (0.3, 0.3))
    page = _render(warehouse, tmp_path, WEEK, END)
    sign = _sign(warehouse)
    assert not sign["fires"], sign
    assert sign["detail"] == "reported model, fingerprint, token counts and upstream mix as before"
    assert LABEL not in _verdict(page, "router")


def _sticky(rng: np.random.Generator, stint_h: int) -> pl.DataFrame:
    """31 days of calls every 30 minutes whose upstream (of three) is drawn anew every
    ``stint_h`` hours: the same routing throughout, only stuck for hours at a time."""
    times = [SPLIT - timedelta(days=28) + timedelta(minutes=30 * i) for i in range(31 * 48)]
    stints = rng.choice(["DeepInfra", "Together", "Fireworks"], size=31 * 24 // stint_h + 1)
    names = [str(stints[i // (2 * stint_h)]) for i in range(len(times))]
    return pl.DataFrame({"started_at": times, "upstream_provider": names})


def test_routing_that_sticks_for_hours_keeps_the_test_s_level() -> None:
    """Nothing changed, but the router stays on one upstream for 8 hours or a whole day.
    Calls are not independent, days are the unit: the test rejects at 5 % in at most
    about 5 % of such histories (a per-call G-test would reject in most).
    200 seeded histories; the 99.9 % binomial bound for 5 % is 22."""
    rng = np.random.default_rng(11)
    rejected = 0
    for k in range(200):
        found = upstream_shift(_sticky(rng, 8 if k % 2 else 24), SPLIT)
        rejected += found is not None and found.p_value <= 0.05
    assert rejected <= 22, rejected


def _drifting(rng: np.random.Generator, mean_h: float, novita: float = 0.0) -> pl.DataFrame:
    """31 days of calls every 30 minutes; the router sticks to an upstream (DeepInfra 50 %,
    Together 30 %, Fireworks 20 %) for an exponential stint of mean ``mean_h`` hours, so
    stints cross day borders and neighbouring days are alike. ``novita``: the chance a
    call in the 3 recent days goes to a new upstream instead."""
    times = [SPLIT - timedelta(days=28) + timedelta(minutes=30 * i) for i in range(31 * 48)]
    names, left, current = [], 0.0, "DeepInfra"
    for t in times:
        if left <= 0:
            current = str(rng.choice(["DeepInfra", "Together", "Fireworks"], p=[0.5, 0.3, 0.2]))
            left = rng.exponential(mean_h)
        left -= 0.5
        names.append("Novita" if t >= SPLIT and rng.random() < novita else current)
    return pl.DataFrame({"started_at": times, "upstream_provider": names})


def test_stints_spanning_days_keep_the_test_s_level() -> None:
    """Nothing changed, but stints average one or two days: the three recent days are
    alike. The permutation over days took them as exchangeable and rejected at 5 % in
    22 % and 26 % of such histories (44 of these 200); the AR(1) across days keeps under
    5 % (2-3 % in 400 histories). The 99.9 % binomial bound for 5 % of 200 is 22."""
    rng = np.random.default_rng(13)
    rejected = 0
    for k in range(200):
        found = upstream_shift(_drifting(rng, 48 if k % 2 else 24), SPLIT)
        rejected += found is not None and found.p_value <= 0.05
    assert rejected <= 22, rejected


def test_a_new_upstream_on_the_recent_days_is_found_through_sticky_routing() -> None:
    """Novita takes half the calls on the 3 recent days, the rest routed in 6-hour
    stints: found at p <= 0.01 (the sign multiplies p by its number of tests) in at
    least 18 of 20 histories (98.5 % of 400 in benchmarks/bench_upstream_mix_null.py).
    The permutation over days had p >= 1 / C(31, 3) but spread its null over sticky
    baseline days: 50 % of 400 at 0.01."""
    rng = np.random.default_rng(17)
    found = [upstream_shift(_drifting(rng, 6, novita=0.5), SPLIT) for _ in range(20)]
    assert sum(f is not None and f.p_value <= 0.01 for f in found) >= 18, found


def test_a_day_long_stint_on_one_upstream_is_no_change() -> None:
    """Days alternate between two upstreams, the last three all on Together: half the
    calls moved, but such a run of days is common in the baseline (p well above 5 %)."""
    times = [SPLIT - timedelta(days=28) + timedelta(minutes=30 * i) for i in range(31 * 48)]
    names = ["Together" if t >= SPLIT or (t - SPLIT).days % 2 else "DeepInfra" for t in times]
    found = upstream_shift(pl.DataFrame({"started_at": times, "upstream_provider": names}), SPLIT)
    assert found is not None and found.distance == 0.5
    assert found.p_value > 0.1, found


def test_the_detail_names_its_windows_beside_the_days_with_calls() -> None:
    """Calls on one day of the three recent ones: the day count alone ("on the last 1
    days") read as one day of steady probing; the detail now names both windows, so the
    report need not infer them from the sign's row."""
    times = [SPLIT - timedelta(days=28) + timedelta(minutes=30 * i) for i in range(31 * 48)]
    last = SPLIT + timedelta(days=2)
    kept = [t for t in times if t < SPLIT or t >= last]
    names = ["Together" if t >= SPLIT or i % 5 == 0 else "DeepInfra" for i, t in enumerate(kept)]
    frame = pl.DataFrame({"started_at": kept, "upstream_provider": names})
    found = upstream_shift(frame, SPLIT)
    assert found is not None, frame
    assert "(48 calls on the last 1 days)" in found.detail, found
    assert found.detail.endswith("(windows: the last 3 days against the 28 before)"), found
    week = upstream_shift(frame, SPLIT, recent=timedelta(days=7), baseline=timedelta(days=21))
    assert week is not None and week.detail.endswith("the last 7 days against the 21 before)")
