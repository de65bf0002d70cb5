"""Every server's wording of a context overflow, replayed over real loopback HTTP, is
classified ``context_overflow`` (not ``bad_request``), and the detail keeps the message."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from probes.result import ProbeResult
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

WORDINGS = tomllib.loads(
    (Path(__file__).parent / "fixtures/transcripts/overflow/wordings.toml").read_text()
)["wordings"]


def _message(body: str) -> str:
    data: Any = json.loads(body)
    data = data[0] if isinstance(data, list) else data
    err = data.get("error") or data.get("base_resp") or data
    if isinstance(err, str):
        return err
    return str(err.get("message") or err.get("status_msg"))


def _probe_against(port: int, wire: str, preset: str) -> ProbeResult:
    (result,) = probe_n(loopback_provider(port, wire, preset=preset), short_probe(), seed=3)
    return result


def test_every_server_family_is_covered() -> None:
    servers = {row[0].split(" (")[0] for row in WORDINGS}
    assert servers >= {
        "llama.cpp", "vLLM", "SGLang", "Ollama", "OpenAI", "Anthropic", "Gemini", "DeepSeek",
        "Moonshot", "Qwen", "Z.ai", "MiniMax", "OpenRouter",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("server", "wire", "preset", "status", "body"), WORDINGS, ids=[row[0] for row in WORDINGS]
)
def test_context_overflow_wording(
    server: str, wire: str, preset: str, status: int, body: str
) -> None:
    del server
    reply = Reply(status=status, body=body.encode())
    with serving(lambda _n, _reused: reply) as srv:
        result = _probe_against(srv.port, wire, preset)
        assert srv.requests == 1
    assert result.error_class == "context_overflow", result.error_detail
    assert result.http_status == status
    assert result.error_detail == _message(body)[:300]
    assert result.score_strict is None
