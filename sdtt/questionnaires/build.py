"""Building a questionnaire and its answer key from a study spec and matched pairs.

Pure: conversations in, a :class:`Questionnaire` and an :class:`AnswerKey` out. All
randomness (ids, which chat is the bot's, pair order, topic options) comes from the
spec's seed, through separate generators so that changing one thing (say, adding a
demographic question) does not reshuffle the others.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from sdtt.dialogue.message import Message, Transcript
from sdtt.dialogue.shown import View
from sdtt.dialogue.turn_index import pseudo_turns_of, total_turns
from sdtt.errors import InputError
from sdtt.questionnaires.catch_pairs import CATCH_PAIRS, catch_transcripts
from sdtt.questionnaires.leaks import questionnaire_leaks, source_terms, unique_terms
from sdtt.questionnaires.pairing import (
    HELD_OUT_META,
    Pairing,
    PairProblem,
    check_length,
    comparability_problem,
    complete_turns,
    cut_last_turns,
    cut_turns,
    normalise_topic,
    same_topic,
)
from sdtt.seeds import seeded_rng
from sdtt.tasks.design import balanced_forms
from sdtt.tasks.ids import OpaqueIds
from sdtt.tasks.layout import number_lines, pair_start, plain_label
from sdtt.tasks.questionnaire import (
    JUDGEMENT_CHOICES,
    STRATEGY_NAME,
    TOPIC_SUFFIX,
    TOPIC_TEXT,
    USER_A_CLAIM,
    AnswerKey,
    Choice,
    Form,
    KeyItem,
    PairItem,
    Question,
    Questionnaire,
    SourceInfo,
    judgement_text,
)
from sdtt.tasks.study import (
    DEFAULT_INTRO,
    RESERVED_NAMES,
    SIMULATED_INTRO,
    TOPIC_SENTENCE,
    StudySpec,
)

DISTRACTOR_TOPICS: tuple[str, ...] = (
    "What is the best way to spend a rainy day?",
    "Which board game or card game do you like most?",
    "What was your first job like?",
    "Would you rather live in a city or in the countryside?",
    "What is a skill you would like to learn?",
    "What is your favourite season, and why?",
    "What are you reading or watching at the moment?",
    "Which sport do you enjoy watching or playing?",
    "What is the worst haircut you have ever had?",
    "Cats or dogs?",
    "What would your perfect breakfast be?",
    "What is a small thing that makes you happy?",
    "Which app on your phone do you use the most?",
    "What is the strangest dream you remember?",
    "What is a tradition in your family?",
    "Where did you grow up?",
)
"""Everyday topics (written for sdtt) that fill topic checks when a study has few topics."""


NEW_PAIR = ""
"""``pair`` value that makes an item the first view of a new pair (its id names the pair)."""


@dataclass
class BuildResult:
    """A built study, with everything the researcher should be told."""

    questionnaire: Questionnaire
    key: AnswerKey
    notes: list[str] = field(default_factory=list)
    """Problems that were allowed (pairs skipped or used despite them)."""
    warnings: list[str] = field(default_factory=list)
    windows: list[str] = field(default_factory=list)
    """How the shown turns of each kind of pair were chosen, one line each."""


def window_lines(key: AnswerKey) -> list[str]:
    """One line per window of the test pairs: which turns of the bot's live chat and of
    the human chat are shown, and how many pairs show them."""
    counts: dict[tuple[str, int, int, int, int], int] = {}
    for item in key.items.values():
        if item.kind != "test" or item.is_mirror:
            continue
        window = (
            item.view,
            item.live_from or 0,
            item.live_to or 0,
            item.human_from or 0,
            item.human_to or 0,
        )
        counts[window] = counts.get(window, 0) + 1
    lines = []
    for (view, live_from, live_to, human_from, human_to), n in sorted(counts.items()):
        place = "both from the opening" if live_from == human_from == 1 else "the same place"
        why = {"chunk": "the first turns", "whole": "the whole live chat"}.get(
            view, "the last live turns"
        )
        lines.append(
            f"{n} pair(s): the bot's live turns {live_from}-{live_to} ({why}) beside the "
            f"human chat's turns {human_from}-{human_to} ({place})"
        )
    return lines


def _closing_warning(entries: Sequence[_Entry]) -> str | None:
    """A warning naming human windows that run to their chat's end: the human side may
    say goodbye there, which a bot's live chat, stopped at a turn count, never does."""
    ending = sorted(
        {
            entry.human.id
            for entry in entries
            if entry.kind == "test"
            and entry.human_window[1] >= len(complete_turns(entry.human.messages))
        }
    )
    if not ending:
        return None
    named = ", ".join(repr(c) for c in ending[:5]) + (" ..." if len(ending) > 5 else "")
    return (
        f"{len(ending)} human conversation(s) are shown up to their last turn ({named}), "
        "so they may end in a goodbye that the bot's live chat, stopped at a turn count, "
        "lacks; pair them with longer human chats, or check the tells table's closings."
    )


