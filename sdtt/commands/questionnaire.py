"""``sdtt questionnaire``: build a judge questionnaire, export it for survey tools, check files."""

from __future__ import annotations

import argparse
import shlex
from contextlib import suppress
from pathlib import Path

from sdtt.commands.console import CliConsole
from sdtt.errors import InputError
from sdtt.files import output_folder
from sdtt.lock import output_lock
from sdtt.questionnaires.exports import export_files, export_text
from sdtt.questionnaires.fielded import check_replaceable
from sdtt.questionnaires.leaks import find_terms
from sdtt.questionnaires.pipeline import EXPORT_FOLDER, build_study
from sdtt.redact import shown
from sdtt.surveys.check import check_file
from sdtt.surveys.tool import ExportOptions
from sdtt.surveys.tools import TOOLS, reveal_export, reveal_tools
from sdtt.tasks.design import repeat_share
from sdtt.tasks.questionnaire import (
    KEY_FILE,
    QUESTIONNAIRE_FILE,
    AnswerKey,
    KeyItem,
    Questionnaire,
    load_key,
    load_questionnaire,
    save_study,
)
from sdtt.tasks.study import PairSpec, StudySpec, load_study_spec


def spec_from_args(args: argparse.Namespace) -> tuple[StudySpec, Path | None]:
    """The study spec: the file's settings, overridden by flags."""
    spec = load_study_spec(args.spec) if args.spec is not None else StudySpec()
    base = args.spec.parent if args.spec is not None else None
    updates: dict[str, object] = {}
    if args.bot:
        humans = args.human or ["corpus"]
        if len(humans) not in (1, len(args.bot)):
            raise InputError(
                f"{len(args.human)} --human for {len(args.bot)} --bot.",
                hint="Give --human once (for all bots) or once per --bot.",
            )
        if len(humans) == 1:
            humans = humans * len(args.bot)
        updates["pairs"] = [PairSpec(bot=b, human=h) for b, h in zip(args.bot, humans, strict=True)]
        base = None
    elif args.human:
        raise InputError("--human needs --bot.")
    if args.x_turns is not None and (args.total_turns or spec.total_turns):
        raise InputError(
            "--x shows the last X turns, total_turns whole chats at N + X turns: choose one.",
            field="--x",
        )
    for name in ("x_turns", "total_turns", "chunk_turns", "seed", "name", "title", "timestamps"):
        if getattr(args, name) is not None:
            updates[name] = getattr(args, name)
    if args.catch is not None:
        updates["catch_pairs"] = args.catch
    if args.pairs_per_judge is not None:
        updates["design"] = spec.design.model_copy(update={"pairs_per_judge": args.pairs_per_judge})
    if args.no_topic_check:
        updates["topic_check"] = False
    if args.drop_meaningless:
        updates["drop_meaningless"] = True
    if args.completion_url:
        updates["prolific"] = spec.prolific.model_copy(
            update={"completion_url": args.completion_url}
        )
    merged = StudySpec.model_validate({**spec.model_dump(), **updates})
    merged.check()
    return merged, base


def run_build(args: argparse.Namespace) -> int:
    """Build a study folder."""
    console = CliConsole(highlight=False)
    spec, base = spec_from_args(args)
    check_replaceable(args.out, force=args.force)
    created = not Path(args.out).exists()
    output_folder(args.out)
    try:
        # Held for the whole build, so a second build is refused at once, not after
        # pairing for seconds.
        with output_lock(args.out, folder=True):
            check_replaceable(args.out, force=args.force)
            with console.status("pairing conversations..."):
                result = build_study(
                    spec,
                    base=base,
                    allow_topic_mismatch=args.allow_topic_mismatch,
                    skip_invalid=args.skip_invalid,
                )
            files = save_study(args.out, result.questionnaire, result.key)
    except BaseException:
        if created:  # a failed build leaves no empty study folder behind
            with suppress(OSError):
                Path(args.out).rmdir()
        raise
    items = result.key.items.values()
    # Under a judge design a pair has two views (bot first, bot second): count pairs.
    tests = [i for i in items if i.kind == "test" and not i.is_mirror]
    by_view: dict[tuple[str, str], int] = {}
    for item in tests:
        view = _shown(item)
        by_view[view] = by_view.get(view, 0) + 1
    per_x = ", ".join(f"{label}: {n}" for (_, label), n in sorted(by_view.items()))
    catches = sum(1 for i in items if i.kind == "catch")
    views = " (two views each: the bot first, the bot second)" if result.questionnaire.forms else ""
    console.print(
        f"[bold]{len(tests)} pair(s)[/]{views} ({per_x}) and {catches} catch pair(s), "
        f"{len(result.questionnaire.demographics)} demographic question(s), seed {spec.seed}."
    )
    forms = result.questionnaire.forms
    if forms:
        k = spec.design.pairs_per_judge
        console.print(
            f"judge design: {len(forms)} forms of {k} test pair(s) each (plus the catch "
            f"pairs); every round of {len(forms)} judges (one per form) judges each pair "
            f"{2 * (k or 0)} times, half with the bot's chat first. Recruit a multiple of "
            f"{len(forms)} judges."
        )
    for window in result.windows:
        console.print(f"[dim]window:[/] {shown(window)}")
    for note in result.notes:
        console.print(f"[yellow]note:[/] {shown(note)}")
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {shown(warning)}")
    console.print(f"wrote {shown(str(files[0]))}  (for judges)")
    console.print(f"wrote {shown(str(files[1]))}  [bold red](secret: never upload it)[/]")
    console.print(f"next: sdtt questionnaire export {shown(shlex.quote(str(args.out)))}")
    return 0


