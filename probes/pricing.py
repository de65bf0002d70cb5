"""Cost of one probe from the provider's usage and the configured prices (USD per million
tokens). Cached input is billed at the cached price; a provider's own figure (OpenRouter's
``usage.cost``) is used only when no price is configured."""

from __future__ import annotations

from pipeline.config.model import ProviderConfig

__all__ = ["cost_usd"]


def cost_usd(
    provider: ProviderConfig,
    *,
    input_tokens: int | None,
    output_tokens: int | None,
    cached_tokens: int | None,
    reported_cost: float | None = None,
) -> float | None:
    priced = provider.price_input_per_mtok or provider.price_output_per_mtok
    if not priced:
        return reported_cost
    if input_tokens is None and output_tokens is None:
        return None
    cached = min(cached_tokens or 0, input_tokens or 0)
    uncached = (input_tokens or 0) - cached
    total = (
        uncached * provider.price_input_per_mtok
        + cached * provider.price_cached_per_mtok
        + (output_tokens or 0) * provider.price_output_per_mtok
    )
    return total / 1e6
