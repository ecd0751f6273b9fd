"""Rough cost estimates for the models of a run, from their providers' price tables.

Each provider's :class:`~sdtt.models.registry.Provider` entry says whether its calls are
free and names its price table (:mod:`sdtt.models.prices`, where the figures are kept).
Providers change their prices, so the CLI labels every figure an estimate. Batch APIs
cost half.
"""

from __future__ import annotations

from sdtt.models.base import Usage
from sdtt.models.prices import FREE, Price, price_in
from sdtt.models.registry import provider_of


def is_free(model: str) -> bool:
    """Whether calls of ``model`` cost nothing (its provider says so: local, mock)."""
    provider = provider_of(model)
    return provider is not None and provider.free


def price_of(model: str) -> Price | None:
    """The price of ``model`` (zero for local and mock models), ``None`` if unknown."""
    provider = provider_of(model)
    if provider is None:
        return None
    if provider.free:
        return FREE
    return price_in(provider.prices, model.partition("/")[2])


def estimate_cost(model: str, usage: Usage, *, batch: bool = False) -> float | None:
    """The estimated cost of ``usage`` on ``model`` in dollars, ``None`` if unpriced."""
    price = price_of(model)
    return None if price is None else price.cost(usage, batch=batch)
