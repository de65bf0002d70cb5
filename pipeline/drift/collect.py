"""Discovery, reference and the daily sample of border inputs, through ``ask_one_token``.

Every call has its own seed, derived from (phase, day, prompt, call index): a server that
honours ``seed`` gives the same sample for the same day again, and different days draw
different samples, so day-to-day variation is real sampling noise. Calls run one after
another (the daily budget is small, and a burst would look like no user's traffic).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import httpx

from pipeline.analysis.border_inputs import (
    candidate_prompts,
    counts,
    day_distance,
    select_border_inputs,
)
from pipeline.config.model import ProviderConfig
from pipeline.drift.baseline import Baseline, DaySample, DriftSettings
from probes.one_token import ask_one_token

__all__ = ["LT_PROMPT", "LT_TOP_K", "call_seed", "discover", "logprob_window", "sample_day"]

LT_PROMPT = "x"  # the LT paper's one-token prompt
LT_TOP_K = 20  # OpenAI's maximum; llama.cpp and vLLM give as many as asked


def call_seed(*parts: object) -> int:
    """A 31-bit seed from its parts (any server's seed field takes it)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


@dataclass(slots=True)
class _Answers:
    tokens: list[str] = field(default_factory=list)
    failed: int = 0
    models: set[str] = field(default_factory=set)  # reported model names
    input_tokens: set[int] = field(default_factory=set)  # the provider's count of the prompt


async def _tokens(
    provider: ProviderConfig,
    client: httpx.AsyncClient,
    prompt: str,
    calls: int,
    temperature: float,
    phase: str,
) -> _Answers:
    """What ``calls`` calls of ``prompt`` answered."""
    out = _Answers()
    for i in range(calls):
        answer = await ask_one_token(
            provider, prompt, client=client, temperature=temperature,
            seed=call_seed(phase, prompt, i),
        )  # fmt: skip
        if answer.token is None:
            out.failed += 1
        else:
            out.tokens.append(answer.token)
        if answer.reported_model:
            out.models.add(answer.reported_model)
        if answer.input_tokens is not None:
            out.input_tokens.add(answer.input_tokens)
    return out


async def discover(
    provider: ProviderConfig,
    client: httpx.AsyncClient,
    settings: DriftSettings,
    *,
    accepted_at: datetime | None = None,
) -> Baseline:
    """Try each candidate ``discovery_calls`` times, keep the ``inputs`` most balanced
    ones whose first token varied, and sample each ``reference_calls`` times."""
    discovery: dict[str, list[str]] = {}
    for prompt in candidate_prompts(settings.candidates):
        found = await _tokens(
            provider,
            client,
            prompt,
            settings.discovery_calls,
            settings.temperature,
            f"{settings.seed_salt}discover",
        )
        discovery[prompt] = found.tokens
    reference: dict[str, dict[str, int]] = {}
    input_tokens: dict[str, list[int]] = {}
    for prompt in select_border_inputs(discovery, settings.inputs):
        found = await _tokens(
            provider,
            client,
            prompt,
            settings.reference_calls,
            settings.temperature,
            f"{settings.seed_salt}reference",
        )
        reference[prompt] = counts(found.tokens)
        input_tokens[prompt] = sorted(found.input_tokens)
    logprobs = await logprob_window(
        provider, client, settings.logprob_calls, phase=f"{settings.seed_salt}reference"
    )
    return Baseline(
        provider=provider.name,
        model=provider.model,
        accepted_at=(accepted_at or datetime.now(UTC)).isoformat(),
        settings=settings,
        discovery=discovery,
        reference=reference,
        logprob_reference=logprobs,
        input_tokens=input_tokens,
    )


async def sample_day(
    provider: ProviderConfig, client: httpx.AsyncClient, baseline: Baseline, day: date
) -> DaySample:
    """One day's re-sample of every border input, and its mean TV to the reference."""
    settings = baseline.settings
    day_counts: dict[str, dict[str, int]] = {}
    input_tokens: dict[str, list[int]] = {}
    failed = calls = 0
    models: set[str] = set()
    for prompt in baseline.reference:
        found = await _tokens(
            provider, client, prompt, settings.per_input, settings.temperature,
            f"{settings.seed_salt}day {day.isoformat()}",
        )  # fmt: skip
        day_counts[prompt] = counts(found.tokens)
        input_tokens[prompt] = sorted(found.input_tokens)
        failed, calls = failed + found.failed, calls + settings.per_input
        models |= found.models
    return DaySample(
        day=day.isoformat(),
        distance=day_distance(baseline.reference, day_counts),
        calls=calls,
        failed=failed,
        counts=day_counts,
        reported_models=sorted(models),
        logprobs=await logprob_window(
            provider,
            client,
            settings.logprob_calls,
            phase=f"{settings.seed_salt}day {day.isoformat()}",
        ),
        input_tokens=input_tokens,
    )


async def logprob_window(
    provider: ProviderConfig,
    client: httpx.AsyncClient,
    calls: int,
    *,
    top_k: int = LT_TOP_K,
    prompt: str = LT_PROMPT,
    phase: str = "logprobs",
) -> list[dict[str, float]]:
    """``calls`` rows of the first token's top-k logprobs for the fixed LT prompt, at
    temperature 0; a call without logprobs (failed, or not supported) gives no row."""
    rows: list[dict[str, float]] = []
    for i in range(calls):
        answer = await ask_one_token(
            provider, prompt, client=client, top_logprobs=top_k, seed=call_seed(phase, i)
        )
        row: dict[str, float] = {}
        for token, logprob in answer.top_logprobs or ():
            row.setdefault(token, logprob)  # byte tokens may share a text: keep the likelier
        if row:
            rows.append(row)
    return rows
