"""The first token's top logprobs and ``system_fingerprint``, as llama.cpp streams them."""

from __future__ import annotations

import json

from probes.adapters import openai
from probes.adapters.sse import Event
from probes.adapters.state import StreamState

# Captured from llama-server (llama.cpp, llama-cpp-python 0.3.36), one-token answer.
_CHUNKS = [
    {"choices": [{"finish_reason": None, "index": 0,
                  "delta": {"role": "assistant", "content": None}}],
     "model": "tiny", "system_fingerprint": "b1-0c1e570", "object": "chat.completion.chunk"},
    {"choices": [{"finish_reason": None, "index": 0, "delta": {"content": "H"},
                  "logprobs": {"content": [{"id": 75, "token": "H", "bytes": [72],
                                            "logprob": -5.2,
                                            "top_logprobs": [
                                                {"id": 181, "token": "\ufffd", "logprob": -5.17},
                                                {"id": 75, "token": "H", "logprob": -5.2},
                                                {"id": 12, "token": "\t", "logprob": True},
                                            ]}]}}],
     "model": "tiny", "system_fingerprint": "b1-0c1e570"},
    {"choices": [{"finish_reason": None, "index": 0, "delta": {"content": "x"},
                  "logprobs": {"content": [{"token": "x", "logprob": -1.0,
                                            "top_logprobs": [{"token": "x", "logprob": -1.0}]}]}}]},
    {"choices": [{"finish_reason": "length", "index": 0, "delta": {}}]},
]  # fmt: skip


def test_the_first_tokens_alternatives_and_the_fingerprint_are_kept() -> None:
    state = StreamState()
    for at, chunk in enumerate(_CHUNKS):
        openai.on_event(Event("message", json.dumps(chunk)), state, at)
    openai.on_event(Event("message", "[DONE]"), state, 9)
    assert state.first_top_logprobs == (("\ufffd", -5.17), ("H", -5.2))  # bool is no logprob
    assert state.system_fingerprint == "b1-0c1e570"
    assert state.texts() == ("Hx", "")
    assert state.finish_reason == "length" and state.done


def test_no_logprobs_asked_none_kept() -> None:
    state = StreamState()
    openai.on_body(
        {"choices": [{"message": {"content": "7"}, "finish_reason": "stop"}], "model": "m"},
        state,
    )
    assert state.first_top_logprobs is None and state.system_fingerprint is None
