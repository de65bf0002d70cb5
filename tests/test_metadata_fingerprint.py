"""Metadata fingerprint: new model names and fingerprints, tokenizer and effort shifts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from pipeline.analysis.metadata_fingerprint import metadata_changes
from pipeline.analysis.metadata_sign import metadata_signs

SPLIT = datetime(2026, 3, 10, tzinfo=UTC)


def _rows(n: int, *, recent: bool, **values: object) -> pl.DataFrame:
    start = SPLIT if recent else SPLIT - timedelta(days=5)
    base = {
        "provider": "p", "model": "m", "reported_model": "m-1", "system_fingerprint": "fp_a",
        "task_family": "arithmetic", "prompt_chars": 400, "input_tokens": 100,
        "reasoning_tokens": None,
    }  # fmt: skip
    base |= values
    return pl.DataFrame(
        [{**base, "started_at": start + timedelta(minutes=i)} for i in range(n)],
        schema_overrides={"reasoning_tokens": pl.Int64},
    )


def test_an_unchanged_provider_shows_nothing() -> None:
    rows = pl.concat([_rows(20, recent=False), _rows(20, recent=True)])
    assert metadata_changes(rows, SPLIT) == []


def test_a_new_model_name_and_fingerprint_are_events() -> None:
    rows = pl.concat(
        [
            _rows(20, recent=False),
            _rows(20, recent=True, reported_model="m-1-mini", system_fingerprint="fp_b"),
        ]
    )
    found = {(c.kind, c.detail) for c in metadata_changes(rows, SPLIT)}
    assert found == {
        ("reported_model", "'m-1-mini' (baseline: m-1)"),
        ("system_fingerprint", "'fp_b' (baseline: fp_a)"),
    }


def test_another_tokenizer_shows_as_tokens_per_character() -> None:
    base = pl.concat([_rows(1, recent=False, input_tokens=100 + i % 3) for i in range(20)])
    moved = pl.concat([_rows(1, recent=True, input_tokens=112 + i % 3) for i in range(20)])
    (change,) = metadata_changes(pl.concat([base, moved]), SPLIT)
    assert change.kind == "tokens_per_char"
    assert change.relative_shift == pytest.approx(113 / 101 - 1)
    assert change.p_value is not None and change.p_value < 1e-6


def test_fewer_reasoning_tokens_is_an_effort_change() -> None:
    base = pl.concat([_rows(1, recent=False, reasoning_tokens=900 + 10 * i) for i in range(10)])
    moved = pl.concat([_rows(1, recent=True, reasoning_tokens=300 + 10 * i) for i in range(10)])
    (change,) = metadata_changes(pl.concat([base, moved]), SPLIT)
    assert change.kind == "reasoning_tokens" and change.relative_shift is not None
    assert change.relative_shift < -0.5 and change.p_value is not None and change.p_value < 0.001


def test_as_a_sign_a_new_model_name_fires_and_token_shifts_are_bonferroni_tested() -> None:
    end = SPLIT + timedelta(days=3)
    renamed = pl.concat([_rows(20, recent=False), _rows(20, recent=True, reported_model="m-2")])
    (sign,) = metadata_signs(renamed, end)
    assert sign.sign == "response_metadata_changed" and sign.pvalue == 0.0 and sign.worse
    assert "reported_model 'm-2'" in sign.detail
    base = pl.concat([_rows(1, recent=False, input_tokens=100 + i % 3) for i in range(20)])
    moved = pl.concat([_rows(1, recent=True, input_tokens=112 + i % 3) for i in range(20)])
    (tokens,) = metadata_signs(pl.concat([base, moved]), end)
    (change,) = metadata_changes(pl.concat([base, moved]), SPLIT)
    assert change.p_value is not None
    assert tokens.pvalue == pytest.approx(min(1.0, 2 * change.p_value))  # 2 tests, 1 family
    assert tokens.worse and not tokens.persistent  # no earlier window moved
    fingerprint = pl.concat(
        [_rows(20, recent=False), _rows(20, recent=True, system_fingerprint="fp_b")]
    )
    (quiet,) = metadata_signs(fingerprint, end)
    assert not quiet.worse and "fp_b" in quiet.detail
