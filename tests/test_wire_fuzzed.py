"""Provider answers that once broke the rule "every provider failure becomes a classified
row": each came out as an ``internal error`` row (status, timings and class lost), a value
no downstream code can use, or a row the spool cannot write. Each server is real HTTP on
loopback, each probe goes through ``run_probe``."""

from __future__ import annotations

import json
import math

import pytest

from probes.result import ProbeResult
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

STREAM = {"content-type": "text/event-stream"}
ENDLESS = "9" * 5_000  # more digits than int() reads (4,300)


def _openai(*events: object, done: bool = True) -> bytes:
    """An OpenAI-format stream of ``events`` (dicts are JSON-encoded, strings sent as is)."""
    lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
    body = "".join(f"data: {line}\n\n" for line in lines)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def _chunk(content: str = "", finish: str | None = None) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


def _answer(text: str = "ANSWER: 4", usage: str | None = None) -> bytes:
    """A complete stream; ``usage`` is the raw JSON text of its usage chunk."""
    usage = usage or '{"prompt_tokens": 50, "completion_tokens": 3}'
    return _openai(_chunk(text), _chunk(finish="stop"), f'{{"choices": [], "usage": {usage}}}')


def _probe(reply: Reply, wire: str = "openai", **fields: object) -> ProbeResult:
    task = str(fields.pop("task", "arithmetic"))
    with serving(lambda _n, _reused: reply) as srv:
        provider = loopback_provider(srv.port, wire, **fields)
        (result,) = probe_n(provider, short_probe(task=task))
    assert "internal error" not in (result.error_detail or ""), result.error_detail
    return result


def test_json_nested_past_the_parser_is_a_malformed_event() -> None:
    """json raises RecursionError, not ValueError, on deep nesting."""
    deep = "[" * 100_000 + "]" * 100_000
    result = _probe(Reply(body=_openai(_chunk("ANSWER: 4"), deep), headers=STREAM))
    assert result.error_class == "malformed_stream"
    assert result.http_status == 200
    assert "undecodable data event" in (result.error_detail or "")
    assert result.ttft_ms is not None and result.response_text == "ANSWER: 4"


def test_an_error_body_nested_past_the_parser_is_classified_by_its_status() -> None:
    deep = ('{"a":' * 100_000 + "1" + "}" * 100_000).encode()
    result = _probe(Reply(status=503, body=deep), wire="anthropic")
    assert (result.error_class, result.http_status) == ("overloaded", 503)


def test_a_lone_surrogate_escape_leaves_a_row_the_spool_can_write() -> None:
    """``"\\ud800"`` is valid JSON and decodes to a lone surrogate, which UTF-8 (the spool's
    encoding) and DuckDB refuse: the daemon's append raised, and an ``aborted`` row with
    no measurement took the probe's place."""
    first = (
        r'{"model": "m\udfff", "choices": [{"index": 0, "delta": {"content": "ANSWER: 4 \ud800"}}]}'
    )
    body = _openai(first, _chunk(finish="stop"))
    result = _probe(Reply(body=body, headers=STREAM))
    assert result.error_class == "ok"
    line = result.to_json()
    line.encode("utf-8")  # what Spool.append does
    assert result.response_text == "ANSWER: 4 \ufffd"
    assert result.reported_model == "m\ufffd"
    assert "invalid_unicode" in result.sanity_flags
    assert ProbeResult.from_json(line).response_text == "ANSWER: 4 \ufffd"


@pytest.mark.parametrize("cost", ["NaN", "-Infinity", "-1.5", "1e400"])
def test_a_reported_cost_that_is_no_amount_is_dropped(cost: str) -> None:
    """The budget guard sums ``cost_usd``: one NaN made every later comparison with the
    cap false (no cap for the rest of the day), a negative one refunded spending."""
    usage = f'{{"prompt_tokens": 50, "completion_tokens": 3, "cost": {cost}}}'
    result = _probe(Reply(body=_answer(usage=usage), headers=STREAM))
    assert result.error_class == "ok"
    assert result.cost_usd is None


def test_a_reported_cost_is_kept_when_it_is_an_amount() -> None:
    usage = '{"prompt_tokens": 50, "completion_tokens": 3, "cost": 0.25}'
    result = _probe(Reply(body=_answer(usage=usage), headers=STREAM))
    assert result.cost_usd == 0.25


def test_token_counts_past_int64_are_flagged_not_priced() -> None:
    """A 401-digit count made pricing raise OverflowError (int times float price)."""
    huge = "1" + "0" * 400
    usage = f'{{"prompt_tokens": 50, "completion_tokens": {huge}}}'
    result = _probe(
        Reply(body=_answer(usage=usage), headers=STREAM),
        price_input_per_mtok=1.0, price_output_per_mtok=2.0,
    )  # fmt: skip
    assert result.error_class == "ok"
    assert (result.input_tokens, result.output_tokens) == (50, None)
    assert result.cost_usd == pytest.approx(50 / 1e6)
    assert "out_of_range:output_tokens" in result.sanity_flags


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "1e400"])
def test_rate_limit_times_that_are_no_duration_are_unknown(value: str) -> None:
    headers = {
        "content-type": "application/json",
        "retry-after": value,
        "retry-after-ms": value,
        "x-ratelimit-reset-requests": value,
        "anthropic-ratelimit-tokens-reset": value,
    }
    body = b'{"error": {"message": "slow down", "type": "rate_limit_error"}}'
    result = _probe(Reply(status=429, body=body, headers=headers))
    assert result.error_class == "rate_limited"
    assert (result.retry_after_s, result.rl_requests_reset_s, result.rl_tokens_reset_s) == (
        None, None, None,
    )  # fmt: skip
    assert not any(f.startswith("out_of_range") for f in result.sanity_flags)


