"""Rate-limit resets past any limit's window (31 days, as ``retry_after_s``) are NULL and
flagged ``out_of_range:<column>``, in every form a header sends them: a Go duration,
seconds, an RFC 3339 time, a Unix epoch. A reset of 99999999999h was stored as 3.6e14
seconds, which the report's rate-limit charts then read. Unreadable, negative or
non-finite values stay unknown and unflagged, as before."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from probes.ratelimits import MAX_RETRY_AFTER_S, WAIT_COLUMNS, rate_limits
from probes.result import ProbeResult
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
_RATE_LIMITED = b'{"error": {"message": "slow down", "type": "rate_limit_error"}}'

# (header, column, value): each reset header's own form, every one far past 31 days
TOO_LONG = [
    ("x-ratelimit-reset-requests", "rl_requests_reset_s", "99999999999h"),
    ("x-ratelimit-reset-requests", "rl_requests_reset_s", "744h0m1s"),  # 31 days and 1 s
    ("x-ratelimit-reset-tokens", "rl_tokens_reset_s", "1e308"),
    ("anthropic-ratelimit-requests-reset", "rl_requests_reset_s", "9999-12-31T23:59:59Z"),
    ("anthropic-ratelimit-input-tokens-reset", "rl_input_tokens_reset_s", "9999-12-31T00:00Z"),
    ("anthropic-ratelimit-output-tokens-reset", "rl_output_tokens_reset_s", "2678401"),
    ("anthropic-ratelimit-unified-reset", "rl_unified_reset_s", "253402300799"),  # 9999
    ("anthropic-ratelimit-unified-5h-reset", "rl_unified_5h_reset_s", "1e308"),  # past any date
    ("anthropic-ratelimit-unified-7d-reset", "rl_unified_7d_reset_s", "99999999999999999999"),
    ("x-ratelimit-reset", "rl_requests_reset_s", "253402300799000"),  # OpenRouter ms, 9999
]


@pytest.mark.parametrize(("header", "column", "value"), TOO_LONG)
def test_a_reset_past_any_limits_window_is_null_and_named(
    header: str, column: str, value: str
) -> None:
    """(Anthropic's input family fills ``rl_tokens_*`` too, so both are named.)"""
    out_of_range: set[str] = set()
    limits = rate_limits({header: value}, NOW, out_of_range)
    assert column in out_of_range <= WAIT_COLUMNS
    assert all(limits[name] is None for name in out_of_range)


@pytest.mark.parametrize(
    ("header", "column", "value", "seconds"),
    [
        ("x-ratelimit-reset-requests", "rl_requests_reset_s", "744h0m0s", MAX_RETRY_AFTER_S),
        ("x-ratelimit-reset-tokens", "rl_tokens_reset_s", "6m0s", 360.0),
        ("anthropic-ratelimit-tokens-reset", "rl_tokens_reset_s", "2026-11-20T09:01:00Z", 60.0),
        ("anthropic-ratelimit-unified-reset", "rl_unified_reset_s", "1795168800", 3600.0),
        ("x-ratelimit-reset", "rl_requests_reset_s", "1795165260000", 60.0),  # OpenRouter ms
        ("x-ratelimit-reset", "rl_requests_reset_s", "1795165230", 30.0),  # epoch seconds
        ("x-ratelimit-reset", "rl_requests_reset_s", "12", 12.0),  # a wait in seconds
        ("x-ratelimit-reset", "rl_requests_reset_s", "1795165100000", 0.0),  # already past
    ],
)
def test_a_reset_within_a_month_is_kept(
    header: str, column: str, value: str, seconds: float
) -> None:
    out_of_range: set[str] = set()
    assert rate_limits({header: value}, NOW, out_of_range)[column] == seconds
    assert out_of_range == set()


@pytest.mark.parametrize("value", ["NaN", "-5s", "inf", "soon"])
def test_a_reset_that_is_no_duration_stays_unknown_and_unflagged(value: str) -> None:
    out_of_range: set[str] = set()
    limits = rate_limits({"x-ratelimit-reset-requests": value}, NOW, out_of_range)
    assert limits["rl_requests_reset_s"] is None
    assert out_of_range == set()


@pytest.mark.parametrize(("header", "column", "value"), TOO_LONG)
def test_the_probes_row_stores_null_and_the_flag(header: str, column: str, value: str) -> None:
    """Real HTTP on loopback through ``run_probe``, and back through the spool's JSON."""
    reply = Reply(
        status=429, body=_RATE_LIMITED, headers={"content-type": "application/json", header: value}
    )
    with serving(lambda _n, _reused: reply) as server:
        (result,) = probe_n(loopback_provider(server.port), short_probe())
    assert result.error_class == "rate_limited"
    assert getattr(result, column) is None
    assert f"out_of_range:{column}" in result.sanity_flags
    stored = ProbeResult.from_json(result.to_json())
    assert (getattr(stored, column), stored.sanity_flags) == (None, result.sanity_flags)


def test_openrouters_unsuffixed_family_is_the_request_limit() -> None:
    """providers.md §11: ``x-ratelimit-*`` on OpenRouter's error responses; its limits count
    requests. The family was not read at all: every column NULL on a 429 that named them."""
    headers = {"x-ratelimit-limit": "50", "x-ratelimit-remaining": "0",
               "x-ratelimit-reset": "1795165260000"}  # fmt: skip
    limits = rate_limits(headers, NOW)
    assert (limits["rl_requests_limit"], limits["rl_requests_remaining"]) == (50, 0)
    assert limits["rl_requests_reset_s"] == 60.0
    assert limits["rl_tokens_limit"] is None


def test_openais_suffixed_family_wins_over_the_unsuffixed_one() -> None:
    """Fields are never mixed across families (the rule ``_first_family`` keeps)."""
    headers = {"x-ratelimit-limit-requests": "500", "x-ratelimit-reset-requests": "6m0s",
               "x-ratelimit-limit": "50", "x-ratelimit-remaining": "0"}  # fmt: skip
    limits = rate_limits(headers, NOW)
    assert (limits["rl_requests_limit"], limits["rl_requests_remaining"]) == (500, None)
    assert limits["rl_requests_reset_s"] == 360.0