def _interrogator(transcript: Transcript) -> str | None:
    return transcript.condition.interrogator if transcript.condition else None


def _simulated(transcript: Transcript) -> bool:
    """True when a program (a model or a script) plays User A in ``transcript``."""
    return _interrogator(transcript) not in (None, "human")


def _intro(spec: StudySpec, user_a_person: bool) -> str:
    """The instructions judges read: the default says User A is a person only when that
    is true, and drops the topic sentence without a topic question; a researcher's own
    text that calls User A a person while a program plays it is refused."""
    if spec.intro == DEFAULT_INTRO:
        intro = DEFAULT_INTRO if user_a_person else SIMULATED_INTRO
        return intro if spec.topic_check else intro.replace(TOPIC_SENTENCE, "")
    if not user_a_person and USER_A_CLAIM.search(spec.intro):
        raise InputError(
            "the instructions say User A is a person, but a program (a simulated "
            "interrogator) plays User A in some chats.",
            field="intro",
            hint="Reword the study spec's intro, or leave it out for the default, which says so.",
        )
    return spec.intro


def _simulated_warning(entries: Sequence[_Entry]) -> str | None:
    """A warning when bot chats with a simulated User A (a model or a script) are shown
    beside human-human chats: User A is then no person in one chat of the pair."""
    simulated = {
        entry.bot.id: str(_interrogator(entry.bot))
        for entry in entries
        if entry.kind == "test"
        and _interrogator(entry.bot) not in (None, "human")
        and _interrogator(entry.human) in (None, "human")
    }
    if not simulated:
        return None
    who = ", ".join(sorted(set(simulated.values())))
    return (
        f"{len(simulated)} bot chat(s) have a simulated User A ({who}) but are shown beside "
        "human-human chats: User A is a person in only one chat of each such pair, so User "
        "A's side can give the bot away (see side A of the tells table in 'sdtt report "
        "--study'); the report labels these conditions 'simulated User A', and the "
        "instructions and questions tell judges that a program plays User A in some chats. "
        "For a test where User A is a person in every chat, use live chats ('sdtt chat', "
        "'sdtt serve')."
    )


@dataclass
class _Entry:
    kind: Literal["test", "catch"]
    x_turns: int
    view: View
    live_from: int
    live_to: int
    pseudo_turns: int | None
    bot: Transcript
    bot_path: str | None
    human: Transcript
    human_path: str | None
    bot_messages: list[Message]
    human_messages: list[Message]
    notes: list[str]
    human_window: tuple[int, int]
    """First and last turn of the human conversation shown (1-based)."""


def _fatal_message(problems: Sequence[PairProblem]) -> str:
    lines = [f"  - {p.message}" for p in problems]
    hints = []
    if any(p.kind == "topic" for p in problems):
        hints.append("--allow-topic-mismatch uses such pairs anyway (and records it)")
    if any(p.kind != "topic" for p in problems):
        hints.append("--skip-invalid leaves unusable pairs out (and records it)")
    return (
        f"{len(problems)} pair problem(s):\n"
        + "\n".join(lines)
        + "\nFix the inputs, or: "
        + "; ".join(hints)
        + "."
    )


def _source(transcript: Transcript, path: str | None) -> SourceInfo:
    return SourceInfo(
        id=transcript.id,
        path=path,
        topic=transcript.topic,
        turns=len(complete_turns(transcript.messages)),
        condition=transcript.condition,
        meta=dict(transcript.meta),
    )


