"""``sdtt models``: every model provider and whether it can be used on this machine.

For each provider: an example model name, usable yes/no, and why (SDK installed, API key
set, weights present). Keys are never shown, only whether their variable is set.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from sdtt.commands.common import where_keys_go
from sdtt.commands.console import CliConsole
from sdtt.models.registry import PROVIDERS, ProviderStatus, all_provider_status
from sdtt.redact import shown


def status_table(statuses: Sequence[ProviderStatus]) -> Table:
    """The providers as a rich table: provider, example name, usable, why."""
    table = Table(title="Model providers", title_justify="left")
    table.add_column("provider", style="bold", no_wrap=True)
    table.add_column("example model", no_wrap=True)
    table.add_column("usable")
    table.add_column("why", overflow="fold")
    for status in statuses:
        table.add_row(
            status.provider.name,
            status.provider.example,
            "[green]yes[/]" if status.usable else "[red]no[/]",
            shown(status.reason),
        )
    return table


def run(args: argparse.Namespace, console: Console | None = None) -> int:
    """Print the provider table; always exits 0 (an unusable provider is not an error)."""
    console = console or CliConsole()
    console.print(status_table(all_provider_status()))
    console.print(
        f"[dim]Name a model as provider/model, e.g. --model {PROVIDERS['mock'].example}. "
        f"Keys are read from their variables: {where_keys_go()}; a --base-url elsewhere "
        "gets no key unless --api-key-env NAME names the variable holding its own.[/]"
    )
    return 0
