"""The simulated model's first token on a one-token request: what drift tracking measures.

Each prompt has its own logits over a small vocabulary, drawn from a generator seeded by
the prompt, so they are the same in every process. A quantized model adds a second,
prompt-seeded direction times ``quantized * SHIFT_PER_QUANTIZED`` (the scenario's
``quantized`` phase value, scaled by the history's ``step_scale``): border-input
probabilities and logprobs move, by an amount a benchmark can choose. Every call also
jitters the logits by ``SERVING_NOISE`` (batching and kernel nondeterminism), which is why
temperature 0 still gives border inputs, as on hosted endpoints.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "SERVING_NOISE",
    "SHIFT_PER_QUANTIZED",
    "VOCAB",
    "Sampling",
    "first_token",
    "greedy_tokens",
    "logits",
    "sampling_of",
]

VOCAB = ("yes", "no", "the", "a", "1", "2", "3", "I", "It", "OK", "red", "blue")
SERVING_NOISE = 0.15  # sd of the per-call logit jitter
SHIFT_PER_QUANTIZED = 2.0  # sd of the logit shift at quantized = 1


@dataclass(frozen=True, slots=True)
class Sampling:
    """The request's sampling fields (OpenAI wire)."""

    temperature: float = 1.0
    seed: int | None = None
    top_logprobs: int = 0  # 0: no logprobs asked


def sampling_of(body: dict[str, Any]) -> Sampling:
    """Read temperature, seed and logprobs; anything malformed keeps its default."""
    temperature = body.get("temperature", 1.0)
    seed = body.get("seed")
    top = body.get("top_logprobs") if body.get("logprobs") is True else 0
    return Sampling(
        float(temperature) if isinstance(temperature, (int, float)) else 1.0,
        seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        top if isinstance(top, int) and not isinstance(top, bool) and top > 0 else 0,
    )


def logits(prompt: str, quantized: float) -> np.ndarray:
    """The prompt's logits, shifted by ``quantized`` along its own direction."""
    digest = hashlib.sha256(prompt.encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    base = rng.normal(0.0, 1.0, len(VOCAB))
    direction = rng.normal(0.0, 1.0, len(VOCAB))
    return base + quantized * SHIFT_PER_QUANTIZED * direction


def first_token(
    prompt: str, quantized: float, sampling: Sampling, rng: np.random.Generator
) -> tuple[str, list[tuple[str, float]]]:
    """(token, top logprobs) of one call; greedy at temperature 0."""
    z = logits(prompt, quantized) + rng.normal(0.0, SERVING_NOISE, len(VOCAB))
    if sampling.temperature <= 0:
        pick = int(np.argmax(z))
    else:
        scaled = z / sampling.temperature
        p = np.exp(scaled - scaled.max())
        pick = int(rng.choice(len(VOCAB), p=p / p.sum()))
    log_p = z - z.max() - np.log(np.exp(z - z.max()).sum())  # raw logprobs, as APIs report
    order = np.argsort(-log_p)[: sampling.top_logprobs]
    return VOCAB[pick], [(VOCAB[i], float(log_p[i])) for i in order]


def greedy_tokens(prompt: str, quantized: float, calls: int, rng: np.random.Generator) -> list[str]:
    """First tokens of ``calls`` calls at temperature 0, drawn at once (synthetic history
    and benchmarks; the same model as ``first_token``)."""
    z = logits(prompt, quantized)[None, :] + rng.normal(0.0, SERVING_NOISE, (calls, len(VOCAB)))
    return [VOCAB[i] for i in np.argmax(z, axis=1)]