def _demographics(spec: StudySpec) -> list[Question]:
    return [
        Question(
            name=d.name,
            text=d.text,
            choices=None
            if d.choices is None
            else [Choice(value=f"C{i + 1}", label=plain_label(c)) for i, c in enumerate(d.choices)],
            required=d.required,
        )
        for d in spec.demographics
    ]


def _topic_question(
    pair_id: str, topic: str | None, pool: Sequence[str], options: int, rng: random.Random
) -> tuple[Question | None, str | None]:
    wanted = normalise_topic(topic)
    if topic is None or wanted is None:
        return None, None
    seen = {wanted}
    distractors: list[str] = []
    for candidate in pool:
        folded = normalise_topic(candidate)
        if folded is not None and folded not in seen:
            seen.add(folded)
            distractors.append(candidate)
    picked = rng.sample(distractors, min(options - 1, len(distractors)))
    labels = [topic, *picked]
    rng.shuffle(labels)
    choices = [Choice(value=f"T{i + 1}", label=plain_label(t)) for i, t in enumerate(labels)]
    right = choices[labels.index(topic)].value
    return Question(name=pair_id + TOPIC_SUFFIX, text=TOPIC_TEXT, choices=choices), right


def _views(spec: StudySpec, pseudo: int | None, live: int) -> list[tuple[View, int]]:
    """The (view, X) pairs one bot conversation gives under ``spec``.

    With ``total_turns``, the whole live chat when N + live turns is one of them (chats at
    other totals give nothing: the study did not ask for them); otherwise the last X turns
    for each X. Then the first k turns for each chunk length.
    """
    views: list[tuple[View, int]] = []
    if spec.total_turns:
        if pseudo is not None and pseudo + live in spec.total_turns and live > 0:
            views.append(("whole", live))
    else:
        views += [("last", x) for x in spec.x_turns]
    views += [("chunk", k) for k in spec.chunk_turns]
    return views


def _design_forms(
    spec: StudySpec,
    entries: Sequence[_Entry],
    positions: Sequence[Literal[1, 2]],
    add_item: Callable[[_Entry, Literal[1, 2], str | None], str],
) -> list[Form]:
    """Items for a judge design: two views of each test pair (the bot first, the bot
    second), one of each catch pair, and the forms that say who sees which."""
    k = spec.design.pairs_per_judge
    assert k is not None
    tests = [e for e in entries if e.kind == "test"]
    slots = balanced_forms(
        [frozenset((e.bot.id, e.human.id)) for e in tests],
        k,
        seeded_rng(spec.seed, "design"),
    )
    # Which view comes first (and names the pair) is drawn per pair, so that the order
    # of the views in a file a judge receives tells nothing about the bot's side.
    side_rng = seeded_rng(spec.seed, "view-order")
    sides: tuple[tuple[Literal[1, 2], Literal[1, 2]], ...] = ((1, 2), (2, 1))
    views: list[dict[int, str]] = []
    for entry in tests:
        first_side, second_side = side_rng.choice(sides)
        first = add_item(entry, first_side, NEW_PAIR)
        views.append({first_side: first, second_side: add_item(entry, second_side, first)})
    catches = [
        add_item(entry, position, None)
        for entry, position in zip(entries, positions, strict=True)
        if entry.kind == "catch"
    ]
    # Catch pairs go to every judge, at seeded places (the same in a form and its mirror).
    place_rng = seeded_rng(spec.seed, "catch-places")
    forms: list[Form] = []
    places: list[int] = []
    for number, form in enumerate(slots, start=1):
        shown = [views[slot.pair][slot.bot_position] for slot in form]
        if number % 2 == 1:
            places = sorted(place_rng.randint(0, len(shown)) for _ in catches)
        for offset, (place, catch) in enumerate(zip(places, catches, strict=True)):
            shown.insert(place + offset, catch)
        forms.append(Form(number=number, items=shown))
    return forms


