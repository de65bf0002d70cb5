"""Cost of one probe from the provider's usage and the configured prices (USD per million
tokens). Input splits three ways: cache reads at ``cached_price()`` (unset: the input
price), cache writes at ``cache_write_price()`` (unset: 1.25 x the input price, as
Anthropic, DashScope's explicit cache and MiniMax bill them) and the rest at the input
price. A provider's own figure (OpenRouter's ``usage.cost``) is used only when no price is
configured. ``worst_case_cost_usd`` bounds a probe's cost before it runs, for the
budget's reservation."""

from __future__ import annotations

from pipeline.config.model import ProviderConfig

__all__ = ["cost_usd", "worst_case_cost_usd"]


def cost_usd(
    provider: ProviderConfig,
    *,
    input_tokens: int | None,
    output_tokens: int | None,
    cached_tokens: int | None,
    cache_write_tokens: int | None = None,
    reported_cost: float | None = None,
) -> float | None:
    priced = provider.price_input_per_mtok or provider.price_output_per_mtok
    if not priced:
        return reported_cost
    if input_tokens is None and output_tokens is None:
        return None
    prompt = input_tokens or 0
    cached = min(cached_tokens or 0, prompt)  # a provider's count is not trusted past the prompt
    written = min(cache_write_tokens or 0, prompt - cached)
    total = (
        (prompt - cached - written) * provider.price_input_per_mtok
        + cached * provider.cached_price()
        + written * provider.cache_write_price()
        + (output_tokens or 0) * provider.price_output_per_mtok
    )
    return total / 1e6


def worst_case_cost_usd(
    provider: ProviderConfig, input_tokens: float, output_tokens: float
) -> float:
    """The most ``cost_usd`` can charge for this many tokens: every input token at the
    dearest input rate (a cache write costs 1.25-2 x the input price, so pricing the
    prompt at the input rate let a cache-writing probe settle above its reservation) and
    every output token at the output rate."""
    dearest = max(
        provider.price_input_per_mtok, provider.cached_price(), provider.cache_write_price()
    )
    return (input_tokens * dearest + output_tokens * provider.price_output_per_mtok) / 1e6
