"""Ask for one output token: the probe behind border-input and log-probability tracking.

Change detection on fixed inputs (B3IT, LT; see the research note, section 1) needs the
*first output token* of a short prompt, many times, at a fixed temperature. This sends the
prompt verbatim (no nonce line: the input must be the same every time) through the same
wire adapters and ``execute`` as every other probe, with ``max_output_tokens=1``, and keeps
the token, its top logprobs if asked for, and the response metadata. It never raises.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from pipeline.config.model import ProviderConfig
from probes.adapters import ADAPTERS, preset_for
from probes.adapters.http import execute
from probes.adapters.state import StreamState
from probes.runner import outcome_class

__all__ = ["OneToken", "ask_one_token"]

DEADLINE_S = 60.0
_ANSWERED = frozenset({"ok", "truncated", "empty"})


@dataclass(frozen=True, slots=True)
class OneToken:
    """One answer: ``token`` is None unless ``error_class`` is ok or truncated."""

    prompt: str
    token: str | None
    error_class: str
    top_logprobs: tuple[tuple[str, float], ...] | None = None
    reported_model: str | None = None
    system_fingerprint: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


async def ask_one_token(
    provider: ProviderConfig,
    prompt: str,
    *,
    client: httpx.AsyncClient,
    temperature: float = 0.0,
    seed: int | None = None,
    top_logprobs: int | None = None,
    deadline_s: float = DEADLINE_S,
) -> OneToken:
    """The first output token of ``prompt``. ``seed`` (OpenAI wire only: the Anthropic API
    has none) makes a sample at temperature > 0 reproducible where the server honours it;
    ``top_logprobs`` asks an OpenAI-compatible server for that many alternatives."""
    adapter = ADAPTERS[provider.format]
    preset = preset_for(provider.preset, provider.format)
    request = adapter.build(
        base_url=provider.base_url, model=provider.model, prompt=prompt, max_tokens=1,
        temperature=temperature, stream=True, preset=preset, api_key=provider.api_key(),
        extra_headers=dict(provider.extra_headers),
    )  # fmt: skip
    request.body.update(provider.extra_body)
    if provider.format == "openai":
        if seed is not None:
            request.body["seed"] = seed
        if top_logprobs:
            request.body.update(logprobs=True, top_logprobs=top_logprobs)
    state = StreamState(
        think_tags=preset.think_tags,
        think_open_missing=preset.think_open_missing,
        usage_excludes_cache=preset.input_excludes_cache,
    )
    try:
        ex = await execute(
            client, request, state, adapter, deadline_s=deadline_s, read_timeout_s=deadline_s
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug here must not stop a day's sample
        return OneToken(prompt, None, f"internal error: {type(exc).__name__}")
    answer, _ = state.texts()
    stopped_by = "truncated" if state.finish_reason in ("length", "max_tokens") else None
    error_class, _, _ = outcome_class(ex, state, answer, preset.name, stopped_by)
    answered = error_class in _ANSWERED  # "empty": the first token ended the answer
    return OneToken(
        prompt=prompt,
        token=answer if answered else None,
        error_class=error_class,
        top_logprobs=state.first_top_logprobs,
        reported_model=state.reported_model,
        system_fingerprint=state.system_fingerprint,
        input_tokens=state.usage.input_tokens,
        output_tokens=state.usage.output_tokens,
    )