def test_a_negative_retry_after_ms_falls_back_to_retry_after() -> None:
    headers = {"content-type": "application/json", "retry-after-ms": "-1", "retry-after": "7"}
    body = b'{"error": {"message": "slow down", "type": "rate_limit_error"}}'
    result = _probe(Reply(status=429, body=body, headers=headers))
    assert result.retry_after_s == 7.0


@pytest.mark.parametrize(
    ("status", "reason", "headers", "detail"),
    [
        (503, "Service Unavailable", {"retry-after": "30"}, "HTTP 503 Service Unavailable; "
         "retry-after 30"),
        (429, "Too Many Requests", {}, "HTTP 429 Too Many Requests"),
        (529, "Site Overloaded", {"retry-after-ms": "1500"}, "HTTP 529 Site Overloaded; "
         "retry-after-ms 1500"),
        (503, "", {}, "HTTP 503"),
    ],
)  # fmt: skip
def test_an_error_status_with_an_empty_body_keeps_its_status_line(
    status: int, reason: str, headers: dict[str, str], detail: str
) -> None:
    """A gateway's 503 or 529 often has no body at all: the row said nothing but the code.
    The status line's reason phrase and the wait the server asked for say more."""
    result = _probe(Reply(status=status, reason=reason, headers=headers))
    assert result.http_status == status
    assert result.error_detail == detail


def test_a_status_line_that_echoes_the_key_is_stored_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = "sk-test-0123456789abcdefghijklmnop"
    monkeypatch.setenv("NW_WIRE_TEST_KEY", key)
    reply = Reply(status=401, reason=f"Unauthorized {key}", headers={"retry-after": key})
    result = _probe(reply, api_key_env="NW_WIRE_TEST_KEY")
    assert result.http_status == 401
    assert result.error_detail and result.error_detail.startswith("HTTP 401 Unauthorized")
    assert key not in result.error_detail, result.error_detail


@pytest.mark.parametrize("code", ["\u00b2", ENDLESS], ids=["superscript-two", "5000-digits"])
@pytest.mark.parametrize("status", [200, 400])
def test_an_error_code_int_cannot_read_is_still_classified(code: str, status: int) -> None:
    """str.isdigit() accepts both; int() refuses both."""
    body = json.dumps({"error": {"message": "refused", "code": code}}).encode()
    result = _probe(Reply(status=status, body=body))
    expected = "bad_request" if status == 400 else "server_error"
    assert (result.error_class, result.http_status) == (expected, status)
    assert result.error_detail == "refused"


def test_an_overflow_message_with_endless_digits_is_a_context_overflow() -> None:
    body = json.dumps(
        {"error": {"type": "invalid_request_error", "message": "prompt is too long"},
         "hint": f"prompt is too long: {ENDLESS} tokens"}
    ).encode()  # fmt: skip
    result = _probe(Reply(status=400, body=body), wire="anthropic")
    assert (result.error_class, result.error_detail) == ("context_overflow", "prompt is too long")


def test_a_comment_with_endless_digits_is_ignored() -> None:
    """Comments are keep-alives; the simulator's first-token comment must not end a stream
    whatever number it carries."""
    body = f": first-token-ns {ENDLESS}\n\n".encode() + _answer()
    result = _probe(Reply(body=body, headers=STREAM))
    assert result.error_class == "ok", result.error_detail
    assert result.response_text == "ANSWER: 4"


@pytest.mark.parametrize(
    "answer",
    [f"ANSWER: [{ENDLESS}]", "ANSWER: " + "[" * 100_000 + "]" * 100_000],
    ids=["5000-digits", "nested-past-the-parser"],
)
def test_an_answer_the_scorer_cannot_read_is_unparseable(answer: str) -> None:
    result = _probe(Reply(body=_answer(text=answer), headers=STREAM), task="sorting")
    assert result.error_class == "ok"
    assert (result.score_strict, result.score_lenient) == ("unparseable", "unparseable")
    assert all(math.isfinite(v) for v in (result.ttft_ms or 0.0, result.total_ms or 0.0))


_RATE_LIMITED = b'{"error": {"message": "slow down", "type": "rate_limit_error"}}'


@pytest.mark.parametrize(
    "headers",
    [
        {"retry-after": "99999999999999999999"},  # was stored as 1e20 seconds
        {"retry-after": "2678401"},  # a second past 31 days
        {"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"},
        {"retry-after-ms": "99999999999999999999"},
    ],
)
def test_a_retry_after_past_any_limits_window_is_null_and_flagged(headers: dict[str, str]) -> None:
    result = _probe(Reply(status=429, body=_RATE_LIMITED, headers=headers))
    assert result.error_class == "rate_limited"
    assert result.retry_after_s is None
    assert "out_of_range:retry_after_s" in result.sanity_flags
    stored = ProbeResult.from_json(result.to_json())
    assert (stored.retry_after_s, stored.sanity_flags) == (None, result.sanity_flags)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2678400"}, 2_678_400.0),  # a monthly cap's 31 days
        ({"retry-after-ms": "99999999999999999999", "retry-after": "30"}, 30.0),
    ],
)
def test_a_retry_after_within_a_month_is_kept(headers: dict[str, str], seconds: float) -> None:
    result = _probe(Reply(status=429, body=_RATE_LIMITED, headers=headers))
    assert result.retry_after_s == seconds
    assert not any(f.startswith("out_of_range") for f in result.sanity_flags)
