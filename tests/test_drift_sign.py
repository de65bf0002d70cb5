"""A stored drift baseline becomes the "fixed answers changed" warning sign, under BH."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from pipeline.analysis.orchestrate import scored_rows
from pipeline.analysis.paired_items import paired_items, paired_tests
from pipeline.analysis.warning_signs import warning_signs
from pipeline.config.model import Config, ProviderConfig, WarehouseConfig
from pipeline.drift.baseline import Baseline, DaySample, DriftSettings, baseline_path, save
from pipeline.drift.check import check_baseline
from pipeline.drift.cost import drift_costs
from pipeline.drift.signs import SIGN, drift_signs, sign_of
from pipeline.warehouse import Warehouse

REFERENCE = {f"p{i}": {"A": 50, "B": 35, "C": 15} for i in range(8)}
QUIET = [0.22, 0.25, 0.21, 0.24]


def _baseline(distances: list[float], provider: str = "p") -> Baseline:
    first = date(2026, 3, 2)
    days = [
        DaySample((first + timedelta(i)).isoformat(), tv, 80, 0, {})
        for i, tv in enumerate(distances)
    ]
    return Baseline(
        provider=provider, model="m", accepted_at="2026-03-01T00:00:00+00:00",
        settings=DriftSettings(inputs=8, per_input=10), discovery={}, reference=REFERENCE,
        days=days,
    )  # fmt: skip


def test_three_shifted_days_make_a_persistent_sign_in_plain_words() -> None:
    sign = sign_of(_baseline([*QUIET, 0.6, 0.62, 0.58]))
    assert sign is not None and sign.sign == SIGN
    assert sign.worse and sign.persistent
    assert sign.pvalue < 0.001 and sign.effect > 0.3 and sign.effect_lo > 0.2
    assert sign.detail.startswith(
        "the answers to fixed questions changed on 2026-03-06; same model name (m)"
    )
    assert sign.window_start == datetime(2026, 3, 8, tzinfo=UTC)


def test_the_sign_stays_on_until_a_new_baseline_is_accepted() -> None:
    """Twelve shifted days: drift check's trailing window has taken them as the new
    normal, but the answers still differ from the accepted reference."""
    baseline = _baseline([*QUIET, *[0.6] * 12])
    sign = sign_of(baseline)
    assert sign is not None and sign.worse and sign.persistent
    assert "changed on 2026-03-06" in sign.detail
    assert not check_baseline(baseline).days[-1][1].out


def test_one_shifted_day_is_worth_a_look_but_not_persistent() -> None:
    sign = sign_of(_baseline([*QUIET, 0.61]))
    assert sign is not None and sign.worse and not sign.persistent


def test_an_unchanged_model_gives_a_quiet_sign() -> None:
    sign = sign_of(_baseline([*QUIET, 0.23]))
    assert sign is not None and not sign.worse and sign.pvalue > 0.05
    assert sign.detail.startswith("answers to fixed questions as before")
    assert sign_of(_baseline([])) is None


def _hourly() -> pl.DataFrame:
    hours = [datetime(2026, 2, 1, tzinfo=UTC) + timedelta(hours=h) for h in range(24 * 40)]
    size = len(hours)
    return pl.DataFrame({
        "provider": ["p"] * size, "model": ["m"] * size, "hour": hours, "n": [10] * size,
        "n_busy": [0] * size, "n_scored": [10] * size, "n_correct": [9] * size,
        "n_flagged": [0] * size, "requests_limit": [None] * size, "tokens_limit": [None] * size,
    }).with_columns(pl.col("hour").cast(pl.Datetime("us", "UTC")))  # fmt: skip


def test_the_sign_joins_bh_control_with_its_own_persistence(tmp_path: Path) -> None:
    save(_baseline([*QUIET, 0.6, 0.62, 0.58]), baseline_path(tmp_path, "p", "m"))
    save(_baseline([*QUIET, 0.23], "q"), baseline_path(tmp_path, "q", "m"))
    extra = drift_signs(tmp_path)
    assert [s.provider for s in extra] == ["p", "q"]
    penalty = pl.DataFrame(
        schema={"provider": pl.Utf8, "model": pl.Utf8, "hour": pl.Datetime("us", "UTC"),
                "penalty": pl.Float64}
    )  # fmt: skip
    incidents = pl.DataFrame(schema={"vendor": pl.Utf8, "start_date": pl.Date, "end_date": pl.Date})
    signs = warning_signs(_hourly(), penalty, incidents, {("p", "m"): "V"}, extra=extra)
    drift = [s for s in signs if s.sign == SIGN]
    assert [(s.fires, s.persistent) for s in drift] == [(True, True), (False, False)]
    assert all(s.qvalue >= s.pvalue for s in drift)
    silent = {s.provider: s for s in signs if s.sign == "no_official_word"}
    assert silent["p"].fires and SIGN in silent["p"].detail
    assert not silent["q"].fires


def test_the_daily_cost_counts_the_providers_own_prompt_tokens(tmp_path: Path) -> None:
    baseline = _baseline(QUIET)
    baseline.settings = DriftSettings(inputs=8, per_input=10, logprob_calls=50)
    baseline.input_tokens = {"p0": [12], "p1": [12, 13]}
    save(baseline, baseline_path(tmp_path, "p", "m"))
    provider = ProviderConfig(
        name="p", format="openai", base_url="http://127.0.0.1:9/v1", model="m",
        api_key_env=None, price_input_per_mtok=2.0, price_output_per_mtok=10.0,
    )  # fmt: skip
    config = Config(
        path=None, warehouse=WarehouseConfig(tmp_path / "w.duckdb", tmp_path / "spool"),
        providers=(provider,), probes=(),
    )  # fmt: skip
    (cost,) = drift_costs(config, tmp_path)
    assert (cost.calls_per_day, cost.tokens_per_day) == (130, 130 * 14)
    assert cost.cost_per_day_usd == pytest.approx(130 * (13 * 2.0 + 10.0) / 1e6)


def test_replayed_items_join_dumber_answers_by_mcnemar() -> None:
    """Accuracy equal on average, but 12 of 40 replayed items went right->wrong, 1 back."""
    baseline = {i: True for i in range(40)}
    recent = {i: i >= 12 for i in range(40)} | {39: True}
    baseline |= {"w": False}
    recent |= {"w": True}
    test = paired_items(baseline, recent)
    penalty = pl.DataFrame(
        schema={"provider": pl.Utf8, "model": pl.Utf8, "hour": pl.Datetime("us", "UTC"),
                "penalty": pl.Float64}
    )  # fmt: skip
    incidents = pl.DataFrame(schema={"vendor": pl.Utf8, "start_date": pl.Date, "end_date": pl.Date})
    plain = warning_signs(_hourly(), penalty, incidents, {("p", "m"): "V"})
    paired = warning_signs(
        _hourly(), penalty, incidents, {("p", "m"): "V"}, paired={("p", "m"): test}
    )
    (before,) = [s for s in plain if s.sign == "dumber_answers"]
    (after,) = [s for s in paired if s.sign == "dumber_answers"]
    assert not before.fires and after.fires and after.worse
    assert after.pvalue == pytest.approx(min(1.0, 2 * min(before.pvalue, test.p_worse)))
    assert "12 right->wrong, 1 wrong->right" in after.detail and "McNemar" in after.test


def test_the_scored_items_query_runs_on_a_real_warehouse(warehouse: Warehouse) -> None:
    rows = scored_rows(warehouse, datetime(2026, 3, 20, tzinfo=UTC), None)
    assert rows.columns == [
        "provider", "model", "task_family", "seed", "score_strict", "started_at", "window"
    ]  # fmt: skip
    assert paired_tests(rows) == {}