def _shown(item: KeyItem) -> tuple[str, str]:
    """A sort key and a label for what a pair shows, e.g. ``X=10 at turn 110``."""
    if item.view == "chunk":
        return (f"c{item.x_turns:06d}", f"first {item.x_turns}")
    if item.view == "whole":
        total = "?" if item.total_turns is None else item.total_turns
        return (f"b{item.total_turns or 0:06d}", f"turn {total} (X={item.x_turns})")
    return (f"a{item.x_turns:06d}", f"X={item.x_turns}")


def run_export(args: argparse.Namespace) -> int:
    """Export a study's questionnaire."""
    console = CliConsole(highlight=False)
    questionnaire = load_questionnaire(args.study)
    every = reveal_tools() if args.reveal else list(TOOLS)
    formats = every if not args.formats or "all" in args.formats else args.formats
    formats = list(dict.fromkeys(formats))
    options = ExportOptions(data_url=args.data_url, reveal=args.reveal)
    if args.reveal:
        for name in formats:
            reveal_export(name)  # refuses a tool without reveal mode before writing
    study_folder = args.study if args.study.is_dir() else args.study.parent
    key = load_key(study_folder, questionnaire) if (study_folder / KEY_FILE).exists() else None
    terms = key.sensitive_terms if key is not None else []
    # Scanned without the design: the single jsPsych page holds its chats scrambled.
    readable = questionnaire.model_copy(update={"forms": []})
    for name in formats:
        found = find_terms(export_text(readable, name, options), terms)
        if found:
            console.print(
                f"[yellow]warning:[/] the {name} export mentions {shown(', '.join(found))} "
                "(in chat text); judges will see it."
            )
    for name in formats:
        if key is not None and TOOLS[name].draws_blind:
            warning = single_file_repeats(questionnaire, key, TOOLS[name].filename)
            if warning is not None:
                console.print(f"[yellow]warning:[/] {shown(warning)}")
    out = output_folder(args.out or study_folder / EXPORT_FOLDER)
    written = export_files(questionnaire, formats, out, options)
    for name, path in written.items():
        console.print(f"{name:<11} {shown(str(path))}")
    if (out / QUESTIONNAIRE_FILE).exists() or (out / KEY_FILE).exists():
        console.print("[yellow]warning:[/] the export folder also holds study files.")
    return 0


def single_file_repeats(questionnaire: Questionnaire, key: AnswerKey, filename: str) -> str | None:
    """What to tell a researcher whose single-file design (``filename``, e.g. Qualtrics')
    would show judges a conversation twice (its randomizer draws each judge's pairs
    without knowing which share a conversation), or None when none would."""
    if not questionnaire.forms:
        return None
    pairs: dict[str, set[str]] = {}
    for item in key.items.values():
        if item.kind == "test" and item.pair is not None:
            pairs.setdefault(item.pair, set()).update((item.bot.id, item.human.id))
    catches = sum(1 for item in key.items.values() if item.kind == "catch")
    k = len(questionnaire.forms[0].items) - catches
    share = repeat_share([frozenset(p) for p in pairs.values()], k, key.seed)
    if share == 0:
        return None
    return (
        f"the single-file {filename} draws each judge's {k} pairs at random, and about "
        f"{share:.0%} of judges would then read one conversation in two pairs; field the "
        f"per-form files (form-NN/{filename}), which never do that."
    )


def run_check(args: argparse.Namespace) -> int:
    """Check survey files' structure: exit 1 when one has problems, 2 when one cannot be
    read or checked at all."""
    console = CliConsole(highlight=False)
    errors = CliConsole(stderr=True, highlight=False)
    failed = unreadable = 0
    for path in args.files:
        try:
            problems = check_file(path)
        except InputError as error:
            # One unreadable or unsupported file does not stop the others being checked.
            unreadable += 1
            errors.print(f"[bold red]error:[/] {shown(str(error))}")
            continue
        if problems:
            failed += 1
            console.print(f"[red]{shown(str(path))}: {len(problems)} problem(s)[/]")
            for problem in problems:
                console.print(f"  - {shown(problem)}")
        else:
            console.print(f"{shown(str(path))}: ok")
    return 2 if unreadable else 1 if failed else 0  # 2: the command line's user-error code
