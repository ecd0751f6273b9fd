"""The steps behind the commands: spec and files in, study folder and exports out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sdtt.dialogue.message import Transcript
from sdtt.errors import InputError
from sdtt.personas.persona import Persona
from sdtt.questionnaires.build import BuildResult, build_questionnaire
from sdtt.questionnaires.exports import export_files
from sdtt.questionnaires.pairing import (
    CorpusLike,
    CorpusPool,
    FilePool,
    HumanPool,
    Pairing,
    PairProblem,
    PersonaPool,
    SourceRef,
    complete_turns,
    load_source,
    match_pairs,
    parse_source,
)
from sdtt.questionnaires.turn_totals import select_for_totals
from sdtt.seeds import seeded_rng
from sdtt.surveys.tool import ExportOptions
from sdtt.tasks.questionnaire import save_study
from sdtt.tasks.study import StudySpec

EXPORT_FOLDER = "export"


def _needed_turns(bot: Transcript, spec: StudySpec) -> int:
    """Turns the human conversation needs: as many as the last turn any window of the
    bot conversation shows, since the human window sits at the same place (the last X
    of L live turns are turns L-X+1..L of the human chat too).

    When no window fits, any length, so that a partner is found and the problem reported
    is the real one (the bot conversation is too short).
    """
    available = len(complete_turns(bot.messages))
    wanted = [available] if spec.total_turns else list(spec.x_turns)
    ends = [available for x in wanted if x <= available]
    ends += [k for k in spec.chunk_turns if k <= available]
    return max(ends) if ends else 1


def repeated_conversations_warning(result: BuildResult) -> str | None:
    """What to tell a researcher whose judges would read one conversation in several pairs.

    A conversation repeats when it is cut at several X (one pair per X), or when one human
    conversation is paired with several bot conversations. A judge design never gives one
    judge two pairs that share a conversation, so then there is nothing to say.
    """
    if result.questionnaire.forms:
        return None
    tests = [item for item in result.key.items.values() if item.kind == "test"]
    cuts: dict[str, set[int]] = {}
    partners: dict[str, set[str]] = {}
    for item in tests:
        for conversation in (item.bot.id, item.human.id):
            cuts.setdefault(conversation, set()).add(item.x_turns)
        partners.setdefault(item.human.id, set()).add(item.bot.id)
    uses = Counter(c for item in tests for c in (item.bot.id, item.human.id))
    repeated = sorted(c for c, n in uses.items() if n > 1)
    if not repeated:
        return None
    reasons = []
    several_x = [c for c in repeated if len(cuts[c]) > 1]
    shared = [c for c in repeated if len(partners.get(c, ())) > 1]
    if several_x:
        reasons.append(f"{len(several_x)} are cut at several X (one pair per X)")
    if shared:
        most = max(shared, key=lambda c: len(partners[c]))
        reasons.append(
            f"{len(shared)} human conversation(s) are each paired with several bot "
            f"conversations (e.g. {most!r} with {len(partners[most])})"
        )
    return (
        f"{len(repeated)} conversation(s) appear in more than one pair ("
        + "; ".join(reasons)
        + "), so every judge reads them more than once and can compare them. Give each "
        "judge a subset with --pairs-per-judge K (no judge then sees a conversation "
        "twice)"
        + (", or build one questionnaire per X (--x)" if several_x else "")
        + (", or pair each bot conversation with its own human conversation" if shared else "")
        + "."
    )


def build_study(
    spec: StudySpec,
    *,
    base: Path | None = None,
    allow_topic_mismatch: bool = False,
    skip_invalid: bool = False,
    corpus_loader: Callable[[], CorpusLike] | None = None,
    persona_loader: Callable[[str], Persona] | None = None,
) -> BuildResult:
    """Resolve the spec's pairs, match human conversations, and build the questionnaire.

    A pair's human side ``persona`` draws from the held-out chats of the persona each
    bot chat was run as (``persona_loader`` reads a persona by name; default: the store).
    """
    if not spec.pairs:
        raise InputError(
            "the study has no pairs.",
            hint="Give --bot FILE (and --human corpus|FILE[#ID]) or 'pairs' in the spec.",
        )
    corpus = CorpusPool(corpus_loader)
    held_out = PersonaPool(persona_loader)
    used_corpus = False
    used: set[str] = set()
    rng = seeded_rng(spec.seed, "match")
    pairings: list[Pairing] = []
    problems: list[PairProblem] = []
    sources: list[tuple[Transcript, str, SourceRef, HumanPool]] = []
    for number, pair in enumerate(spec.pairs, start=1):
        bot_ref = parse_source(pair.bot, base)
        if bot_ref.is_corpus:
            raise InputError(
                "the bot side must be a transcript file, not the corpus.",
                field=f"pairs[{number}].bot",
            )
        human_ref = parse_source(pair.human, base)
        pool: HumanPool
        if human_ref.is_corpus:
            pool = corpus
            used_corpus = True
        elif human_ref.is_persona:
            pool = held_out
        else:
            pool = FilePool(load_source(human_ref))
        sources += [(bot, str(bot_ref.path), human_ref, pool) for bot in load_source(bot_ref)]
    notes: list[str] = []
    if spec.total_turns:
        selection = select_for_totals([(s[0], s[1]) for s in sources], spec.total_turns)
        if selection.missing and not skip_invalid:
            raise InputError(
                selection.missing_message(spec.max_live_turns)
                + "\nRun them, add the transcripts to the study (--bot or 'pairs'), or "
                "pass --skip-invalid to build without them.",
                field="total_turns",
            )
        notes += selection.left_out
        notes += [f"missing: {cell.label(total)}" for cell, total in selection.missing]
        kept = {id(bot) for bot, _ in selection.kept}
        sources = [source for source in sources if id(source[0]) in kept]
    for bot, bot_path, human_ref, pool in sources:
        found, missing = match_pairs(
            [(bot, bot_path)],
            human_ref,
            pool=pool,
            min_turns=_needed_turns(bot, spec),
            rng=rng,
            allow_topic_mismatch=allow_topic_mismatch,
            used=used,
            drop_meaningless=spec.drop_meaningless,
        )
        pairings += found
        problems += missing
    topic_pool = corpus.topics() if used_corpus else []
    result = build_questionnaire(
        spec,
        pairings,
        problems=problems,
        topic_pool=topic_pool,
        allow_topic_mismatch=allow_topic_mismatch,
        skip_invalid=skip_invalid,
    )
    result.notes += notes
    result.key.problems += notes
    summary = conversion_summary(pairings)
    if summary is not None:
        result.notes = [*result.notes, summary]
    warning = repeated_conversations_warning(result)
    if warning is not None:
        result.warnings.append(warning)
    return result


def conversion_summary(pairings: Sequence[Pairing]) -> str | None:
    """What converting human chats to ping-pong left out, in one line (None if nothing
    was converted)."""
    converted = [p.human.meta for p in pairings if "pingpong_removed_messages" in p.human.meta]
    if not converted:
        return None
    removed = sum(int(meta.get("pingpong_removed_messages", 0)) for meta in converted)
    text = (
        f"{len(converted)} human conversation(s) converted to ping-pong for ping-pong bot "
        f"chats: {removed} later message(s) of runs left out"
    )
    if any("pingpong_filtered_turns" in meta for meta in converted):
        filtered = sum(int(meta.get("pingpong_filtered_turns", 0)) for meta in converted)
        text += f", {filtered} meaningless turn(s) filtered"
    return text + "."


@dataclass
class DemoQuestionnaire:
    """What the demo's questionnaire stage produced."""

    folder: Path
    files: list[Path]
    x_turns: int
    notes: list[str] = field(default_factory=list)


