"""Wire fields of /work/shared/providers.md the probe client stored wrongly or not at all:
Azure's "not reported" rate-limit markers (§2), Anthropic's output-token and ``unified``
rate-limit headers (§4), cache writes and cache reads in ``cost_usd`` (§4, §2) and the
upstream OpenRouter names in each chunk (§11).

Every case is the documented bytes and headers, sent by a real HTTP server on loopback
through ``run_probe``; the rows then go through a real warehouse (a DuckDB file and a
DuckLake), where migration 012 added the columns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pipeline.warehouse import Lake, Warehouse
from probes.ratelimits import rate_limits
from probes.result import ProbeResult
from tests.support.http_server import QuietHandler, ThreadedServer
from tests.support.probing import loopback_provider, probe_n, short_probe

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
PAST_EPOCH = "946684800"  # 2000-01-01: a reset already due, whatever today is


@dataclass(frozen=True, slots=True)
class Reply:
    """One 200 response: its extra headers and its SSE body."""

    headers: dict[str, str]
    body: bytes


class ReplyServer(ThreadedServer):
    def __init__(self, reply: Reply) -> None:
        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(reply.body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(reply.body)

        super().__init__(Handler)


@contextmanager
def _serving(reply: Reply) -> Iterator[ReplyServer]:
    server = ReplyServer(reply)
    try:
        yield server
    finally:
        server.close()


def _probe(reply: Reply, preset: str, wire: str = "openai", **provider: Any) -> ProbeResult:
    with _serving(reply) as server:
        config = loopback_provider(server.port, wire, preset=preset, **provider)
        (result,) = probe_n(config, short_probe())
    assert result.error_class == "ok", result.error_detail
    return result


def _sse(payload: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


def _openai(usage: dict[str, Any], **top: Any) -> bytes:
    """§2's stream: an answer chunk, the finish chunk, the usage chunk, [DONE]."""
    chunk = {"id": "c", "model": "m", "object": "chat.completion.chunk", **top}
    answer = {**chunk, "choices": [{"index": 0, "delta": {"content": "ANSWER: 4"},
                                    "finish_reason": None}]}  # fmt: skip
    finish = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return b"".join(
        [_sse(answer), _sse(finish), _sse({**chunk, "choices": [], "usage": usage}),
         b"data: [DONE]\n\n"]
    )  # fmt: skip


def _anthropic(usage: dict[str, Any]) -> bytes:
    """§4's stream: message_start with ``usage``, one text block, message_delta, stop."""
    start = {"type": "message_start", "message": {"id": "msg_01A", "type": "message",
             "role": "assistant", "model": "m", "content": [], "usage": usage}}  # fmt: skip
    text = {"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "ANSWER: 4"}}  # fmt: skip
    stop = {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 57}}  # fmt: skip
    return b"".join(
        [_sse(start, "message_start"), _sse(text, "content_block_delta"),
         _sse(stop, "message_delta"), _sse({"type": "message_stop"}, "message_stop")]
    )  # fmt: skip


OPENAI_USAGE = {"prompt_tokens": 40, "completion_tokens": 9}


# -- 1. Azure's markers ---------------------------------------------------------------


def test_azure_not_reported_markers_are_stored_as_null() -> None:
    """§2: Azure OpenAI sends -1/0 in these headers; openai-dotnet issue 838 shows
    ``limit-tokens -1, remaining-tokens -1, reset-tokens 0``. The old code stored the
    reset as 0.0 s, and a limit of 0 with 0 remaining, which read as exhausted."""
    azure = {
        "x-ratelimit-limit-tokens": "-1", "x-ratelimit-remaining-tokens": "-1",
        "x-ratelimit-reset-tokens": "0",
        "x-ratelimit-limit-requests": "0", "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "0s",
    }  # fmt: skip
    result = _probe(Reply(azure, _openai(OPENAI_USAGE)), "openai")
    assert (result.rl_tokens_limit, result.rl_tokens_remaining, result.rl_tokens_reset_s) == (
        None, None, None)  # fmt: skip
    assert (
        result.rl_requests_limit, result.rl_requests_remaining, result.rl_requests_reset_s
    ) == (None, None, None)  # fmt: skip
    assert result.response_headers is not None  # the raw values stay visible there
    assert result.response_headers["x-ratelimit-reset-tokens"] == "0"


