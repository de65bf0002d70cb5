"""Prompt caching: the nonce is the first text the provider sees, and ``cache_hit`` fires only
for cached tokens the chat template ahead of the nonce cannot explain."""

from __future__ import annotations

import json
import re

import pytest

from probes.result import ProbeResult
from probes.tasks import rebuild
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe


def _stream(prompt_tokens: int, cached_tokens: int) -> bytes:
    chunks = [
        {"choices": [{"index": 0, "delta": {"content": "ANSWER: 4"}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {
            "prompt_tokens": prompt_tokens, "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        }},
    ]  # fmt: skip
    events = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return events.encode()


def _probe_once(prompt_tokens: int, cached_tokens: int) -> tuple[ProbeResult, bytes]:
    reply = Reply(
        body=_stream(prompt_tokens, cached_tokens),
        headers={"content-type": "text/event-stream"},
    )
    with serving(lambda _n, _reused: reply) as srv:
        (result,) = probe_n(loopback_provider(srv.port), short_probe(), seed=5)
        return result, srv.bodies[0]


@pytest.mark.parametrize(
    ("prompt_tokens", "cached_tokens", "flagged"),
    [
        (150, 0, False),
        (150, 7, False),  # the chat template ahead of the nonce
        (20_000, 64, False),  # one DeepSeek storage unit: could be an injected preamble
        (20_000, 128, True),  # past the allowance: the nonce itself was cached
        (60, 30, True),  # half of a short prompt
        (150, 150, True),
    ],
)
def test_cache_hit_needs_more_than_the_template(
    prompt_tokens: int, cached_tokens: int, flagged: bool
) -> None:
    result, _ = _probe_once(prompt_tokens, cached_tokens)
    assert result.error_class == "ok", result.error_detail
    assert result.cached_tokens == cached_tokens
    assert ("cache_hit" in result.sanity_flags) is flagged


def test_nonce_is_the_first_text_of_the_message() -> None:
    _, sent = _probe_once(150, 0)
    content = json.loads(sent)["messages"][0]["content"]
    assert re.match(r"[0-9a-f]{32} ", content), content[:60]
    rebuilt = rebuild(content)  # the simulator still regenerates the item from the header
    assert rebuilt is not None and rebuilt.prompt == content
