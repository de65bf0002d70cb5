"""What the stored drift baselines cost per day, for ``config check``'s plan.

Counted from each baseline's own settings and the provider's own token counts of its
border inputs (the chat template included), plus one output token per call; priced at the
provider's uncached rates. ``nerfwatch drift sample`` spends it when run (daily, e.g.
from cron); the daemon does not schedule it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.config.model import Config
from pipeline.config.plan import run_cost_usd
from pipeline.drift.signs import load_baselines

__all__ = ["DriftCost", "drift_costs"]

_UNKNOWN_PROMPT_TOKENS = 20  # a one-token prompt in a chat template, before any count came


@dataclass(frozen=True, slots=True)
class DriftCost:
    provider: str
    model: str
    calls_per_day: int
    tokens_per_day: int
    cost_per_day_usd: float


def drift_costs(config: Config, folder: Path) -> list[DriftCost]:
    """One row per stored baseline of a configured provider."""
    known = {p.name: p for p in config.providers}
    out = []
    for baseline in load_baselines(folder):
        provider = known.get(baseline.provider)
        if provider is None:
            continue
        counted = [max(c) for c in baseline.input_tokens.values() if c]
        prompt = max(counted) if counted else _UNKNOWN_PROMPT_TOKENS
        settings = baseline.settings
        calls = len(baseline.reference) * settings.per_input + settings.logprob_calls
        tokens = calls * (prompt + 1)
        cost = calls * run_cost_usd(provider, prompt, 1)
        out.append(DriftCost(provider.name, baseline.model, calls, tokens, cost))
    return out
