"""Requests the adapters build: endpoint paths, auth per preset, preset fields, registry."""

from __future__ import annotations

import pytest

from probes.adapters import ADAPTERS, PRESETS, preset_for


def test_preset_registry_names() -> None:
    assert set(PRESETS) == {
        "openai", "anthropic", "zai", "zai-coding", "minimax", "deepseek", "moonshot", "qwen",
        "gemini", "openrouter", "vllm", "llamacpp", "ollama", "simulator",
    }  # fmt: skip
    for name, preset in PRESETS.items():
        assert preset.name == name and preset.wire in ADAPTERS
    assert preset_for(None, "anthropic").name == "anthropic"
    assert preset_for("unknown", "openai").name == "openai"


def _build(
    wire: str, preset: str, key: str | None
) -> tuple[str, dict[str, str], dict[str, object]]:
    request = ADAPTERS[wire].build(
        base_url="https://host.test/api/v1/", model="m", prompt="nonce=x\nhi", max_tokens=64,
        temperature=0.0, stream=True, preset=PRESETS[preset], api_key=key,
        extra_headers={"x-extra": "1"},
    )  # fmt: skip
    return request.url, request.headers, request.body


@pytest.mark.parametrize(
    ("wire", "preset", "header", "value"),
    [
        ("openai", "openai", "authorization", "Bearer k"),
        ("openai", "zai", "authorization", "Bearer k"),
        ("anthropic", "anthropic", "x-api-key", "k"),
        ("anthropic", "zai", "x-api-key", "k"),  # Z.ai's Anthropic route
        ("anthropic", "simulator", "x-api-key", "k"),
    ],
)
def test_auth_header(wire: str, preset: str, header: str, value: str) -> None:
    _, headers, _ = _build(wire, preset, "k")
    assert headers[header] == value
    assert headers["x-extra"] == "1"


def test_no_key_no_auth_and_ollama_sends_a_configured_one() -> None:
    assert "authorization" not in _build("openai", "openai", None)[1]
    assert "authorization" not in _build("openai", "ollama", None)[1]
    assert _build("openai", "ollama", "k")[1]["authorization"] == "Bearer k"  # Ollama Cloud


def test_paths_and_bodies() -> None:
    url, _, body = _build("openai", "openai", None)
    assert url == "https://host.test/api/v1/chat/completions"
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 64
    url, headers, body = _build("anthropic", "anthropic", None)
    assert url == "https://host.test/api/v1/messages"
    assert headers["anthropic-version"] == "2023-06-01"
    assert body["max_tokens"] == 64 and "stream_options" not in body
    _, _, body = _build("openai", "openrouter", None)
    assert "stream_options" not in body  # deprecated no-op there
