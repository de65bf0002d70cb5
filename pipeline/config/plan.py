"""The effective plan of a config: what is probed, how often, and what it costs per day.

Estimates are upper bounds on output: a run is counted at the prompt it really sends plus
its whole ``max_output_tokens``, priced at the provider's uncached input and output rates.
The prompt is what the task family builds: a long-context probe fills its context
target; a short family sends its own small item (about 100-250 tokens) whatever
``context`` says, so planning it at the context target would overstate it tenfold.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.config.durations import format_duration
from pipeline.config.model import Config, ProbeConfig, ProviderConfig
from pipeline.config.schedule import runs_per_day
from probes.runner import build_item
from probes.tasks import FAMILIES

__all__ = [
    "PlanRow",
    "ProviderTotal",
    "budget_warnings",
    "format_runs",
    "plan_rows",
    "prompt_tokens",
    "provider_totals",
    "run_cost_usd",
    "unpriced_under_cap",
]


def format_runs(per_day: float) -> str:
    """Runs per day as people count them: ``144``, not ``144.0``; a cron or interval that
    does not divide the day keeps one decimal (``205.7``)."""
    return f"{per_day:,.0f}" if abs(per_day - round(per_day)) < 0.05 else f"{per_day:,.1f}"


@dataclass(frozen=True, slots=True)
class PlanRow:
    provider: str
    probe: str
    task: str
    prompt_tokens: int  # what one run sends (see prompt_tokens)
    schedule: str
    runs_per_day: float
    tokens_per_day: float
    cost_per_day_usd: float


@dataclass(frozen=True, slots=True)
class ProviderTotal:
    provider: str
    runs_per_day: float
    tokens_per_day: float
    cost_per_day_usd: float
    cap_cost_usd: float | None
    cap_tokens: int | None


def run_cost_usd(
    provider: ProviderConfig, input_tokens: float, output_tokens: float, cached_tokens: float = 0.0
) -> float:
    """Price of one run from token counts (cached input at the cached rate)."""
    uncached = max(input_tokens - cached_tokens, 0.0)
    return (
        uncached * provider.price_input_per_mtok
        + cached_tokens * provider.cached_price()
        + output_tokens * provider.price_output_per_mtok
    ) / 1e6


_SAMPLES = 5  # items averaged to size a short family's prompt


def prompt_tokens(probe: ProbeConfig, provider: ProviderConfig) -> int:
    """The prompt tokens one run of ``probe`` sends to ``provider`` (an estimate)."""
    family = FAMILIES[probe.task]
    if family.KIND == "long":
        return probe.context_tokens
    cpt = provider.chars_per_token
    chars = [len(build_item(family, probe, seed, cpt)[0].prompt) for seed in range(_SAMPLES)]
    return round(sum(chars) / len(chars) / cpt)


def _schedule_text(probe: ProbeConfig) -> str:
    return f"every {format_duration(probe.every_s)}" if probe.every_s else f"cron {probe.cron}"


def plan_rows(config: Config) -> list[PlanRow]:
    """One row per (provider, probe) pair the daemon will schedule."""
    rows = []
    for probe in config.probes:
        per_day = runs_per_day(probe)
        for name in probe.providers:
            provider = config.provider(name)
            prompt = prompt_tokens(probe, provider)
            tokens = prompt + probe.max_output_tokens
            cost = run_cost_usd(provider, prompt, probe.max_output_tokens)
            rows.append(
                PlanRow(
                    name,
                    probe.name,
                    probe.task,
                    prompt,
                    _schedule_text(probe),
                    per_day,
                    per_day * tokens,
                    per_day * cost,
                )
            )
    return rows


def provider_totals(config: Config) -> list[ProviderTotal]:
    """Per-provider daily sums with the budget caps that apply to them."""
    rows = plan_rows(config)
    out = []
    for provider in config.providers:
        mine = [r for r in rows if r.provider == provider.name]
        limits = config.budget.per_provider.get(provider.name)
        out.append(
            ProviderTotal(
                provider=provider.name,
                runs_per_day=sum(r.runs_per_day for r in mine),
                tokens_per_day=sum(r.tokens_per_day for r in mine),
                cost_per_day_usd=sum(r.cost_per_day_usd for r in mine),
                cap_cost_usd=limits.daily_cost_usd if limits else None,
                cap_tokens=limits.daily_tokens if limits else None,
            )
        )
    return out


def budget_warnings(config: Config) -> list[str]:
    """Where the plan's upper bound exceeds a daily cap (probes would be skipped)."""
    out = []
    totals = provider_totals(config)
    cap = config.budget.total
    cost = sum(t.cost_per_day_usd for t in totals)
    tokens = sum(t.tokens_per_day for t in totals)
    if cap.daily_cost_usd is not None and cost > cap.daily_cost_usd:
        out.append(
            f"the plan may cost up to {cost:,.2f} USD/day, above the daily cap of "
            f"{cap.daily_cost_usd:,.2f}; long-context probes are skipped first"
        )
    if cap.daily_tokens is not None and tokens > cap.daily_tokens:
        out.append(
            f"the plan may use up to {tokens:,.0f} tokens/day, above the daily cap of "
            f"{cap.daily_tokens:,}; long-context probes are skipped first"
        )
    out += unpriced_under_cap(config)
    for total in totals:
        if total.cap_cost_usd is not None and total.cost_per_day_usd > total.cap_cost_usd:
            out.append(
                f"{total.provider}: up to {total.cost_per_day_usd:,.2f} USD/day, above "
                f"its cap of {total.cap_cost_usd:,.2f}"
            )
        if total.cap_tokens is not None and total.tokens_per_day > total.cap_tokens:
            out.append(
                f"{total.provider}: up to {total.tokens_per_day:,.0f} tokens/day, above "
                f"its cap of {total.cap_tokens:,}"
            )
    return out


def unpriced_under_cap(config: Config) -> list[str]:
    """Providers a dollar cap is meant to hold back but cannot: with no prices set, every
    probe costs 0 USD, so ``daily_cost_usd`` never skips one of theirs."""
    total_cap = config.budget.total.daily_cost_usd is not None
    out = []
    for provider in config.providers:
        own = config.budget.per_provider.get(provider.name)
        capped = total_cap or (own is not None and own.daily_cost_usd is not None)
        priced = provider.price_input_per_mtok > 0 or provider.price_output_per_mtok > 0
        if capped and not priced:
            out.append(
                f"{provider.name}: no prices set (price_input_per_mtok, price_output_per_mtok), "
                "so its probes cost 0 USD and daily_cost_usd never holds them back; "
                "set its prices or cap daily_tokens"
            )
    return out
