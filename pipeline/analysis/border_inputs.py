"""Border inputs (B3IT): fixed one-token prompts whose first output token is not certain.

Most prompts get the same first token every time, so they say nothing about a change. A
*border input* is one where two or more first tokens compete; a small change in the
weights (quantization, a fine-tuning step, another model) moves that balance, and the
total-variation (TV) distance between a day's sample and a stored reference shows it.

Why sampling instead of temperature 0: B3IT relies on the serving stack's own noise at
temperature 0 (batching, kernels). A deterministic server (llama.cpp on one CPU slot) has
none, so every prompt looks certain. Then a small temperature with a seed per call plays
that role: the first token is a draw from softmax(logits / T), border inputs are those
whose top logits nearly tie, and a low T magnifies a logit shift d into log-odds d / T.
Pure functions; the probes and the files live elsewhere (``pipeline.drift``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "balance",
    "candidate_prompts",
    "counts",
    "day_distance",
    "select_border_inputs",
    "total_variation",
]

# Short, common, single-token-ish strings: letters, digits, punctuation, small words.
_WORDS = (
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "with", "was", "on",
    "be", "by", "at", "this", "are", "from", "or", "an", "not", "yes", "no", "one", "two",
    "red", "blue", "cat", "dog", "sun", "sky", "up", "down", "left", "right", "hot", "cold",
    "day", "night", "true", "false", "off", "go", "stop", "win", "lose", "big", "small",
)  # fmt: skip


def candidate_prompts(count: int) -> list[str]:
    """The first ``count`` candidates, in a fixed order (same list for every provider)."""
    pool = list(dict.fromkeys([*"abcdefghijklmnopqrstuvwxyz", *"0123456789", *_WORDS]))
    pool += [c.upper() for c in "abcdefghijklmnopqrstuvwxyz"] + list("?!.,:;-+=*#@")
    return pool[:count]


def counts(tokens: Iterable[str]) -> dict[str, int]:
    """How often each first token came back."""
    return dict(Counter(tokens))


def balance(token_counts: Mapping[str, int]) -> float:
    """1 - share of the most common token: 0 when one token always wins, near 1 for a
    spread; B3IT re-samples the most balanced inputs, where a shift moves most mass."""
    total = sum(token_counts.values())
    return 0.0 if total == 0 else 1.0 - max(token_counts.values()) / total


def select_border_inputs(answers: Mapping[str, Sequence[str]], keep: int) -> list[str]:
    """Inputs whose first token varied across calls, most balanced first (ties by the
    prompt, so the choice is reproducible), at most ``keep``."""
    varied = {p: balance(counts(a)) for p, a in answers.items() if len(set(a)) > 1}
    return sorted(varied, key=lambda p: (-varied[p], p))[:keep]


def total_variation(p: Mapping[str, int], q: Mapping[str, int]) -> float:
    """TV distance between two count tables, each normalised: half the L1 distance, in
    [0, 1]; 0 when both are empty."""
    p_total, q_total = sum(p.values()), sum(q.values())
    if p_total == 0 or q_total == 0:
        return 0.0
    keys = set(p) | set(q)
    return 0.5 * sum(abs(p.get(k, 0) / p_total - q.get(k, 0) / q_total) for k in keys)


def day_distance(
    reference: Mapping[str, Mapping[str, int]], day: Mapping[str, Mapping[str, int]]
) -> float | None:
    """Mean TV over the border inputs sampled that day (None if none was): B3IT's daily
    statistic."""
    shared = [p for p in reference if sum(day.get(p, {}).values()) > 0]
    if not shared:
        return None
    return sum(total_variation(reference[p], day[p]) for p in shared) / len(shared)
