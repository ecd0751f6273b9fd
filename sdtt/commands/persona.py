"""``sdtt persona``: list the personas, show one, import new ones from chats or corpora."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from rich import box
from rich.table import Table

from sdtt.commands.console import CliConsole
from sdtt.display import facts_table, print_conversation
from sdtt.errors import InputError
from sdtt.files import output_folder
from sdtt.personas.persona import Persona
from sdtt.personas.store import (
    SUFFIX,
    list_personas,
    load_persona,
    locate_persona,
    persona_dirs,
    read_persona_info,
    save_persona,
)
from sdtt.personas.style_stats import StyleStats, Summary, style_stats
from sdtt.personas.timing import TimingProfile, fit_timing_profile, timing_summary
from sdtt.redact import shown


def run_list(args: argparse.Namespace) -> int:
    """Print the table of personas."""
    console = CliConsole(highlight=False)
    entries = list_personas()
    folders = dict(persona_dirs())
    if not entries:
        searched = " and ".join(str(folder) for folder in folders.values())
        console.print(f"No personas in {shown(searched)}.")
        console.print("Create some with 'sdtt persona import chitchat'.")
        return 0
    table = Table(
        title="Personas",
        box=box.SIMPLE_HEAD,
        caption=f"* shipped with sdtt ({shown(str(folders['shipped']))}); "
        f"the others are in {shown(str(folders['local']))}/",
    )
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("source")
    table.add_column("convs", justify="right")
    table.add_column("msgs", justify="right")
    table.add_column("own", justify="right")
    table.add_column("scrubbed")
    for entry in entries:
        name = shown(entry.name) + ("*" if entry.origin == "shipped" else "")
        if entry.persona is None:
            table.add_row(name, "[red]unreadable (see below)[/]", "", "", "", "")
            continue
        persona = entry.persona
        messages = persona.messages
        table.add_row(
            name,
            shown(persona.info.source),
            str(len(persona.conversations)),
            str(len(messages)),
            str(sum(message.side == "response" for message in messages)),
            "yes" if persona.info.scrubbed else "no",
        )
    console.print(table)
    console.print("[dim]convs = conversations, msgs = messages, own = the persona's messages[/]")
    for entry in entries:
        if entry.error is not None:
            console.print(f"[red]unreadable:[/] {shown(entry.error)}")
    return 0


def _summary(summary: Summary, digits: int = 1) -> str:
    if not summary.count:
        return "-"
    return (
        f"mean {summary.mean:.{digits}f}, median {summary.median:g}, "
        f"sd {summary.sd:.{digits}f}, max {summary.maximum:g}"
    )


def _bursts(stats: StyleStats) -> str:
    shares = stats.burst_shares
    if not shares:
        return "-"
    shown = [f"{size}: {share:.0%}" for size, share in shares.items() if size <= 5]
    beyond = sum(share for size, share in shares.items() if size > 5)
    if beyond:
        shown.append(f"6+: {beyond:.0%}")
    return (
        f"{', '.join(shown)} (mean {stats.burst_size.mean:.2f}, max {stats.burst_size.maximum:g})"
    )


def _rates(stats: StyleStats) -> list[tuple[str, str]]:
    return [
        ("questions '?'", f"{stats.question:.0%}"),
        ("exclamations '!'", f"{stats.exclamation:.0%}"),
        ("ends with '.'", f"{stats.final_period:.0%}"),
        ("ellipsis '...'", f"{stats.ellipsis:.0%}"),
        ("starts lower-case", f"{stats.lowercase_start:.0%}"),
        ("emoji", f"{stats.emoji:.0%}"),
        ("emoticons :)", f"{stats.emoticon:.0%}"),
        ("laughter haha/lol", f"{stats.laughter:.0%}"),
    ]


def stats_table(persona: Persona) -> Table:
    """The persona's style next to that of its chat partners."""
    conversations = [conversation.messages for conversation in persona.conversations]
    mine = style_stats(conversations, "response")
    theirs = style_stats(conversations, "user")
    table = Table(title="Style (persona = side 'response', partners = side 'user')")
    table.add_column("")
    table.add_column("persona", style="bold")
    table.add_column("partners")
    table.add_row("messages", str(mine.messages), str(theirs.messages))
    table.add_row(
        "bursts", str(sum(mine.burst_sizes.values())), str(sum(theirs.burst_sizes.values()))
    )
    table.add_row(
        "words per message", _summary(mine.words_per_message), _summary(theirs.words_per_message)
    )
    table.add_row(
        "chars per message", _summary(mine.chars_per_message), _summary(theirs.chars_per_message)
    )
    table.add_row("burst sizes", _bursts(mine), _bursts(theirs))
    for (label, value), (_, other) in zip(_rates(mine), _rates(theirs), strict=True):
        table.add_row(label, value, other)
    return table


