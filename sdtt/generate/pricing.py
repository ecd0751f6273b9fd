"""Rough cost estimates for priced models (US dollars per million tokens).

List prices at the time of writing; providers change them, so the CLI labels every
figure an estimate. Batch APIs cost half. Local and mock models cost nothing here.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdtt.models.base import Usage
from sdtt.models.registry import provider_of

BATCH_DISCOUNT = 0.5


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens: uncached input, cached input, output."""

    input: float
    cached_input: float
    output: float

    def cost(self, usage: Usage, *, batch: bool = False) -> float:
        """The estimated cost of ``usage`` in dollars."""
        # Unknown cache use is priced as none: an estimate errs on the high side.
        cached = usage.cached_input_tokens or 0
        uncached = max(0, usage.input_tokens - cached)
        dollars = (
            uncached * self.input + cached * self.cached_input + usage.output_tokens * self.output
        ) / 1_000_000
        return dollars * (BATCH_DISCOUNT if batch else 1.0)


PRICES: dict[str, Price] = {
    "openai/gpt-4o": Price(2.50, 1.25, 10.00),
    "openai/gpt-4o-mini": Price(0.15, 0.075, 0.60),
    "openai/gpt-4.1": Price(2.00, 0.50, 8.00),
    "openai/gpt-4.1-mini": Price(0.40, 0.10, 1.60),
    "openai/gpt-4.1-nano": Price(0.10, 0.025, 0.40),
    "anthropic/claude-sonnet-4-5": Price(3.00, 0.30, 15.00),
    "anthropic/claude-haiku-4-5": Price(1.00, 0.10, 5.00),
    "anthropic/claude-opus-4-1": Price(15.00, 1.50, 75.00),
}
"""Known list prices; a model not listed (and not free) has no estimate."""


def is_free(model: str) -> bool:
    """Whether calls of ``model`` cost nothing (its provider says so: local, mock)."""
    provider = provider_of(model)
    return provider is not None and provider.free


def price_of(model: str) -> Price | None:
    """The price of ``model`` (zero for local and mock models), ``None`` if unknown."""
    if is_free(model):
        return Price(0.0, 0.0, 0.0)
    if model in PRICES:
        return PRICES[model]
    # Dated snapshots ("gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929") cost the same.
    for name in sorted(PRICES, key=len, reverse=True):
        if model.startswith(name + "-"):
            return PRICES[name]
    return None


def estimate_cost(model: str, usage: Usage, *, batch: bool = False) -> float | None:
    """The estimated cost of ``usage`` on ``model`` in dollars, ``None`` if unpriced."""
    price = price_of(model)
    return None if price is None else price.cost(usage, batch=batch)
