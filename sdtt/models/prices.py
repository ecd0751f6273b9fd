"""List prices of priced models, one table per provider (US dollars per million tokens).

A provider's :class:`~sdtt.models.registry.Provider` entry names its table (``prices``);
edit the table here when a provider changes its prices. Each table is keyed by the model
part of ``provider/model``; a dated snapshot (``gpt-4o-2024-08-06``) costs what its base
name costs. Prices at the time of writing: every figure shown is labelled an estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sdtt.models.base import Usage

BATCH_DISCOUNT = 0.5
"""What a batch API call costs, as a share of a direct call (half, at OpenAI and Anthropic)."""


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


FREE = Price(0.0, 0.0, 0.0)
"""The price of a model whose provider says its calls cost nothing."""

OPENAI: dict[str, Price] = {
    "gpt-4o": Price(2.50, 1.25, 10.00),
    "gpt-4o-mini": Price(0.15, 0.075, 0.60),
    "gpt-4.1": Price(2.00, 0.50, 8.00),
    "gpt-4.1-mini": Price(0.40, 0.10, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.025, 0.40),
}
"""The ``openai`` provider's list prices."""

ANTHROPIC: dict[str, Price] = {
    "claude-sonnet-4-5": Price(3.00, 0.30, 15.00),
    "claude-haiku-4-5": Price(1.00, 0.10, 5.00),
    "claude-opus-4-1": Price(15.00, 1.50, 75.00),
}
"""The ``anthropic`` provider's list prices."""


def price_in(table: Mapping[str, Price], model: str) -> Price | None:
    """The price of ``model`` (the part after ``provider/``) in ``table``, ``None`` if
    unlisted; a dated snapshot costs what its base name costs."""
    if model in table:
        return table[model]
    # Dated snapshots ("gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929") cost the same.
    for name in sorted(table, key=len, reverse=True):
        if model.startswith(name + "-"):
            return table[name]
    return None
