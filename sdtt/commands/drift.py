"""``sdtt drift``: how the persona side of pseudo-dialogues drifts from the real person.

For windows of turns (1-10, 11-20, ...) of one or more chain files, the persona side's
words and characters per message, messages per burst, emoji, emoticon and punctuation
rates, next to the person's own; and the words-per-message delta (the paper's "# Words").
"""

from __future__ import annotations

import argparse
import json

from rich import box
from rich.table import Table

from sdtt.analysis.drift import DriftReport, DriftRow, baseline_stats, drift_report
from sdtt.commands.console import CliConsole
from sdtt.dialogue.condition import ChatMode
from sdtt.dialogue.message import Message
from sdtt.dialogue.parse import scan_lines
from sdtt.dialogue.render import fold_text
from sdtt.errors import InputError
from sdtt.generate.chainfile import ChainFile, read_chain
from sdtt.personas.store import find_persona
from sdtt.personas.style_stats import StyleStats
from sdtt.redact import shown


def _history_conversations(chain: ChainFile) -> list[list[Message]]:
    """The persona history a chain's prompts showed, read back from its header."""
    blocks = chain.header.history.split("\n\n")
    conversations = []
    for block in blocks:
        lines = [line for line in scan_lines(block, chain.header.history_end) if line.structured]
        messages = [
            Message(side=line.side, text=line.text, time=line.time or chain.header.history_end)
            for line in lines
            if line.text
        ]
        if messages:
            conversations.append(messages)
    return conversations


def _baseline(
    chains: list[ChainFile], persona_name: str | None, mode: ChatMode
) -> tuple[StyleStats, str]:
    name = persona_name or chains[0].header.spec.persona
    try:
        persona = find_persona(name)
    except InputError:
        if persona_name is not None:
            raise
        conversations = _history_conversations(chains[0])
        return baseline_stats(conversations, mode), "the history stored in the chain file"
    conversations = [conversation.messages for conversation in persona.conversations]
    return baseline_stats(conversations, mode), f"persona {persona.name}"


def _check_same(chains: list[ChainFile]) -> ChatMode:
    first = chains[0].header
    for chain in chains[1:]:
        if chain.header.persona_name != first.persona_name:
            raise InputError(
                f"is of persona {chain.header.persona_name!r}, the first file of "
                f"{first.persona_name!r}.",
                path=chain.path,
                hint="Compare one persona at a time.",
            )
        if chain.header.spec.mode != first.spec.mode:
            raise InputError(
                f"is a {chain.header.spec.mode} chain, the first file a {first.spec.mode} one.",
                path=chain.path,
                hint="Compare one mode at a time.",
            )
    return first.spec.mode


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def drift_table(report: DriftReport, against: str) -> Table:
    """The report as a rich table: the person's row, one row per window, then all turns."""
    table = Table(
        title=f"persona-side drift ({report.mode}, {report.chains} chain(s)) against {against}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        caption_justify="left",
    )
    table.add_column("turns", no_wrap=True, min_width=7)
    for column in (
        "msgs",
        "words",
        "Δwords",
        "chars",
        "burst",
        "emoji",
        ":)",
        "?",
        "!",
        "end .",
        "lower",
    ):
        table.add_column(column, justify="right", no_wrap=True)

    def cells(stats: StyleStats, delta: str) -> list[str]:
        return [
            str(stats.messages),
            f"{stats.words_per_message.mean:.1f}",
            delta,
            f"{stats.chars_per_message.mean:.1f}",
            f"{stats.burst_size.mean:.2f}",
            _pct(stats.emoji),
            _pct(stats.emoticon),
            _pct(stats.question),
            _pct(stats.exclamation),
            _pct(stats.final_period),
            _pct(stats.lowercase_start),
        ]

    table.add_row("[bold]person[/]", *cells(report.baseline, ""))

    def add(row: DriftRow, label: str) -> None:
        delta = f"{row.words_delta:+.1f}" if row.stats.messages else ""
        table.add_row(label, *cells(row.stats, delta))

    for row in report.rows:
        add(row, row.label)
    add(report.overall, "[bold]all[/]")
    table.caption = (
        "words/chars: mean per message; burst: messages per burst; emoji, :) (emoticons), "
        "?, !, end . (final full stop), lower (lower-case start): share of messages"
    )
    return table


def _row_json(row: DriftRow | None, stats: StyleStats, label: str) -> str:
    data = {
        "turns": label,
        "words_delta": None if row is None else round(row.words_delta, 4),
        "chars_delta": None if row is None else round(row.chars_delta, 4),
        **stats.model_dump(mode="json"),
    }
    return json.dumps(data)


def run(args: argparse.Namespace) -> int:
    """Print the drift table (or JSON lines) for the chain files."""
    console = CliConsole(highlight=False)
    if args.window < 1:
        raise InputError(f"must be at least 1, not {args.window}.", field="--window")
    chains = [read_chain(path) for path in args.files]
    mode = _check_same(chains)
    baseline, against = _baseline(chains, args.persona, mode)
    report = drift_report(
        [chain.turns for chain in chains], baseline, mode=mode, window=args.window
    )
    if args.json:
        print(_row_json(None, baseline, "person"))
        for row in report.rows:
            print(_row_json(row, row.stats, row.label))
        print(_row_json(report.overall, report.overall.stats, "all"))
        return 0
    console.print(drift_table(report, shown(fold_text(against))))
    console.print(
        f"# Words (persona side minus the person, all turns): "
        f"[bold]{report.overall.words_delta:+.1f}[/] words per message"
    )
    return 0
