"""Rich renderings shared by the CLI commands: conversations, model usage and tables of
facts the library describes in plain text."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

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
    ) -> Iterator[RenderableType | Segment]:
        labels = [_cell_text(console, name) for name in self.header]
        cells = [[_cell_text(console, cell) for cell in row] for row in self.rows]
        if self._fits(console, options, labels, cells):
            yield self.table()
            return
        yield terminal_text(self.title)
        for row, texts in zip(self.rows, cells, strict=True):
            block = _facts_block(console, list(zip(labels, texts, strict=False)), options.max_width)
            if block is None:
                yield facts_table("", zip(self.header, row, strict=False), boxed=False)
            else:
                yield from block
            yield ""

    def _fits(
        self,
        console: Console,
        options: ConsoleOptions,
        labels: list[Text],
        cells: list[list[Text]],
    ) -> bool:
        """Whether the table fits the width with no word broken. A table is as narrow as
        each column's longest word allows, so the table of the header and, in each
        column, its cell with the longest word is measured (measuring every cell took
        longer than printing)."""
        row: list[str] = []
        for index in range(max([len(labels), *map(len, cells)])):
            column = [(texts[index], n) for n, texts in enumerate(cells) if index < len(texts)]
            if not column:
                break
            _, n = max(column, key=lambda found: _longest_word(found[0]))
            row.append(self.rows[n][index])
        sample = FittedTable(self.title, self.header, [row] if row else [])
        # Measured unbounded: Rich clamps a measurement to the width it is given.
        needed = Measurement.get(console, options.update_width(1 << 16), sample.table())
        return needed.minimum <= options.max_width


def _cell_text(console: Console, cell: str) -> Text:
    """A cell as a table shows it: its text made safe, markup read, not highlighted."""
    return console.render_str(terminal_text(cell), highlight=False)


def _widest_line(text: Text) -> int:
    return max(cell_len(line) for line in text.plain.split("\n"))


def _longest_word(text: Text) -> int:
    return max((cell_len(word) for word in text.plain.split()), default=0)


def _facts_block(
    console: Console, pairs: list[tuple[Text, Text]], width: int
) -> list[Segment] | None:
    """The lines an unboxed :func:`facts_table` of ``pairs`` prints at ``width``, drawn
    directly: Rich lays out and renders a table cell by cell, 5 ms a row of a score
    table, so a thousand blocks took seconds. ``None`` where Rich would narrow both
    columns (a label column too wide for the width): then the table itself prints."""
    if not pairs:
        return None
    # Rich's widths: each column as wide as its widest line plus its one space of
    # padding, and when they do not fit the wider column (the values) gives way.
    left = max(_widest_line(label) for label, _ in pairs) + 1
    right = max(_widest_line(value) for _, value in pairs) + 1
    excess = left + right - width
    if excess > 0:
        right -= excess
        if right < left:
            return None
    if left < 2 or right < 2:
        return None
    segments: list[Segment] = []
    for label, value in pairs:
        what = label.wrap(console, left - 1, justify="left", overflow="fold")
        said = value.wrap(console, right - 1, justify="left", overflow="fold")
        for index in range(max(len(what), len(said))):
            line = what[index] if index < len(what) else Text(" " * (left - 1))
            line.stylize("bold")
            line.append("  ")
            line.append_text(said[index] if index < len(said) else Text(" " * (right - 1)))
            segments.extend(line.render(console))
            segments.append(Segment.line())
    return segments