def test_a_real_exhausted_limit_keeps_its_zero() -> None:
    """A 0 beside a positive limit is a fact, not a marker; nor is one without a limit."""
    sent = {"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "0s", "x-ratelimit-remaining-tokens": "0"}  # fmt: skip
    limits = rate_limits(sent, NOW)
    assert limits["rl_requests_limit"] == 500
    assert limits["rl_requests_remaining"] == 0 and limits["rl_requests_reset_s"] == 0.0
    assert limits["rl_tokens_remaining"] == 0
    kept = rate_limits({"x-ratelimit-limit-tokens": "-1", "x-ratelimit-remaining-tokens": "7"}, NOW)
    assert (kept["rl_tokens_limit"], kept["rl_tokens_remaining"]) == (None, 7)


# -- 2. Anthropic output-token and unified headers ------------------------------------

ANTHROPIC_HEADERS = {
    "request-id": "req_01A",
    "anthropic-ratelimit-tokens-limit": "400000",
    "anthropic-ratelimit-tokens-remaining": "395000",
    "anthropic-ratelimit-output-tokens-limit": "80000",
    "anthropic-ratelimit-output-tokens-remaining": "79000",
    "anthropic-ratelimit-output-tokens-reset": "2000-01-01T00:00:00Z",
    "anthropic-ratelimit-unified-status": "allowed_warning",
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-reset": PAST_EPOCH,
    "anthropic-ratelimit-unified-5h-utilization": "0.92",
    "anthropic-ratelimit-unified-5h-reset": PAST_EPOCH,
    "anthropic-ratelimit-unified-7d-utilization": "0.18",
    "anthropic-ratelimit-unified-7d-reset": PAST_EPOCH,
}
ANTHROPIC_USAGE = {"input_tokens": 22, "cache_creation_input_tokens": 0,
                   "cache_read_input_tokens": 0, "output_tokens": 1}  # fmt: skip


def test_anthropic_output_and_unified_limits_have_columns() -> None:
    """§4: ``anthropic-ratelimit-output-tokens-*`` and the subscription family
    ``anthropic-ratelimit-unified-*`` were kept in response_headers only."""
    result = _probe(Reply(ANTHROPIC_HEADERS, _anthropic(ANTHROPIC_USAGE)), "anthropic", "anthropic")
    assert (result.rl_tokens_limit, result.rl_tokens_remaining) == (400_000, 395_000)
    assert result.rl_output_tokens_limit == 80_000
    assert result.rl_output_tokens_remaining == 79_000
    assert result.rl_output_tokens_reset_s == 0.0  # a reset already past
    assert result.rl_unified_status == "allowed_warning"
    assert result.rl_unified_claim == "five_hour"
    assert result.rl_unified_5h_utilization == pytest.approx(0.92)
    assert result.rl_unified_7d_utilization == pytest.approx(0.18)
    assert (result.rl_unified_reset_s, result.rl_unified_5h_reset_s) == (0.0, 0.0)
    assert result.rl_unified_7d_reset_s == 0.0


def test_unified_resets_are_epoch_seconds_and_nonsense_is_dropped() -> None:
    in_an_hour = str(int((NOW + timedelta(hours=1)).timestamp()))
    limits = rate_limits(
        {"anthropic-ratelimit-unified-5h-reset": in_an_hour,
         "anthropic-ratelimit-unified-reset": "1e300",
         "anthropic-ratelimit-unified-7d-utilization": "nan",
         "anthropic-ratelimit-unified-5h-utilization": "-0.5",
         "anthropic-ratelimit-unified-status": "sk-ant-api03-" + "x" * 40},
        NOW,
    )  # fmt: skip
    assert limits["rl_unified_5h_reset_s"] == 3600.0
    assert limits["rl_unified_reset_s"] is None
    assert limits["rl_unified_7d_utilization"] is None
    assert limits["rl_unified_5h_utilization"] is None
    assert limits["rl_unified_status"] is None  # not a status word: never stored


# -- 3. cache writes, 5. cache reads ----------------------------------------------------


def test_cache_writes_are_priced_above_the_input_rate() -> None:
    """§4: writes cost 1.25 x input (5-minute cache); the old code priced them as input."""
    usage = {"input_tokens": 22, "cache_creation_input_tokens": 4000,
             "cache_read_input_tokens": 0, "output_tokens": 1}  # fmt: skip
    reply = Reply({}, _anthropic(usage))
    prices = {"price_input_per_mtok": 3.0, "price_output_per_mtok": 15.0}
    result = _probe(reply, "anthropic", "anthropic", **prices)
    assert (result.input_tokens, result.cache_write_tokens) == (4022, 4000)
    assert result.cost_usd == pytest.approx((22 * 3.0 + 4000 * 3.75 + 57 * 15.0) / 1e6)
    hour = _probe(reply, "anthropic", "anthropic", **prices, price_cache_write_per_mtok=6.0)
    assert hour.cost_usd == pytest.approx((22 * 3.0 + 4000 * 6.0 + 57 * 15.0) / 1e6)


DOCUMENTED_CACHED = {"prompt_tokens": 1412, "completion_tokens": 95, "total_tokens": 1507,
                     "prompt_tokens_details": {"cached_tokens": 1280}}  # fmt: skip


def test_cached_input_without_a_cached_price_is_not_free() -> None:
    """§2's usage chunk (1,280 of 1,412 prompt tokens cached) with only input and output
    prices: the old default (0) costed the cached part as free."""
    reply = Reply({}, _openai(DOCUMENTED_CACHED))
    prices = {"price_input_per_mtok": 2.0, "price_output_per_mtok": 8.0}
    result = _probe(reply, "openai", **prices)
    assert result.cost_usd == pytest.approx((1412 * 2.0 + 95 * 8.0) / 1e6)
    discounted = _probe(reply, "openai", **prices, price_cached_per_mtok=0.5)
    assert discounted.cost_usd == pytest.approx((132 * 2.0 + 1280 * 0.5 + 95 * 8.0) / 1e6)
    free = _probe(reply, "openai", **prices, price_cached_per_mtok=0.0)  # said so: free
    assert free.cost_usd == pytest.approx((132 * 2.0 + 95 * 8.0) / 1e6)


# -- 4. OpenRouter's upstream, and every new column through a warehouse -----------------


def _openrouter() -> bytes:
    """§11's example stream, comments and the ``provider`` field included."""
    usage = {
        "prompt_tokens": 1412,
        "completion_tokens": 88,
        "total_tokens": 1500,
        "cost": 0.00091,
        "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 40},
    }
    chunk = {
        "id": "gen-17636-abc",
        "provider": "DeepInfra",
        "model": "z-ai/glm-5.3",
        "object": "chat.completion.chunk",
        "created": 1763600000,
    }
    answer = {
        **chunk,
        "choices": [
            {
                "index": 0,
                "delta": {"role": "assistant", "content": "ANSWER: 4"},
                "finish_reason": None,
            }
        ],
    }
    finish = {**chunk, "choices": [{"index": 0, "delta": {"content": ""},
              "finish_reason": "stop"}], "usage": usage}  # fmt: skip
    return b": OPENROUTER PROCESSING\n\n" + _sse(answer) + _sse(finish) + b"data: [DONE]\n\n"


def test_openrouter_upstream_is_recorded() -> None:
    result = _probe(Reply({}, _openrouter()), "openrouter")
    assert result.upstream_provider == "DeepInfra"
    assert result.reported_model == "z-ai/glm-5.3"


@pytest.mark.parametrize("backend", ["duckdb", "ducklake"])
def test_new_columns_reach_the_warehouse(backend: str, tmp_path: Path) -> None:
    """Migration 012 on a DuckDB file and on a DuckLake; the rows keep every new field."""
    routed = _probe(Reply({}, _openrouter()), "openrouter")
    limited = _probe(
        Reply(ANTHROPIC_HEADERS, _anthropic(ANTHROPIC_USAGE)), "anthropic", "anthropic"
    )
    location: Path | Lake = tmp_path / "w.duckdb"
    if backend == "ducklake":
        location = Lake(catalog=f"sqlite:{tmp_path / 'c.sqlite'}", data_path=str(tmp_path / "d"))
    warehouse = Warehouse(location)
    try:
        warehouse.migrate()
        rows = [r.as_row() for r in (routed, limited)]
        warehouse.insert_rows("probe_results", rows, key="run_id")
        stored = warehouse.query(
            "SELECT upstream_provider, cache_write_tokens, rl_output_tokens_limit,"
            " rl_unified_status, rl_unified_claim, rl_unified_5h_utilization"
            " FROM probe_results ORDER BY upstream_provider NULLS LAST"
        ).rows()
    finally:
        warehouse.close()
    assert stored == [
        ("DeepInfra", 0, None, None, None, None),
        (None, 0, 80_000, "allowed_warning", "five_hour", pytest.approx(0.92)),
    ]


# -- 5. Anthropic's input-token limit (migration 014) ---------------------------------

ANTHROPIC_ALL_LIMITS = {  # every family §4 names, as Anthropic sends them together
    "request-id": "req_01B",
    "anthropic-ratelimit-requests-limit": "4000",
    "anthropic-ratelimit-requests-remaining": "3999",
    "anthropic-ratelimit-requests-reset": "2000-01-01T00:00:00Z",
    "anthropic-ratelimit-tokens-limit": "480000",
    "anthropic-ratelimit-tokens-remaining": "474000",
    "anthropic-ratelimit-tokens-reset": "2000-01-01T00:00:00Z",
    "anthropic-ratelimit-input-tokens-limit": "400000",
    "anthropic-ratelimit-input-tokens-remaining": "395000",
    "anthropic-ratelimit-input-tokens-reset": "2000-01-01T00:00:01Z",
    "anthropic-ratelimit-output-tokens-limit": "80000",
    "anthropic-ratelimit-output-tokens-remaining": "79000",
    "anthropic-ratelimit-output-tokens-reset": "2000-01-01T00:00:00Z",
}


@pytest.mark.parametrize("backend", ["duckdb", "ducklake"])
def test_input_token_limit_has_columns_beside_the_combined_one(
    backend: str, tmp_path: Path
) -> None:
    """§4: with the combined ``tokens`` family sent, ``input-tokens-*`` (a limit of its
    own, like output) reached response_headers only; now its columns, in the warehouse."""
    result = _probe(
        Reply(ANTHROPIC_ALL_LIMITS, _anthropic(ANTHROPIC_USAGE)), "anthropic", "anthropic"
    )
    assert (result.rl_tokens_limit, result.rl_tokens_remaining) == (480_000, 474_000)
    assert (result.rl_input_tokens_limit, result.rl_input_tokens_remaining) == (400_000, 395_000)
    assert result.rl_input_tokens_reset_s == 0.0  # a reset already past
    assert (result.rl_output_tokens_limit, result.rl_requests_limit) == (80_000, 4000)
    location: Path | Lake = tmp_path / "w.duckdb"
    if backend == "ducklake":
        location = Lake(catalog=f"sqlite:{tmp_path / 'c.sqlite'}", data_path=str(tmp_path / "d"))
    warehouse = Warehouse(location)
    try:
        warehouse.migrate()
        warehouse.insert_rows("probe_results", [result.as_row()], key="run_id")
        stored = warehouse.query(
            "SELECT rl_tokens_limit, rl_input_tokens_limit, rl_input_tokens_remaining,"
            " rl_input_tokens_reset_s FROM probe_results"
        ).rows()
    finally:
        warehouse.close()
    assert stored == [(480_000, 400_000, 395_000, 0.0)]


def test_input_only_limits_still_fill_the_tokens_columns() -> None:
    """A gateway sending only ``input-tokens-*`` keeps its series in rl_tokens_*, as
    before, so a provider's history does not change meaning."""
    headers = {f"anthropic-ratelimit-input-tokens-{k}": v
               for k, v in (("limit", "400000"), ("remaining", "1000"))}  # fmt: skip
    limits = rate_limits(headers, NOW)
    assert (limits["rl_tokens_limit"], limits["rl_tokens_remaining"]) == (400_000, 1000)
    assert (limits["rl_input_tokens_limit"], limits["rl_input_tokens_remaining"]) == (400_000, 1000)


def test_one_limits_fields_never_come_from_two_families() -> None:
    """A combined family sent without its reset took the input family's reset: a limit
    of one family over the reset (or remaining count) of another describes neither."""
    headers = {
        "anthropic-ratelimit-tokens-limit": "480000",
        "anthropic-ratelimit-tokens-remaining": "474000",
        "anthropic-ratelimit-input-tokens-limit": "400000",
        "anthropic-ratelimit-input-tokens-remaining": "12",
        "anthropic-ratelimit-input-tokens-reset": (NOW + timedelta(seconds=30)).isoformat(),
    }
    limits = rate_limits(headers, NOW)
    assert (limits["rl_tokens_limit"], limits["rl_tokens_remaining"]) == (480_000, 474_000)
    assert limits["rl_tokens_reset_s"] is None
    assert limits["rl_input_tokens_reset_s"] == 30.0
