"""The Rich progress display of ``sdtt generate`` and its end-of-run summary table.

One row for all chains and one per chain (only the running ones when there are many):
turns done of turns planned, tokens (cached share), estimated cost for priced models,
and the time remaining at the current pace. The text comes from
:mod:`sdtt.generate.progress`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from sdtt.generate.progress import SUMMARY_COLUMNS, clip, format_cost, short_tokens, summary_row
from sdtt.generate.runner import ChainProgress
from sdtt.models.base import Usage
from sdtt.redact import shown

MAX_ROWS = 12
"""With more chains than this, only running chains get a row."""
LABEL_WIDTH = 28


class RichProgress:
    """Shows chains' progress with rich while a run is going on."""

    def __init__(
        self, console: Console, chains: Sequence[ChainProgress] = (), *, batch: bool = False
    ) -> None:
        self.console = console
        self.batch = batch
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=12),
            MofNCompleteColumn(),
            TextColumn("[dim]{task.fields[tokens]}[/]"),
            TextColumn("{task.fields[cost]}"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self._chains: dict[str, ChainProgress] = {}
        self._rows: dict[str, TaskID] = {}
        self._many = len(chains) > MAX_ROWS
        self._total = self._progress.add_task("[bold]all chains[/]", total=0, tokens="", cost="")
        for chain in chains:
            self.chain_update(chain)

    def __enter__(self) -> Self:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def chain_update(self, progress: ChainProgress) -> None:
        """Show a chain's new state and the new totals."""
        self._chains[progress.chain] = progress
        label = shown(clip(progress.label, LABEL_WIDTH))
        if progress.status == "failed":
            label = f"[red]{label} (failed)[/]"
        elif progress.status == "done":
            label = f"[green]{label}[/]"
        visible = not self._many or progress.status in ("running", "failed")
        tokens = short_tokens(progress.usage)
        cost = format_cost([progress], batch=self.batch)
        row = self._rows.get(progress.chain)
        if row is None:
            self._rows[progress.chain] = self._progress.add_task(
                label,
                total=progress.turns_total,
                completed=progress.turns_done,
                visible=visible,
                tokens=tokens,
                cost=cost,
            )
        else:
            self._progress.update(
                row,
                description=label,
                completed=progress.turns_done,
                visible=visible,
                tokens=tokens,
                cost=cost,
            )
        chains = list(self._chains.values())
        usage = sum((chain.usage for chain in chains), Usage())
        self._progress.update(
            self._total,
            total=sum(chain.turns_total for chain in chains),
            completed=sum(chain.turns_done for chain in chains),
            tokens=short_tokens(usage),
            cost=format_cost(chains, batch=self.batch),
        )


def summary_table(chains: Sequence[ChainProgress], *, batch: bool = False) -> Table:
    """One row per chain: what it is, status, turns, calls, tokens and estimated cost."""
    table = Table(title="pseudo-dialogue chains", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column(SUMMARY_COLUMNS[0], overflow="fold")
    table.add_column(SUMMARY_COLUMNS[1], no_wrap=True)
    for column in SUMMARY_COLUMNS[2:]:
        table.add_column(column, justify="right", no_wrap=True)
    for chain in chains:
        style = {"done": "green", "failed": "red"}.get(chain.status, "yellow")
        label, status, *numbers = summary_row(chain, batch=batch)
        table.add_row(shown(label), f"[{style}]{status}[/]", *numbers)
    return table
