"""One request's plan: what to answer, how fast, and which error or fault to play.

The server builds a ``Plan`` from the scenario model at the request's scenario instant,
then the wire modules render it. Keeping the decisions here (and the rendering there)
lets one plan be written in either wire format.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from probes.simulator import model
from probes.simulator.answers import Answer, compose, family_of
from probes.simulator.faults import FAULTS, NO_FAULT
from probes.simulator.first_token import Sampling, first_token
from probes.simulator.scenario import ERROR_KINDS, LONG_CONTEXT_TOKENS, Provider, Scenario
from probes.simulator.tokens import count_tokens, tokenize

__all__ = ["ON_DEMAND_ERRORS", "Plan", "RequestSpec", "make_plan"]

# Values of the ``x-sim-error`` header: the scenario's kinds plus two only on demand.
ON_DEMAND_ERRORS = (*ERROR_KINDS, "quota_exhausted", "auth")


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """What the client asked for, independent of wire format."""

    wire: str  # openai | anthropic
    prompt: str  # all message text, joined (counted as prompt tokens)
    task_prompt: str  # the message that leads with a task header (answered)
    stream: bool
    include_usage: bool
    max_tokens: int
    fault: str | None = None  # x-sim-fault
    error: str | None = None  # x-sim-error
    quality: str | None = None  # x-sim-quality
    seed: int | None = None  # x-sim-seed
    sampling: Sampling = field(default_factory=Sampling)  # body temperature, seed, logprobs


@dataclass(slots=True)
class Plan:
    provider: Provider
    spec: RequestSpec
    request_id: str
    model: str  # the model the response reports
    stage: str
    demand: float
    load: float
    prompt_tokens: int
    tokens: list[str]  # every output token, reasoning first
    reasoning_count: int  # how many of ``tokens`` are reasoning
    think_tags: bool  # reasoning inline in content as <think>...</think>
    finish: str  # stop | length
    ttft_s: float  # wall seconds (time_scale applied)
    gaps_s: list[float]  # wall seconds before each token after the first
    ttft_model_ms: float  # unscaled, for the x-sim-plan header
    tps: float
    error: str | None
    fault: str | None
    outcome: str
    rate_headers: dict[str, str] = field(default_factory=dict)
    retry_after_s: int | None = None
    first_logprobs: list[tuple[str, float]] = field(default_factory=list)  # when asked

    @property
    def reasoning_tokens(self) -> list[str]:
        return self.tokens[: self.reasoning_count]

    @property
    def completion_count(self) -> int:
        return len(self.tokens)

    def debug_header(self) -> str:
        return (
            f"stage={self.stage};demand={self.demand:.3f};load={self.load:.0f};"
            f"ttft_ms={self.ttft_model_ms:.1f};tps={self.tps:.2f};outcome={self.outcome}"
        )


def make_plan(
    scenario: Scenario,
    provider: Provider,
    spec: RequestSpec,
    *,
    at: datetime,
    start: datetime,
    inflight: int,
    counter: int,
) -> Plan:
    """Decide everything about one response from the scenario model at instant ``at``
    (``start`` is the scenario's day 0, fixed when the server started)."""
    seed = spec.seed if spec.seed is not None else scenario.seed * 1_000_003 + counter
    rng = np.random.default_rng(seed)
    pyrng = random.Random(int(rng.integers(0, 2**63)))
    t = np.array([at.timestamp()])
    day = float(model.days_since(start, t)[0])
    pv = model.phase_values(provider, model.days_since(start, t))
    rhythm = scenario.rhythm_of(provider)
    dem = model.demand(rhythm, t)
    load = float(rng.poisson(provider.background_load * dem[0])) + inflight
    prompt_tokens = count_tokens(spec.prompt)
    quiet = scenario.quiet or spec.fault == NO_FAULT

    ttft_ms = float(
        model.ttft_median_ms(provider, pv, np.array([prompt_tokens]), np.array([load]))[0]
    )
    ttft_ms *= math.exp(provider.ttft_noise * rng.standard_normal())
    tps = float(model.decode_tps(provider, pv, dem)[0])

    error = spec.error
    if error is None and not quiet:
        error = _roll(model.error_probabilities(provider, rhythm, pv, dem), rng)
    if error is None and prompt_tokens > provider.max_context:
        error = "context_overflow"
    fault = spec.fault if spec.fault in FAULTS else None
    if fault is None and not quiet and spec.fault is None:
        fault = _roll(
            {k: np.array([v]) * pv.fault_multiplier for k, v in provider.faults.items()}, rng
        )

    family = family_of(spec.task_prompt)
    long = prompt_tokens >= LONG_CONTEXT_TOKENS
    p_wrong = (
        0.0 if quiet else float(model.wrong_probability(provider, pv, [family or ""], [long])[0])
    )
    p_script = 0.0 if quiet else float(pv.wrong_script_rate[0])
    sentences = max(1, round(provider.reasoning_tokens / 9)) if provider.reasoning != "none" else 0
    answer = compose(
        spec.task_prompt,
        p_wrong=p_wrong,
        p_wrong_script=p_script,
        reasoning_sentences=sentences,
        rng=pyrng,
        force=spec.quality,
    )
    tokens, reasoning_count, think_tags, finish = _output(provider, spec, answer)
    first_logprobs: list[tuple[str, float]] = []
    if spec.max_tokens == 1 and family is None:  # a drift probe's one-token question
        sampler = np.random.default_rng(spec.sampling.seed) if spec.sampling.seed else rng
        # quantization is the model itself, not a random fault: quiet keeps it
        quantized = float(pv.quantized[0])
        token, first_logprobs = first_token(spec.task_prompt, quantized, spec.sampling, sampler)
        tokens, reasoning_count, finish = [token], 0, "length"
    scale = scenario.time_scale
    sigma = provider.itl_jitter
    mean_gap = 1.0 / tps
    gaps = mean_gap * np.exp(sigma * rng.standard_normal(max(len(tokens) - 1, 0)) - sigma**2 / 2)
    limits = _rate_headers(provider, pv, dem, spec.wire, rng, at, error)
    return Plan(
        provider=provider,
        spec=spec,
        request_id=f"req_{rng.bytes(12).hex()}",
        model=provider.model_at(day),
        stage=provider.phases[int(pv.index[0])].stage,
        demand=float(dem[0]),
        load=load,
        prompt_tokens=prompt_tokens,
        tokens=tokens,
        reasoning_count=reasoning_count,
        think_tags=think_tags,
        finish=finish,
        ttft_s=ttft_ms / 1000.0 * scale,
        gaps_s=[float(g) * scale for g in gaps],
        ttft_model_ms=ttft_ms,
        tps=tps,
        error=error,
        fault=fault,
        outcome=answer.outcome,
        rate_headers=limits[0],
        retry_after_s=limits[1],
        first_logprobs=first_logprobs,
    )


def _output(
    provider: Provider, spec: RequestSpec, answer: Answer
) -> tuple[list[str], int, bool, str]:
    """Output tokens (reasoning first), how many are reasoning, think-tag style, finish."""
    think_tags = provider.reasoning == "think_tags" and spec.wire == "openai"
    reasoning: list[str] = []
    if think_tags:
        reasoning = tokenize(f"<think>\n{answer.reasoning}\n</think>\n\n")
    elif provider.reasoning != "none":
        reasoning = tokenize(answer.reasoning)
    tokens = reasoning + tokenize(answer.text)
    finish = "stop"
    if len(tokens) > spec.max_tokens:
        tokens, finish = tokens[: max(spec.max_tokens, 1)], "length"
    return tokens, min(len(reasoning), len(tokens)), think_tags, finish


def _roll(probabilities: dict[str, np.ndarray], rng: np.random.Generator) -> str | None:
    """At most one outcome: walk the cumulative probabilities with one uniform draw."""
    u = float(rng.random())
    acc = 0.0
    for name, p in probabilities.items():
        acc += float(p[0])
        if u < acc:
            return name
    return None


def _go_duration(seconds: float) -> str:
    """OpenAI-style relative reset: ``12ms``, ``1.5s``, ``6m0s``."""
    if seconds < 1:
        return f"{max(int(seconds * 1000), 1)}ms"
    if seconds < 60:
        return f"{seconds:.3g}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest}s"


def _rate_headers(
    provider: Provider,
    pv: model.PhaseValues,
    dem: np.ndarray,
    wire: str,
    rng: np.random.Generator,
    at: datetime,
    error: str | None,
) -> tuple[dict[str, str], int | None]:
    """Rate-limit headers in the endpoint's style, plus retry-after for a 429."""
    limited = error in ("rate_limited", "quota_exhausted")
    retry_after = int(rng.integers(1, 31)) if error == "rate_limited" else None
    if provider.rate_limit_requests <= 0:
        return {}, retry_after
    req_limit, tok_limit = (int(a[0]) for a in model.rate_limits(provider, pv))
    share = min(provider.rate_limit_utilisation * float(dem[0]), 1.0)
    used_req = min(int(rng.poisson(req_limit * share)), req_limit)
    used_tok = min(int(rng.poisson(tok_limit * share)), tok_limit)
    req_left = 0 if limited else req_limit - used_req
    tok_left = 0 if limited else tok_limit - used_tok
    req_reset = 60.0 * used_req / req_limit if not limited else float(retry_after or 60)
    tok_reset = 60.0 * used_tok / tok_limit if not limited else float(retry_after or 60)
    if wire == "openai":
        headers = {
            "x-ratelimit-limit-requests": str(req_limit),
            "x-ratelimit-remaining-requests": str(req_left),
            "x-ratelimit-reset-requests": _go_duration(req_reset),
            "x-ratelimit-limit-tokens": str(tok_limit),
            "x-ratelimit-remaining-tokens": str(tok_left),
            "x-ratelimit-reset-tokens": _go_duration(tok_reset),
        }
    else:
        now = at.astimezone(UTC).timestamp()

        def stamp(seconds: float) -> str:
            return datetime.fromtimestamp(now + seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

        headers = {
            "anthropic-ratelimit-requests-limit": str(req_limit),
            "anthropic-ratelimit-requests-remaining": str(req_left),
            "anthropic-ratelimit-requests-reset": stamp(req_reset),
            "anthropic-ratelimit-tokens-limit": str(tok_limit),
            "anthropic-ratelimit-tokens-remaining": str(tok_left),
            "anthropic-ratelimit-tokens-reset": stamp(tok_reset),
        }
    return headers, retry_after
