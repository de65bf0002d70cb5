"""A complete answer, then a connection left open with nothing more on it.

providers.md: an answer ends cleanly at its finish signal (``finish_reason``, Anthropic's
``message_delta`` stop reason); ``[DONE]``, ``message_stop`` and the close are framing. A
server that sends the finish chunk and its usage, then holds the socket open in silence,
was classed ``stall`` when the read timeout or the deadline fired: a complete, scorable
answer lost and counted as a provider fault, its ``total_ms`` the length of the hang. It is
answered, flagged ``no_close_after_finish``, and timed to its last event. Real HTTP on
loopback through ``run_probe``; the server keeps the connection open until the test ends.
"""

from __future__ import annotations

import json
import time

import pytest

from probes.adapters.stream import FINISH_GRACE_S
from probes.result import ProbeResult
from probes.runner import OPEN_AFTER_FINISH_FLAG
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

STREAM = {"content-type": "text/event-stream"}
SLACK_S = 6.0  # what a loaded 2-CPU machine may add before the test calls it a hang


def _openai(content: str = "", finish: str | None = None) -> bytes:
    event = {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}
    return f"data: {json.dumps(event)}\n\n".encode()


OPENAI_USAGE = b'data: {"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 3}}\n\n'
OPENAI_ANSWER = (_openai("ANSWER: 4"), _openai(finish="stop"), OPENAI_USAGE)


def _anthropic(event: dict[str, object]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


ANTHROPIC_ANSWER = (
    _anthropic({"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 5}}}),
    _anthropic({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "ANSWER: 4"}}),
    _anthropic({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 3}}),
)  # fmt: skip


def _probe(chunks: tuple[bytes, ...], wire: str, timeout_s: float, read_s: float) -> ProbeResult:
    """``chunks`` as chunked encoding, never ended: the server then waits on the open socket."""
    reply = Reply(headers=STREAM, chunks=chunks, unended=True)
    with serving(lambda _n, _reused: reply) as srv:
        probe = short_probe(timeout_s=timeout_s, read_timeout_s=read_s)
        started = time.monotonic()
        (result,) = probe_n(loopback_provider(srv.port, wire), probe)
        took = time.monotonic() - started
    assert took < timeout_s + SLACK_S, f"the probe took {took:.1f} s, deadline {timeout_s} s"
    return result


# (timeout_s, read_timeout_s): the silence ends at the post-finish wait (the read timeout,
# at most FINISH_GRACE_S), or at the overall deadline when that comes first.
ENDS = {"read timeout": (6.0, 1.5), "deadline": (1.5, 20.0)}


@pytest.mark.parametrize("end", sorted(ENDS))
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_finished_answer_then_silence_is_answered_and_flagged(wire: str, end: str) -> None:
    timeout_s, read_s = ENDS[end]
    chunks = OPENAI_ANSWER if wire == "openai" else ANTHROPIC_ANSWER
    result = _probe(chunks, wire, timeout_s, read_s)
    assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4"), result.error_detail
    assert result.score_strict is not None and result.output_tokens == 3  # it was scored
    assert OPEN_AFTER_FINISH_FLAG in result.sanity_flags
    # The silence lasted at least min(read_s, deadline) >= 1.5 s; none of it is latency.
    assert result.total_ms is not None and result.last_token_ms is not None
    assert result.total_ms < 1500, f"total_ms {result.total_ms:.0f} includes the hang"


def test_the_wait_after_a_finish_is_bounded_below_a_long_read_timeout() -> None:
    """Usage may follow the finish chunk, so the client waits for it, but not for the
    whole read timeout: a hang after every answer would hold a probe slot for 30 s."""
    started = time.monotonic()
    result = _probe(OPENAI_ANSWER, "openai", 60.0, 30.0)
    took = time.monotonic() - started
    assert result.error_class == "ok" and OPEN_AFTER_FINISH_FLAG in result.sanity_flags
    assert took < FINISH_GRACE_S + SLACK_S, f"took {took:.1f} s after the finish"


def test_silence_before_any_finish_is_still_a_stall() -> None:
    result = _probe((_openai("ANSWER:"),), "openai", 6.0, 1.5)
    assert result.error_class == "stall", result.error_detail
    assert OPEN_AFTER_FINISH_FLAG not in result.sanity_flags


def test_a_clean_end_is_not_flagged() -> None:
    reply = Reply(headers=STREAM, chunks=(*OPENAI_ANSWER, b"data: [DONE]\n\n"))
    with serving(lambda _n, _reused: reply) as srv:
        (result,) = probe_n(loopback_provider(srv.port), short_probe())
    assert result.error_class == "ok" and OPEN_AFTER_FINISH_FLAG not in result.sanity_flags