def build_demo_questionnaire(
    bot: Transcript,
    out_dir: str | Path,
    *,
    seed: int = 7,
    corpus_loader: Callable[[], CorpusLike] | None = None,
    formats: Sequence[str] = ("surveyjs", "html"),
) -> DemoQuestionnaire:
    """A small study from one bot conversation and a real corpus conversation.

    X is 3, or fewer when the bot conversation is shorter (said in the notes). The human
    conversation is from the corpus on the bot conversation's topic, or on any topic when
    that is impossible (also said in the notes). One catch pair is added. Writes the study
    files and the chosen exports under ``out_dir``.
    """
    available = len(complete_turns(bot.messages))
    if available == 0:
        raise InputError(
            f"conversation {bot.id!r} has no complete turn, so it cannot be judged.",
            hint="It needs at least one user message followed by a reply.",
        )
    x = min(3, available)
    notes = [] if x == 3 else [f"the bot conversation has {available} complete turn(s): X={x}"]
    spec = StudySpec(name="demo", seed=seed, x_turns=[x], catch_pairs=1)
    pool = CorpusPool(corpus_loader)
    found, missing = match_pairs(
        [(bot, None)],
        parse_source("corpus"),
        pool=pool,
        min_turns=x,
        rng=seeded_rng(seed, "match"),
        allow_topic_mismatch=True,
    )
    result = build_questionnaire(
        spec,
        found,
        problems=missing,
        topic_pool=pool.topics(),
        allow_topic_mismatch=True,
    )
    folder = Path(out_dir)
    files = save_study(folder, result.questionnaire, result.key)
    written = export_files(
        result.questionnaire, list(formats), folder / EXPORT_FOLDER, ExportOptions()
    )
    return DemoQuestionnaire(
        folder=folder,
        files=[*files, *written.values()],
        x_turns=x,
        notes=notes + result.notes + result.warnings,
    )
