"""Provider quirks as data: one ``Preset`` per name a config's ``preset`` key may use.

The adapters read everything provider-specific from here (auth header, the request fields a
provider wants or rejects, where reasoning text arrives, how usage counts cached input), so a
new OpenAI-compatible provider is a new row, not a new branch. Parsing of responses is
tolerant by default: every known reasoning field and usage location is read for every preset.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["PRESETS", "Preset", "preset_for"]

_INCLUDE_USAGE: dict[str, Any] = {"stream_options": {"include_usage": True}}


@dataclass(frozen=True, slots=True)
class Preset:
    """How to talk to one provider family."""

    name: str
    wire: str  # "openai" | "anthropic": the format it is usually configured with
    auth: str = "auto"  # "auto" (bearer for openai, x-api-key for anthropic) | "bearer" | "none"
    headers: dict[str, str] = field(default_factory=dict)
    stream_fields: dict[str, Any] = field(default_factory=dict)  # added when streaming
    body_fields: dict[str, Any] = field(default_factory=dict)  # added to every request
    max_tokens_field: str = "max_tokens"
    think_tags: bool = False  # reasoning inline in content as <think>...</think>
    think_open_missing: bool = False  # answers may start inside an unopened think block
    input_excludes_cache: bool = False  # OpenAI-wire usage counts only uncached input
    # (the Anthropic wire always does; its adapter adds the cache counts back)
    default_base_url: str | None = None
    # A /tokenize endpoint beside /v1 (self-hosted servers): "llamacpp" ({"content"} ->
    # {"tokens"}) or "vllm" ({"model", "prompt"} -> {"count"}). Sizes a first prompt exactly.
    tokenize: str | None = None
    note: str = ""


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("openai", "openai", stream_fields=_INCLUDE_USAGE,
               max_tokens_field="max_completion_tokens",
               default_base_url="https://api.openai.com/v1",
               note="usage only with stream_options.include_usage, in a final empty-choices chunk"),
        Preset("anthropic", "anthropic", default_base_url="https://api.anthropic.com/v1",
               note="ping events; cumulative message_delta usage; event: error mid-stream"),
        Preset("zai", "openai", stream_fields=_INCLUDE_USAGE,
               default_base_url="https://api.z.ai/api/paas/v4",
               note="string business codes (1302, 1113...); reasoning_content; usage may repeat"),
        Preset("zai-coding", "openai", stream_fields=_INCLUDE_USAGE,
               default_base_url="https://api.z.ai/api/coding/paas/v4",
               note="Coding Plan endpoint; plan quota codes 1308-1321"),
        Preset("minimax", "openai", max_tokens_field="max_completion_tokens", think_tags=True,
               think_open_missing=True, input_excludes_cache=True, default_base_url="https://api.minimax.io/v1",
               note="<think> inline in content; base_resp codes, even with HTTP 200; "
                    "rejects unknown OpenAI fields, so no stream_options"),
        Preset("deepseek", "openai", stream_fields=_INCLUDE_USAGE,
               default_base_url="https://api.deepseek.com",
               note=": keep-alive comments while queued; prompt_cache_hit_tokens"),
        Preset("moonshot", "openai", stream_fields=_INCLUDE_USAGE,
               default_base_url="https://api.moonshot.ai/v1",
               note="usage in choices[0].usage; 429 engine_overloaded_error is capacity"),
        Preset("qwen", "openai", stream_fields=_INCLUDE_USAGE,
               default_base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
               note="DashScope string codes (Throttling.RateQuota...)"),
        Preset("gemini", "openai", stream_fields=_INCLUDE_USAGE,
               default_base_url="https://generativelanguage.googleapis.com/v1beta/openai",
               note="Google RPC status codes; error body may be wrapped in a JSON array"),
        Preset("openrouter", "openai", default_base_url="https://openrouter.ai/api/v1",
               note=": OPENROUTER PROCESSING comments; usage always in the last chunk; "
                    "reasoning in delta.reasoning"),
        Preset("vllm", "openai", stream_fields=_INCLUDE_USAGE, tokenize="vllm",
               note="integer code = HTTP status; finish_reason may share the last content chunk"),
        Preset("llamacpp", "openai", stream_fields=_INCLUDE_USAGE, tokenize="llamacpp",
               note="llama.cpp llama-server: timings in the last chunk; /tokenize beside /v1; "
                    "closes the connection after each streamed response"),
        Preset("ollama", "openai", stream_fields=_INCLUDE_USAGE,
               default_base_url="http://localhost:11434/v1",
               note="reasoning in delta.reasoning; no rate-limit headers; no cached count; "
                    "a local server ignores the key, Ollama Cloud needs it as a bearer"),
        Preset("simulator", "openai", stream_fields=_INCLUDE_USAGE, think_tags=True,
               tokenize="llamacpp",
               note="the bundled simulator; wire format comes from the provider config"),
    )
}  # fmt: skip


def preset_for(name: str | None, wire: str) -> Preset:
    """The named preset, or the plain one for the wire format when no name is given."""
    if name and name in PRESETS:
        return PRESETS[name]
    return PRESETS["anthropic" if wire == "anthropic" else "openai"]