def run_show(args: argparse.Namespace) -> int:
    """Print one persona's details and statistics."""
    console = CliConsole(highlight=False)
    path = locate_persona(args.persona)
    persona = load_persona(path)
    info = persona.info
    turns = sum(len(conversation.turns) for conversation in persona.conversations)
    console.print(f"[bold]{shown(info.name)}[/]  [dim]{shown(str(path))}[/]")
    console.print(
        f"source {shown(info.source)} | licence {shown(info.license)} | "
        f"scrubbed {'yes' if info.scrubbed else 'no'}"
        + (f" | built {info.created:%Y-%m-%d}" if info.created else "")
    )
    console.print(f"[dim]{shown(info.attribution)}[/]")
    if info.description:
        console.print(shown(info.description))
    held = len(info.held_out)
    console.print(
        f"History: {len(persona.conversations)} conversations, {turns} turns, "
        f"{len(persona.messages)} messages"
        + (f"; {held} conversations held out of every prompt." if held else ".")
    )
    console.print(stats_table(persona))
    if info.timing:
        profile = TimingProfile.model_validate(info.timing)
        console.print(facts_table("Timing profile", timing_summary(profile)))
    else:
        console.print("[dim]No timing profile fitted.[/]")
    if args.last > 0:
        console.rule(f"last {args.last} messages")
        print_conversation(
            console, persona.messages[-args.last :], user_label="partner", bot_label=info.name
        )
    return 0


def with_timing(persona: Persona) -> Persona:
    """``persona`` with a timing profile fitted from its history, unless it has one."""
    if persona.info.timing is not None:
        return persona
    timing = fit_timing_profile(persona).model_dump(mode="json")
    return persona.model_copy(update={"info": persona.info.model_copy(update={"timing": timing})})