def build_questionnaire(
    spec: StudySpec,
    pairings: Sequence[Pairing],
    *,
    problems: Sequence[PairProblem] = (),
    topic_pool: Sequence[str] = (),
    allow_topic_mismatch: bool = False,
    skip_invalid: bool = False,
) -> BuildResult:
    """Turn matched pairs into a questionnaire and its answer key.

    Each pairing gives one pair per X of the spec. ``problems`` are those found while
    matching (bot conversations without a partner). Topic mismatches are fatal unless
    ``allow_topic_mismatch``; pairs that are too short or unmatched are fatal unless
    ``skip_invalid``. Either way every problem ends up in the key and the result's notes.
    """
    spec.check()
    all_problems = list(problems)
    entries: list[_Entry] = []
    warnings: list[str] = []
    for pairing in pairings:
        all_problems += pairing.problems
        if any(p.kind != "topic" for p in pairing.problems):
            continue  # e.g. a mode mismatch: never shown, fatal unless skip_invalid
        topic_notes = [p.message for p in pairing.problems if p.kind == "topic"]
        pseudo, warning = pseudo_turns_of(pairing.bot.condition)
        if warning is not None:
            warnings.append(f"bot conversation {pairing.bot.id!r} {warning}.")
        live = len(complete_turns(pairing.bot.messages))
        for view, x in _views(spec, pseudo, live):
            # The human window sits where the bot's does: the same turn numbers of its
            # chat, so both start at an opening (turns 1..X) or both are as far in.
            live_to = x if view == "chunk" else live
            short = check_length(pairing, x, live_to)
            if short is not None:
                all_problems.append(short)
                continue
            bot_messages = cut_turns(pairing.bot.messages, live_to - x + 1, live_to)
            human_messages = cut_turns(pairing.human.messages, live_to - x + 1, live_to)
            assert bot_messages is not None and human_messages is not None
            unlike = comparability_problem(
                pairing, x, bot_messages, human_messages, spec.timestamps
            )
            if unlike is not None:
                all_problems.append(unlike)
                continue
            entries.append(
                _Entry(
                    "test",
                    x,
                    view,
                    live_to - x + 1,
                    live_to,
                    pseudo,
                    pairing.bot,
                    pairing.bot_path,
                    pairing.human,
                    pairing.human_path,
                    bot_messages,
                    human_messages,
                    list(topic_notes),
                    (live_to - x + 1, live_to),
                )
            )
    fatal = [
        p
        for p in all_problems
        if (p.kind == "topic" and not allow_topic_mismatch)
        or (p.kind != "topic" and not skip_invalid)
    ]
    if fatal:
        raise InputError(_fatal_message(fatal))
    if not entries:
        raise InputError(
            "no pair is left to put in the questionnaire.",
            hint="Give bot conversations with at least X complete turns (--bot, 'pairs' in "
            "the spec).",
        )
    if spec.catch_pairs > len(CATCH_PAIRS):
        raise InputError(
            f"sdtt has {len(CATCH_PAIRS)} catch pairs; {spec.catch_pairs} were asked for.",
            field="catch_pairs",
        )
    catch_x = min(e.x_turns for e in entries)
    for index in range(spec.catch_pairs):
        machine, person = catch_transcripts(index)
        x = min(catch_x, len(complete_turns(machine.messages)))
        bot_messages = cut_last_turns(machine.messages, x)
        human_messages = cut_last_turns(person.messages, x)
        assert bot_messages is not None and human_messages is not None
        person_turns = len(complete_turns(person.messages))
        entries.append(
            _Entry(
                "catch",
                x,
                "last",
                1,
                x,
                0,
                machine,
                None,
                person,
                None,
                bot_messages,
                human_messages,
                [],
                (person_turns - x + 1, person_turns),
            )
        )

    seed = spec.seed
    ids = OpaqueIds(
        seeded_rng(seed, "ids"),
        taken=[d.name for d in spec.demographics] + [STRATEGY_NAME, *RESERVED_NAMES],
    )
    questionnaire_id = ids.new("q")
    order_rng = seeded_rng(seed, "order")
    order_rng.shuffle(entries)
    positions: list[Literal[1, 2]] = [1 if i % 2 == 0 else 2 for i in range(len(entries))]
    seeded_rng(seed, "positions").shuffle(positions)
    topic_rng = seeded_rng(seed, "topics")
    clock_rng = seeded_rng(seed, "clock")
    study_topics = [e.bot.topic for e in entries if e.bot.topic is not None]
    pool = list(dict.fromkeys([*study_topics, *topic_pool, *DISTRACTOR_TOPICS]))

    items: list[PairItem] = []
    key_items: dict[str, KeyItem] = {}
    user_a_person = not any(_simulated(e.bot) or _simulated(e.human) for e in entries)
    intro = _intro(spec, user_a_person)

    def add_item(entry: _Entry, position: Literal[1, 2], pair: str | None = None) -> str:
        pair_id = ids.new("p")
        if pair == NEW_PAIR:
            pair = pair_id
        chats = (
            (entry.bot_messages, entry.human_messages)
            if position == 1
            else (entry.human_messages, entry.bot_messages)
        )
        topic_question, topic_value = (None, None)
        # A person's own held-out chat on another topic (a chat export has none): asking
        # the bot chat's topic would point at the bot, so the pair gets no topic check.
        off_topic = HELD_OUT_META in entry.human.meta and not same_topic(
            entry.bot.topic, entry.human.topic
        )
        if spec.topic_check and not off_topic:
            topic_question, topic_value = _topic_question(
                pair_id, entry.bot.topic, pool, spec.topic_options, topic_rng
            )
        items.append(
            PairItem(
                id=pair_id,
                chats=number_lines(chats, spec.timestamps, start=pair_start(clock_rng)),
                judgement=Question(
                    name=pair_id,
                    text=judgement_text(user_a_person),
                    choices=[Choice(value=v, label=label) for v, label in JUDGEMENT_CHOICES],
                ),
                topic=topic_question,
                pair=pair,
                user_a_person=user_a_person,
            )
        )
        key_items[pair_id] = KeyItem(
            pair_id=pair_id,
            kind=entry.kind,
            x_turns=entry.x_turns,
            view=entry.view,
            pseudo_turns=entry.pseudo_turns,
            live_from=entry.live_from,
            live_to=entry.live_to,
            human_from=entry.human_window[0],
            human_to=entry.human_window[1],
            total_turns=total_turns(entry.pseudo_turns, entry.live_to),
            bot_position=position,
            correct_choice="A" if position == 1 else "B",
            topic=entry.bot.topic,
            topic_value=topic_value,
            bot=_source(entry.bot, entry.bot_path),
            human=_source(entry.human, entry.human_path),
            notes=entry.notes,
            pair=pair,
        )
        return pair_id

    forms: list[Form] = []
    if spec.design.pairs_per_judge is None:
        for entry, position in zip(entries, positions, strict=True):
            add_item(entry, position)
    else:
        forms = _design_forms(spec, entries, positions, add_item)

    questionnaire = Questionnaire(
        id=questionnaire_id,
        title=spec.title,
        intro=intro,
        end_text=spec.end_text,
        demographics=_demographics(spec),
        items=items,
        strategy=None
        if not spec.strategy_question
        else Question(
            name=STRATEGY_NAME, text=spec.strategy_question, required=False, multiline=True
        ),
        randomise_order=spec.randomise_order,
        capture_prolific=spec.prolific.capture,
        completion_url=spec.prolific.completion_url,
        forms=forms,
    )
    terms: list[str] = []
    for entry in entries:
        if entry.kind == "test":
            bot = entry.bot
            terms += [*source_terms(bot.condition, bot.meta), bot.id, entry.human.id]
    terms = unique_terms(terms)
    errors, leak_warnings = questionnaire_leaks(questionnaire, terms)
    if errors:
        raise InputError(
            "the questionnaire would show judges what they must not see:\n"
            + "\n".join(f"  - {e}" for e in errors),
            hint="Change the title, instructions or questions in the study spec.",
        )
    allowed = [p.message for p in all_problems]
    key = AnswerKey(
        study=spec.name,
        questionnaire_id=questionnaire_id,
        questionnaire_sha256="",
        seed=seed,
        quality=spec.quality,
        items=key_items,
        sensitive_terms=terms,
        problems=allowed,
    )
    extra = [w for w in (_closing_warning(entries), _simulated_warning(entries)) if w]
    return BuildResult(
        questionnaire=questionnaire,
        key=key,
        notes=allowed,
        warnings=warnings + leak_warnings + extra,
        windows=window_lines(key),
    )
