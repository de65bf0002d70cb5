"""The error table: its rows use only documented classes, and precedence works as designed.
(Every provider's documented codes are replayed in test_adapters_transcripts.py.)"""

from __future__ import annotations

import pytest

from probes.errors import ERROR_CLASSES, GENERIC_RULES, RETRYABLE, RULES, classify, classify_status


def test_table_uses_known_classes() -> None:
    for rule in (*RULES, *GENERIC_RULES):
        assert rule.error_class in ERROR_CLASSES
    assert set(ERROR_CLASSES) >= RETRYABLE
    assert not {"quota_exhausted", "auth", "bad_request", "ok"} & RETRYABLE


@pytest.mark.parametrize(
    ("status", "expected"),
    [(301, "bad_request"), (302, "bad_request"), (400, "bad_request"), (401, "auth"),
     (402, "quota_exhausted"), (403, "auth"), (404, "bad_request"), (408, "server_error"),
     (413, "bad_request"), (429, "rate_limited"), (500, "server_error"),
     (502, "server_error"), (503, "overloaded"), (504, "server_error"), (529, "overloaded")],
)  # fmt: skip
def test_status_alone(status: int, expected: str) -> None:
    assert classify_status(status) == expected
    assert classify(status) == expected


def test_specific_code_beats_generic_type() -> None:
    # Z.ai's Anthropic route: balance exhausted inside a rate_limit_error
    assert classify(429, ["rate_limit_error", "1113"]) == "quota_exhausted"
    # Anthropic spend cap: details.error_code inside a rate_limit_error
    assert classify(429, ["enforced_spend_limit_reached", "rate_limit_error"]) == (
        "quota_exhausted"
    )
    assert classify(429, ["rate_limit_error"]) == "rate_limited"


def test_message_beats_generic_type_but_not_specific_code() -> None:
    assert classify(400, ["invalid_request_error"], "prompt is too long: 9 > 8") == (
        "context_overflow"
    )
    assert classify(400, ["BadRequestError", "400"], "maximum context length is 8192") == (
        "context_overflow"
    )
    assert classify(429, ["1302"], "too much traffic") == "rate_limited"


def test_minimax_codes_do_not_clash_with_zai() -> None:
    assert classify(200, ["base_resp:1002"]) == "rate_limited"
    assert classify(401, ["1002"]) == "auth"  # Z.ai: invalid token


def test_in_stream_errors() -> None:
    assert classify(200, ["502"], "Provider disconnected") == "server_error"
    assert classify(200, ["429"], "") == "rate_limited"
    assert classify(200, [], "something broke") == "server_error"
    assert classify(200, ["overloaded_error"]) == "overloaded"


def test_preset_specific_rows() -> None:
    assert classify(403, [], "limit", preset="moonshot") == "quota_exhausted"
    assert classify(403, [], "Input was flagged", preset="openrouter") == "content_filter"
    assert classify(403, [], "nope", preset="openai") == "auth"
