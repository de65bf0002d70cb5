"""Run one probe end to end: build the item, send it, time it, classify it, score it.

``run_probe`` never raises (only cancellation propagates): every outcome, including a bug in
this package, becomes one ``ProbeResult`` row with an error class. Nothing is retried, except
a send on a pooled connection the server had already closed (see ``adapters.http``).

Beside ``probes.sanity``'s flags the row may carry ``out_of_range:<column>`` (a count no
column holds), ``usage_says_no_output`` (text arrived, usage reports 0 output tokens:
the count is kept as billed, but speed and cost derived from it are not the answer's) and
``no_close_after_finish`` (a complete answer, then the server kept the socket open with no
terminator: answered and timed to its last event, the hang flagged, not classed a stall).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
from datetime import UTC, datetime

import httpx

from pipeline.config.model import ProbeConfig, ProviderConfig
from probes.adapters import ADAPTERS, preset_for
from probes.adapters.http import Exchange, execute
from probes.adapters.presets import Preset
from probes.adapters.state import StreamState, error_fields
from probes.errors import classify
from probes.ids import new_run_id
from probes.pricing import cost_usd
from probes.ratelimits import WAIT_COLUMNS, rate_limits, request_id, safe_headers
from probes.result import OUT_OF_RANGE, ProbeResult, mend_text, planned_row
from probes.sanity import sanity_flags, stop_cause
from probes.secrets import KEY_SHAPED, secrets_of_key
from probes.sizing import MIN_CHARS, CharsPerToken, overflow_prompt_tokens
from probes.tasks import FAMILIES, Item, TaskFamily
from probes.tokenize import count_tokens

__all__ = [
    "NO_OUTPUT_FLAG",
    "OPEN_AFTER_FINISH_FLAG",
    "build_item",
    "draw_seed",
    "outcome_class",
    "run_probe",
]

_SIZING_ROUNDS = 3  # tokenize, rebuild; the second round is almost always within tolerance
_SIZING_TOLERANCE = 0.02
FILTER_REASONS = frozenset({"content_filter", "refusal", "sensitive"})
COMPLETED = frozenset({"ok", "truncated", "context_full", "empty", "content_filter"})
_ROW_COUNTS = frozenset(
    {"input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "reasoning_tokens"}
)
# Key-shaped text, plus "key=..." as servers echo request parameters in error messages.
_SECRETISH = re.compile(rf"{KEY_SHAPED.pattern}|key[=:]\s*\S+", re.I)
_WAIT_HEADERS = ("retry-after", "retry-after-ms")  # as sent, for a bare error reply
NO_OUTPUT_FLAG = "usage_says_no_output"
OPEN_AFTER_FINISH_FLAG = "no_close_after_finish"  # answered, then the socket hung open


def _scrub(text: str | None, provider: ProviderConfig) -> str | None:
    if not text:
        return text
    text = secrets_of_key(provider.api_key()).scrub(text)
    return _SECRETISH.sub("[redacted]", text)[:300]


def build_item(
    family: TaskFamily, probe: ProbeConfig, seed: int, cpt: float
) -> tuple[Item, int, str]:
    """The item, its target size and context class for this probe."""
    if family.KIND == "long":
        size = probe.context_tokens
        context_class = probe.context_class
    else:
        size, context_class = family.DEFAULT_SIZE, "short"
    return family.item(seed, size, cpt), size, context_class


async def _sized_item(
    family: TaskFamily,
    probe: ProbeConfig,
    seed: int,
    estimator: CharsPerToken,
    preset: Preset,
    provider: ProviderConfig,
    client: httpx.AsyncClient,
) -> tuple[Item, int, str]:
    """The item at the estimated size; measured first where that is possible.

    A long prompt for a family nothing was learned about yet is counted with the server's
    own tokenizer (``preset.tokenize``) and rebuilt at the measured ratio, before the
    clock starts: the first probe then hits its target instead of missing it by half.
    """
    item, size, context_class = build_item(family, probe, seed, estimator.estimate(probe.task))
    if family.KIND != "long" or preset.tokenize is None or estimator.knows(probe.task):
        return item, size, context_class
    key = provider.api_key()
    headers = {"authorization": f"Bearer {key}"} if key else None
    for _ in range(_SIZING_ROUNDS):
        tokens = await count_tokens(
            client, base_url=provider.base_url, dialect=preset.tokenize,
            model=provider.model, text=item.prompt, headers=headers,
        )  # fmt: skip
        if tokens is None:
            break
        estimator.measured(probe.task, len(item.prompt), tokens)
        if abs(tokens / size - 1) <= _SIZING_TOLERANCE:
            break
        item, size, context_class = build_item(family, probe, seed, estimator.estimate(probe.task))
    return item, size, context_class


def outcome_class(
    ex: Exchange, state: StreamState, answer: str, preset: str, stopped_by: str | None = None
) -> tuple[str, str | None, str | None]:
    """(error_class, provider error code, detail) of a finished exchange; ``stopped_by`` is
    what ended a length-type finish (``probes.sanity.stop_cause``)."""
    if ex.failure is not None and state.error is None:
        return ex.failure, None, ex.detail
    if ex.status is not None and 300 <= ex.status < 400:
        where = ex.headers.get("location", "?")
        return classify(ex.status, (), "", preset), None, f"redirect to {where}"
    if ex.status is not None and not 200 <= ex.status < 300:
        fields = _body_error(ex.error_body)
        codes, message = fields if fields else ((), _short(ex.error_body))
        detail = message if message.strip() else _status_line(ex)
        return classify(ex.status, codes, message, preset), _first(codes), detail
    if state.error is not None:
        # The provider's own error outranks the drop or silence that followed it (OpenAI
        # closes the connection right after an in-stream error); the transport part is kept.
        codes, message = state.error.codes, state.error.message
        if ex.failure is not None:
            message = f"{message}; then {ex.failure}: {ex.detail}"
        return classify(200, codes, message, preset), _first(codes), message
    if state.malformed:
        return "malformed_stream", None, state.malformed_detail
    if not state.done and state.finish_reason is None:
        return "malformed_stream", None, "stream ended before any finish signal"
    if stopped_by == "context_full":
        usage = state.usage
        filled = f"prompt {usage.input_tokens} + output {usage.output_tokens} tokens"
        return (
            "context_full",
            None,
            f"finish_reason={state.finish_reason}: {filled} filled the context",
        )
    if stopped_by == "truncated":
        return "truncated", None, None
    if state.finish_reason in FILTER_REASONS:
        return "content_filter", None, f"finish_reason={state.finish_reason}"
    if state.finish_reason == "error":  # OpenRouter: an upstream failed mid-answer
        return "server_error", None, "finish_reason=error without an error object"
    if not answer.strip():
        return "empty", None, "reasoning only" if state.reasoning else None
    return "ok", None, None


def _body_error(body: object) -> tuple[tuple[str, ...], str] | None:
    found = error_fields(body)
    return (found.codes, found.message) if found else None


def _short(body: object) -> str:
    text = str(body or "")
    if "<html" in text.lower():
        return "HTML error page"
    return text[:200]


def _status_line(ex: Exchange) -> str:
    """What an error reply without a body still says (a gateway's bare 503 or 529): the
    reason phrase and the wait asked for. The caller scrubs it like any server text."""
    line = " ".join(f"HTTP {ex.status} {ex.reason}".split())
    waits = [f"{name} {ex.headers[name]}" for name in _WAIT_HEADERS if name in ex.headers]
    return "; ".join([line, *(" ".join(wait.split())[:80] for wait in waits)])


def _first(codes: tuple[str, ...]) -> str | None:
    return codes[0] if codes else None


def draw_seed(probe: ProbeConfig) -> int:
    """A fresh random item, or one of the probe's ``anchor_items`` fixed ones: their seeds
    come from the probe's name, so every process and every week draws the same set."""
    if probe.anchor_items <= 0:
        return secrets.randbits(62)
    k = secrets.randbelow(probe.anchor_items)
    digest = hashlib.blake2b(f"{probe.name}\0{probe.task}\0{k}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big") >> 2  # 62 bits, like a fresh seed


async def run_probe(
    provider: ProviderConfig,
    probe: ProbeConfig,
    *,
    client: httpx.AsyncClient,
    seed: int | None = None,
    source: str = "live",
    probe_site: str | None = None,
    estimator: CharsPerToken | None = None,
    extra_headers: dict[str, str] | None = None,
) -> ProbeResult:
    """One probe attempt as one row. ``estimator`` (one per provider, kept by the caller)
    sizes prompts and learns from reported usage; ``extra_headers`` are sent as is (the
    simulator reads ``x-sim-fault``)."""
    result = planned_row(
        provider,
        probe,
        run_id=new_run_id(),
        started_at=datetime.now(UTC),
        source=source,
        probe_site=probe_site,
    )
    result.seed = seed if seed is not None else draw_seed(probe)
    try:
        await _attempt(result, provider, probe, client, estimator, extra_headers or {})
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug here must still leave a row, not a crash
        result.error_class = result.error_class or "malformed_stream"
        result.error_detail = _scrub(f"internal error: {type(exc).__name__}: {exc}", provider)
    mend_text(result)
    return result


async def _attempt(
    result: ProbeResult,
    provider: ProviderConfig,
    probe: ProbeConfig,
    client: httpx.AsyncClient,
    estimator: CharsPerToken | None,
    extra_headers: dict[str, str],
) -> None:
    family = FAMILIES.get(probe.task)
    adapter = ADAPTERS.get(provider.format)
    if family is None or adapter is None:
        result.error_class = "bad_request"
        result.error_detail = f"unknown task family {probe.task!r} or format {provider.format!r}"
        return
    assert result.seed is not None
    estimator = estimator or CharsPerToken(provider.chars_per_token)
    preset = preset_for(provider.preset, provider.format)
    item, size, context_class = await _sized_item(
        family, probe, result.seed, estimator, preset, provider, client
    )
    result.task_version = family.VERSION
    result.context_target_tokens = size
    result.context_class = context_class
    result.expected_answer = item.expected
    result.prompt_chars = len(item.prompt)

    request = adapter.build(
        base_url=provider.base_url,
        model=provider.model,
        prompt=item.prompt,
        max_tokens=probe.max_output_tokens,
        temperature=probe.temperature,
        stream=probe.stream,
        preset=preset,
        api_key=provider.api_key(),
        extra_headers={**provider.extra_headers, **extra_headers},
    )
    request.body.update(provider.extra_body)  # e.g. thinking or routing controls
    state = StreamState(
        think_tags=preset.think_tags,
        think_open_missing=preset.think_open_missing,
        usage_excludes_cache=preset.input_excludes_cache,
    )
    ex = await execute(
        client, request, state, adapter,
        deadline_s=probe.timeout_s, read_timeout_s=probe.read_timeout_s,
        max_bytes=probe.max_response_bytes,
    )  # fmt: skip
    answer, reasoning = state.texts()
    _fill(result, provider, ex, state, answer, reasoning)
    stopped_by = stop_cause(
        state.finish_reason,
        input_tokens=state.usage.input_tokens,
        output_tokens=state.usage.output_tokens,
        max_output_tokens=probe.max_output_tokens,
        max_context=provider.max_context,
    )
    error_class, code, detail = outcome_class(ex, state, answer, preset.name, stopped_by)
    if ex.stale_retry:
        detail = f"{detail}; {ex.stale_retry}" if detail else ex.stale_retry
    result.error_class = error_class
    result.error_code = _scrub(code, provider)  # a server may echo the key as its code
    result.error_detail = _scrub(detail, provider)
    if error_class == "context_overflow":  # no usage comes back: learn from the message
        body = ex.error_body if isinstance(ex.error_body, str) else json.dumps(ex.error_body)
        stated = overflow_prompt_tokens(f"{body} {detail or ''}")
        if stated and len(item.prompt) >= MIN_CHARS:
            estimator.measured(probe.task, len(item.prompt), stated)
    answered = (
        error_class in COMPLETED
        and state.error is None
        and ex.status is not None
        and 200 <= ex.status < 300
    )
    if answered:
        score = family.score(item, answer)
        result.score_strict, result.score_lenient = score.strict, score.lenient
        result.extracted_answer = score.extracted
    result.sanity_flags = sanity_flags(
        answer=answer,
        prompt=item.prompt,
        finish_reason=state.finish_reason,
        reported_model=state.reported_model,
        configured_model=provider.model,
        cached_tokens=state.usage.cached_tokens,
        prompt_tokens=state.usage.input_tokens,
        stopped_by=stopped_by,
        attempted=answered,
    )
    for name in sorted(state.usage.out_of_range):  # as clamp_row flags what it clears
        if name in _ROW_COUNTS or name in WAIT_COLUMNS:
            result.sanity_flags.append(f"{OUT_OF_RANGE}:{name}")
    if state.usage.output_tokens == 0 and (answer.strip() or reasoning.strip()):
        result.sanity_flags.append(NO_OUTPUT_FLAG)
    if ex.open_after_finish:
        result.sanity_flags.append(OPEN_AFTER_FINISH_FLAG)
    estimator.observe(probe.task, len(item.prompt), state.usage.input_tokens)


def _fill(
    result: ProbeResult,
    provider: ProviderConfig,
    ex: Exchange,
    state: StreamState,
    answer: str,
    reasoning: str,
) -> None:
    usage = state.usage
    paced = usage.output_tokens
    if paced and usage.reasoning_tokens and not reasoning:
        # Hidden reasoning (OpenAI): those tokens were produced before the first visible
        # chunk, so they do not belong in a speed measured from it.
        paced = max(paced - usage.reasoning_tokens, 0)
    for name, value in state.timeline.summary(paced).items():
        setattr(result, name, value)
    # A rate-limit value out of range joins the usage's: flagged once the flags are made.
    for name, figure in rate_limits(ex.headers, out_of_range=state.usage.out_of_range).items():
        setattr(result, name, figure)
    result.http_status = ex.status
    result.connection_reused = ex.connection_reused
    # A server may echo the key in any header; the exact value is masked wherever it is.
    # The model's text stays verbatim (the report masks it when shown).
    secrets = secrets_of_key(provider.api_key())
    headers = safe_headers(ex.headers) if ex.status is not None else None
    result.response_headers = secrets.scrub_headers(headers)
    result.request_id = secrets.scrub_optional(request_id(ex.headers))
    result.reported_model = secrets.scrub_optional(state.reported_model)
    result.system_fingerprint = secrets.scrub_optional(state.system_fingerprint)
    result.upstream_provider = secrets.scrub_optional(state.upstream_provider)
    result.finish_reason = secrets.scrub_optional(state.finish_reason)
    result.input_tokens = usage.input_tokens
    result.output_tokens = usage.output_tokens
    result.cached_tokens = usage.cached_tokens
    result.cache_write_tokens = usage.cache_write_tokens
    result.reasoning_tokens = usage.reasoning_tokens
    result.cost_usd = cost_usd(
        provider,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        reported_cost=usage.reported_cost,
    )
    result.response_text = answer if (answer or ex.status == 200) else None
    result.reasoning_text = reasoning or None