def run_hold_out(args: argparse.Namespace) -> int:
    """``sdtt persona hold-out NAME --count K``: write the persona holding chats out."""
    from sdtt.personas.held_out import hold_out

    source = load_persona(locate_persona(args.persona))
    persona = hold_out(source, args.count, seed=args.seed, min_turns=args.min_turns, name=args.name)
    path = output_folder(args.out) / f"{persona.name}{SUFFIX}"
    if path.exists() and not args.force:
        raise InputError(
            "would overwrite an existing persona file.",
            path=path,
            hint="Pass --force to replace it, or --name to choose another name.",
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    save_persona(persona, path)
    console = CliConsole(highlight=False)
    held = persona.held_out_conversations
    turns = sum(len(conversation.turns) for conversation in held)
    console.print(
        f"{shown(str(path))}: {len(held)} of {len(persona.conversations)} conversations "
        f"({turns} turns) held out of every prompt."
    )
    console.print(
        f"Run the bot as persona {shown(persona.name)!r} and build the questionnaire with "
        '--human persona (study spec: \\[questionnaire] human = "persona").'
    )
    return 0


def _other_person(path: Path, *, early: bool = False) -> InputError:
    # Before parsing, only the export and --me as typed are known: a --me spelled
    # otherwise than at the first import cannot be told from another person.
    what = (
        "holds another person's persona (or this person's, imported from another export "
        "or with --me spelled otherwise)"
        if early
        else "holds another person's persona"
    )
    return InputError(
        f"{what}; --force replaces a persona only with the same person imported again "
        "(the same export, and --me spelled as at the first import).",
        path=path,
        hint="Pass --name to give this person a file of its own, or --out to write elsewhere.",
    )


def _stored_person(path: Path) -> str | None:
    """Who the persona file at ``path`` was imported for; ``None`` for a damaged file or
    one not imported from a chat export (``--force`` may replace those)."""
    try:
        person = read_persona_info(path).extra.get("person")
    except InputError:
        return None
    return person if isinstance(person, str) else None


def _refuse_other_person(person: object, path: Path) -> None:
    """``--force`` replaces a persona with a new import of the same person (``person``,
    the new one's key), never another's."""
    old = _stored_person(path)
    if old is not None and person is not None and old != person:
        raise _other_person(path)


def _refuse_targets(named: list[tuple[Path, object]], force: bool) -> None:
    """Refuse to write the persona files ``named`` (each with its person's key) over
    existing ones without ``force``, or over another person's."""
    existing = [path for path, _ in named if path.exists()]
    if existing and not force:
        raise InputError(
            f"would overwrite {', '.join(map(str, existing))}.",
            hint="Pass --force to replace them, or --out to write elsewhere.",
        )
    for path, person in named:
        if path.exists():
            _refuse_other_person(person, path)


def _refuse_before_reading(args: argparse.Namespace, out: Path) -> None:
    """Refuse a ``--name`` target that cannot be written before the export is parsed: a
    long export must not be read and scrubbed for minutes only to be refused.

    Without ``--force`` an existing file is refused; with it, a file of another person
    (its stored person key is not the one of this export and ``--me``: hashing the export
    is all that takes). The check after building stays for the names only known then.
    """
    from sdtt.personas.importers import CORPUS_FORMATS, get_importer
    from sdtt.personas.importers.build import person_key
    from sdtt.personas.importers.file_importer import FileImporter

    name = getattr(args, "name", None)
    if args.format in CORPUS_FORMATS or not isinstance(name, str) or not name:
        return
    path = out / f"{name}{SUFFIX}"
    if not path.exists():
        return
    if not args.force:
        raise InputError(
            f"would overwrite {path}.",
            hint="Pass --force to replace them, or --out to write elsewhere.",
        )
    old = _stored_person(path)
    if old is None:
        return
    importer = get_importer(args.format)
    assert isinstance(importer, FileImporter)
    digest = importer.export_digest(Path(args.file))
    if digest is not None and person_key(digest, args.me) != old:
        raise _other_person(path, early=True)


def _imported_table(fmt: str, rows: list[tuple[str, int, int, int, Path]]) -> Table:
    table = Table(title=f"Imported from {fmt}")
    table.add_column("name", style="bold")
    table.add_column("conversations", justify="right")
    table.add_column("turns", justify="right")
    table.add_column("messages", justify="right")
    table.add_column("file", style="dim")
    for name, conversations, turns, messages, path in rows:
        table.add_row(shown(name), str(conversations), str(turns), str(messages), shown(str(path)))
    return table


def _import_corpus(args: argparse.Namespace, out: Path) -> list[tuple[str, int, int, int, Path]]:
    from sdtt.commands.persona_import import build_personas

    console = CliConsole(highlight=False)
    with console.status(f"building personas from {args.format}..."):
        personas = build_personas(args)
    if not personas:
        raise InputError(f"the {args.format} source yielded no persona.")
    personas = [with_timing(persona) for persona in personas]
    targets = [out / f"{persona.name}{SUFFIX}" for persona in personas]
    _refuse_targets(
        [
            (path, persona.info.extra.get("person"))
            for persona, path in zip(personas, targets, strict=True)
        ],
        args.force,
    )
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for persona, path in zip(personas, targets, strict=True):
        save_persona(persona, path)
        turns = sum(len(conversation.turns) for conversation in persona.conversations)
        rows.append((persona.name, len(persona.conversations), turns, len(persona.messages), path))
    return rows


def _import_file(args: argparse.Namespace, out: Path) -> list[tuple[str, int, int, int, Path]]:
    from sdtt.commands.persona_import import prepare_import, report_import

    console = CliConsole(highlight=False)
    with console.status(f"building personas from {args.format}..."):
        prepared = prepare_import(args)
        target = out / f"{prepared.name}{SUFFIX}"
        _refuse_targets([(target, prepared.person)], args.force)
        written = prepared.write(target)
    report_import(written, args)
    return [(written.info.name, written.conversations, written.turns, written.messages, target)]


def run_import(args: argparse.Namespace) -> int:
    """Build personas with the chosen importer and write one file each."""
    from sdtt.personas.importers import CORPUS_FORMATS

    console = CliConsole(highlight=False)
    out: Path = output_folder(args.out)
    _refuse_before_reading(args, out)
    write = _import_corpus if args.format in CORPUS_FORMATS else _import_file
    rows = write(args, out)
    console.print(_imported_table(args.format, rows))
    # The hint must work as printed: by name when that finds this file (./personas/),
    # else by its path.
    name, *_, path = rows[0]
    try:
        found_by_name = locate_persona(name).resolve() == path.resolve()
    except InputError:
        found_by_name = False
    target = name if found_by_name else shlex.quote(str(path))
    console.print(f"See one with: sdtt persona show {shown(target)}")
    return 0
