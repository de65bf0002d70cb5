"""Both wire formats over real loopback HTTP: shapes, usage, reasoning, headers, answers."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from probes.simulator import SimulatorHandle
from probes.simulator.tokens import count_tokens, tokenize
from probes.tasks import FAMILIES


def sse_events(raw: str) -> list[tuple[str | None, str]]:
    """(event name, data) pairs; comments are kept as ('comment', text)."""
    events: list[tuple[str | None, str]] = []
    for block in raw.split("\n\n"):
        name, data = None, []
        for line in block.splitlines():
            if line.startswith(":"):
                events.append(("comment", line[1:].strip()))
            elif line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            events.append((name, "\n".join(data)))
    return events


def openai_body(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"model": "any", "messages": [{"role": "user", "content": prompt}], **extra}


def anthropic_body(prompt: str, **extra: Any) -> dict[str, Any]:
    body = {"model": "any", "max_tokens": 512, "messages": [{"role": "user", "content": prompt}]}
    return {**body, **extra}


@pytest.fixture
def client() -> httpx.Client:
    with httpx.Client(timeout=30) as c:
        yield c


@pytest.mark.parametrize("family", ["arithmetic", "sorting", "json_extract", "kv_lookup"])
def test_openai_streaming_answers_correctly_with_exact_usage(
    simulator: SimulatorHandle, client: httpx.Client, family: str
) -> None:
    item = FAMILIES[family].item(11, 2_000 if family == "kv_lookup" else 200)
    url = simulator.provider_url("nova") + "/chat/completions"
    body = openai_body(item.prompt, stream=True, stream_options={"include_usage": True})
    response = client.post(url, json=body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    assert events[-1] == (None, "[DONE]")
    chunks = [json.loads(d) for n, d in events if n is None and d != "[DONE]"]
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == [] and usage_chunk["usage"] is not None
    assert all(c["usage"] is None for c in chunks[:-1])
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks[:-1])
    content_chunks = [c for c in chunks[:-1] if c["choices"][0]["delta"].get("content")]
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert FAMILIES[family].score(item, text).strict == "correct"
    assert usage_chunk["usage"]["completion_tokens"] == len(content_chunks) == count_tokens(text)
    assert usage_chunk["usage"]["prompt_tokens"] == count_tokens(item.prompt)
    comments = [d for n, d in events if n == "comment"]
    assert any(c.startswith("sim-first-token-ns=") for c in comments)
    assert events[-2][0] == "comment"  # first-token time just before the terminator


def test_openai_reasoning_content_and_no_usage_without_include_usage(
    simulator: SimulatorHandle, client: httpx.Client
) -> None:
    item = FAMILIES["counting"].item(2, 200)
    url = simulator.provider_url("kestrel") + "/chat/completions"
    response = client.post(url, json=openai_body(item.prompt, stream=True))
    chunks = [json.loads(d) for n, d in sse_events(response.text) if n is None and d != "[DONE]"]
    assert all("usage" not in c for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks]
    reasoning = "".join(d.get("reasoning_content") or "" for d in deltas)
    answer = "".join(d.get("content") or "" for d in deltas)
    assert reasoning and FAMILIES["counting"].score(item, answer).strict == "correct"
    first_reasoning = next(i for i, d in enumerate(deltas) if d.get("reasoning_content"))
    first_answer = next(i for i, d in enumerate(deltas) if d.get("content"))
    assert first_reasoning < first_answer


def test_openai_non_streaming_body_headers_and_timestamps(
    simulator: SimulatorHandle, client: httpx.Client
) -> None:
    item = FAMILIES["arithmetic"].item(5, 200)
    url = simulator.provider_url("nova") + "/chat/completions"
    response = client.post(url, json=openai_body(item.prompt))
    assert response.status_code == 200
    body = response.json()
    text = body["choices"][0]["message"]["content"]
    assert FAMILIES["arithmetic"].score(item, text).strict == "correct"
    assert body["usage"]["completion_tokens"] == len(tokenize(text))
    assert body["model"] == simulator.scenario.provider("nova").model_at(179)
    headers = response.headers
    assert headers["x-request-id"].startswith("req_")
    received, first = int(headers["x-sim-received-ns"]), int(headers["x-sim-first-token-ns"])
    assert received < first <= int(headers["x-sim-sent-ns"])
    limit = int(headers["x-ratelimit-limit-requests"])
    assert 0 <= int(headers["x-ratelimit-remaining-requests"]) <= limit
    assert int(headers["x-ratelimit-limit-tokens"]) > 0
    assert headers["x-ratelimit-reset-requests"][-1] == "s"


def test_anthropic_streaming_event_grammar_thinking_and_usage(
    simulator: SimulatorHandle, client: httpx.Client
) -> None:
    item = FAMILIES["sorting"].item(9, 200)
    url = simulator.provider_url("sable") + "/messages"
    response = client.post(url, json=anthropic_body(item.prompt, stream=True))
    assert response.status_code == 200
    assert response.headers["request-id"].startswith("req_")
    assert "anthropic-ratelimit-requests-limit" in response.headers
    assert response.headers["anthropic-ratelimit-requests-reset"].endswith("Z")
    events = [(n, json.loads(d)) for n, d in sse_events(response.text) if n != "comment"]
    names = [n for n, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    for name, data in events:
        assert data["type"] == name
    starts = [d["content_block"]["type"] for n, d in events if n == "content_block_start"]
    assert starts == ["thinking", "text"]
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    text = "".join(d.get("text", "") for d in deltas if d["type"] == "text_delta")
    thinking = [d for d in deltas if d["type"] == "thinking_delta"]
    assert thinking and any(d["type"] == "signature_delta" for d in deltas)
    assert FAMILIES["sorting"].score(item, text).strict == "correct"
    start_usage = events[0][1]["message"]["usage"]
    assert start_usage["input_tokens"] == count_tokens(item.prompt)
    final = events[-2][1]
    assert final["usage"]["output_tokens"] == len(thinking) + count_tokens(text)
    assert final["delta"]["stop_reason"] == "end_turn"


def test_anthropic_non_streaming_and_max_tokens_truncation(
    simulator: SimulatorHandle, client: httpx.Client
) -> None:
    item = FAMILIES["json_extract"].item(4, 300)
    url = simulator.provider_url("nova") + "/messages"
    full = client.post(url, json=anthropic_body(item.prompt)).json()
    assert full["type"] == "message" and full["stop_reason"] == "end_turn"
    text = full["content"][-1]["text"]
    assert FAMILIES["json_extract"].score(item, text).strict == "correct"
    cut = client.post(url, json=anthropic_body(item.prompt, max_tokens=3)).json()
    assert cut["stop_reason"] == "max_tokens" and cut["usage"]["output_tokens"] == 3


def test_unknown_prompt_gets_plausible_text(
    simulator: SimulatorHandle, client: httpx.Client
) -> None:
    url = simulator.provider_url("nova") + "/chat/completions"
    body = client.post(url, json=openai_body("What is a good name for a cat?")).json()
    text = body["choices"][0]["message"]["content"]
    assert len(text.split()) >= 10 and text.endswith(".")


def test_errors_on_demand_in_both_formats(simulator: SimulatorHandle, client: httpx.Client) -> None:
    prompt = FAMILIES["arithmetic"].item(1, 100).prompt
    oa = simulator.provider_url("nova") + "/chat/completions"
    an = simulator.provider_url("sable") + "/messages"
    r = client.post(oa, json=openai_body(prompt), headers={"x-sim-error": "rate_limited"})
    assert r.status_code == 429 and r.json()["error"]["code"] == "rate_limit_exceeded"
    assert int(r.headers["retry-after"]) >= 1 and r.headers["x-ratelimit-remaining-requests"] == "0"
    r = client.post(an, json=anthropic_body(prompt), headers={"x-sim-error": "overloaded"})
    assert r.status_code == 529 and r.json()["error"]["type"] == "overloaded_error"
    r = client.post(oa, json=openai_body(prompt), headers={"x-sim-error": "unavailable"})
    assert r.status_code == 503
    r = client.post(an, json=anthropic_body(prompt), headers={"x-sim-error": "quota_exhausted"})
    assert r.status_code == 429 and "retry-after" not in r.headers
    assert r.json()["error"]["details"]["error_code"] == "enforced_spend_limit_reached"
    r = client.post(oa, json=openai_body(prompt), headers={"x-sim-error": "business_error"})
    assert r.status_code == 200 and r.json()["base_resp"]["status_code"] == 1002
    r = client.post(
        oa, json=openai_body(prompt, stream=True), headers={"x-sim-error": "stream_error"}
    )
    assert r.status_code == 200
    last = [d for n, d in sse_events(r.text) if n is None][-1]
    assert json.loads(last)["error"]["type"] == "server_error"
    r = client.post(
        an, json=anthropic_body(prompt, stream=True), headers={"x-sim-error": "stream_error"}
    )
    errors = [json.loads(d) for n, d in sse_events(r.text) if n == "error"]
    assert errors and errors[0]["error"]["type"] == "overloaded_error"
    assert "message_stop" not in r.text


def test_bad_requests_are_rejected_with_a_reason(
    simulator: SimulatorHandle, client: httpx.Client
) -> None:
    url = simulator.provider_url("nova") + "/chat/completions"
    r = client.post(url, content=b"{not json")
    assert r.status_code == 400
    r = client.post(url, json={"messages": "nope"})
    assert r.status_code == 400 and "messages" in r.json()["error"]["message"]
    r = client.post(url, json=openai_body("hi"), headers={"x-sim-fault": "no_such_fault"})
    assert r.status_code == 400 and "x-sim-fault" in r.json()["error"]["message"]
    r = client.post(simulator.base_url + "/nobody/v1/chat/completions", json=openai_body("hi"))
    assert r.status_code == 404


def test_quality_on_demand_degrades_the_answer(
    simulator: SimulatorHandle, client: httpx.Client
) -> None:
    family = FAMILIES["arithmetic"]
    item = family.item(21, 200)
    url = simulator.provider_url("nova") + "/chat/completions"

    def ask(mode: str) -> str:
        r = client.post(url, json=openai_body(item.prompt), headers={"x-sim-quality": mode})
        return str(r.json()["choices"][0]["message"]["content"])

    assert family.score(item, ask("wrong")).strict == "wrong"
    slip = family.score(item, ask("format_slip"))
    assert slip.strict == "unparseable" and slip.lenient == "correct"
    assert any(ord(ch) > 0x3000 or 0x400 <= ord(ch) < 0x500 for ch in ask("wrong_script"))
