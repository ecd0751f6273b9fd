"""What the progress display of ``sdtt generate`` and its end-of-run summary say about
chains, in plain text: turns, tokens (cached share) and the estimated cost for priced
models. The command renders them (:mod:`sdtt.commands.generate_display`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sdtt.generate.pricing import estimate_cost, is_free
from sdtt.generate.runner import ChainProgress
from sdtt.models.base import Usage

SUMMARY_COLUMNS = ("chain", "status", "turns", "calls", "tokens in", "cached", "out", "cost")
"""The columns of :func:`summary_row`."""


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters from the left, marked with an ellipsis."""
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def short_count(count: int) -> str:
    """A token count in a few characters: 950, 12k, 1.2M."""
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{count / 1000:.0f}k"
    return str(count)


def format_cost(chains: Sequence[ChainProgress], *, batch: bool = False) -> str:
    """The estimated cost of ``chains``: '' when all are free, '+?' when some are unpriced."""
    total = 0.0
    unknown = priced = False
    for chain in chains:
        if is_free(chain.model):
            continue
        cost = estimate_cost(chain.model, chain.usage, batch=batch)
        if cost is None:
            unknown = True
        else:
            priced = True
            total += cost
    if not priced:
        return "cost ?" if unknown else ""
    amount = f"{total:.2f}" if total >= 0.1 else f"{total:.4f}"
    return f"≈${amount}" + ("+?" if unknown else "")


def short_tokens(usage: Usage) -> str:
    """Tokens in and out, briefly."""
    return f"{short_count(usage.input_tokens)}→{short_count(usage.output_tokens)} tok"


def summary_row(chain: ChainProgress, *, batch: bool = False) -> tuple[str, ...]:
    """One chain in the end-of-run summary, a cell for each of :data:`SUMMARY_COLUMNS`."""
    usage = chain.usage
    return (
        chain.label,
        chain.status,
        f"{chain.turns_done}/{chain.turns_total}",
        str(chain.calls),
        short_count(usage.input_tokens),
        usage.cached_share(),
        short_count(usage.output_tokens),
        format_cost([chain], batch=batch),
    )
