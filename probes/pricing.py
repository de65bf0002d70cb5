"""Cost of one probe from the provider's usage and the configured prices (USD per million
tokens). Input splits three ways: cache reads at ``cached_price()`` (unset: the input
price), cache writes at ``cache_write_price()`` (unset: 1.25 x the input price, as
Anthropic, DashScope's explicit cache and MiniMax bill them) and the rest at the input
price. A provider's own figure (OpenRouter's ``usage.cost``) is used only when no price is
configured."""

from __future__ import annotations

from pipeline.config.model import ProviderConfig

__all__ = ["cost_usd"]


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
