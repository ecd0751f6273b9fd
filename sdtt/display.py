"""Rich renderings shared by the CLI commands: conversations, model usage and tables of
facts the library describes in plain text."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.table import Table

from sdtt.dialogue.message import Message
from sdtt.dialogue.render import format_time
from sdtt.models.base import ModelOutput, Usage
from sdtt.redact import shown

SIDE_STYLES = {"user": "bold cyan", "response": "bold magenta"}


def terminal_text(text: str) -> str:
    """``text`` made safe to print with Rich (:func:`sdtt.redact.shown`, the one rule).

    For everything sdtt did not write itself (chat text, names, model output): escape
    sequences in it could otherwise retitle the terminal or clear it, and brackets would
    be read as Rich markup.
    """
    return shown(text)


def print_conversation(
    console: Console,
    messages: Iterable[Message],
    *,
    user_label: str = "User",
    bot_label: str = "Response",
) -> None:
    """Print messages one per line: time, speaker (coloured by side), text."""
    labels = {"user": user_label, "response": bot_label}
    width = max(len(user_label), len(bot_label))
    for message in messages:
        label = labels[message.side].ljust(width)
        console.print(
            f"[dim]{format_time(message.time)}[/] "
            f"[{SIDE_STYLES[message.side]}]{terminal_text(label)}[/] "
            f"{terminal_text(message.text)}"
        )


def usage_line(outputs: Sequence[ModelOutput]) -> str:
    """One line summing the calls: count, tokens (input, cached, output), model time."""
    total = sum((output.usage for output in outputs), Usage())
    seconds = sum(output.latency for output in outputs)
    return (
        f"[dim]{len(outputs)} model call(s), {total.input_tokens} input tokens "
        f"({total.cached_text()}), {total.output_tokens} output tokens, "
        f"{seconds:.1f} s[/]"
    )


def facts_table(title: str, rows: Iterable[tuple[str, str]], *, boxed: bool = True) -> Table:
    """A two-column table of (what, value) rows, such as
    :func:`sdtt.personas.timing.timing_summary`; every cell is shown as text, never markup.
    Unboxed, its lines start with the first column (no border, no padding before it)."""
    table = Table(title=title, show_header=False, title_justify="left")
    if not boxed:
        table.box, table.pad_edge = None, False
    table.add_column("what", style="bold", overflow="fold")
    table.add_column("value", overflow="fold")
    for what, value in rows:
        table.add_row(terminal_text(what), terminal_text(value))
    return table


@dataclass
class FittedTable:
    """A table of display strings, laid out as a table where every word of every column
    fits the width, else as one block per row (each cell beside its column's name, like
    ``psql``'s expanded display): a narrow terminal never breaks a number or a word across
    lines, where ``15000`` could read as ``1500``. Every cell is shown as text."""

    title: str
    header: list[str]
    rows: list[list[str]]

    def table(self) -> Table:
        """The rows as one table."""
        table = Table(title=terminal_text(self.title), title_justify="left")
        for index, name in enumerate(self.header):
            table.add_column(
                terminal_text(name), justify="left" if index == 0 else "right", overflow="fold"
            )
        for row in self.rows:
            table.add_row(*(terminal_text(cell) for cell in row))
        return table

    def __rich_console__(
        self, console: Console, options: ConsoleOptions
    ) -> Iterator[RenderableType]:
        table = self.table()
        # Measured unbounded: Rich clamps a measurement to the width it is given.
        needed = Measurement.get(console, options.update_width(1 << 16), table).minimum
        if needed <= options.max_width:
            yield table
            return
        yield terminal_text(self.title)
        for row in self.rows:
            yield facts_table("", zip(self.header, row, strict=False), boxed=False)
            yield ""
