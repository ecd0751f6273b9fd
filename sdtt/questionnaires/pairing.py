"""Pairing: a bot conversation and a human-human one on the same topic, cut to X turns.

Sources are named as in the study spec: a transcript file (every conversation in it), one
conversation in a file (``file#id``), ``corpus`` for a real conversation from the
chitchat corpus on the bot conversation's topic, or ``persona`` for one of the imitated
person's own conversations that its persona holds out of every prompt
(:mod:`sdtt.personas.held_out`), on the bot's topic where the chats have topics.
Problems (different topics, a conversation shorter than X, no human conversation to
compare with) are collected as :class:`PairProblem` values for the caller to report;
nothing is used silently.

Only complete turns count: a trailing turn in which User B has not answered yet is left
out of both conversations alike, so neither chat ends on an unanswered message.

Modes match: a ping-pong bot conversation is compared with the ping-pong version of a
human conversation (first message of each run kept, as the paper does; recorded in the
human transcript's meta), never with a burst one; a burst bot conversation is never
compared with a ping-pong human one (a ``mode`` problem, or not drawn from a pool).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from sdtt.dialogue.condition import chat_mode
from sdtt.dialogue.message import Message, Transcript, Turn, segment_turns
from sdtt.dialogue.pingpong import transcript_to_pingpong
from sdtt.dialogue.store import read_transcripts
from sdtt.dialogue.turns import flatten_turns
from sdtt.errors import InputError
from sdtt.personas.persona import Persona
from sdtt.questionnaires.comparable import differences
from sdtt.tasks.questionnaire import SourceInfo
from sdtt.tasks.study import Timestamps

CORPUS = "corpus"
PERSONA = "persona"
HUMAN_SIDES = {
    "persona": "the imitated person's own held-out chats",
    "corpus": "other people's chats (chitchat corpus)",
    "file": "chats from a transcript file",
}
"""The kinds of human side a pair can have, as reports name them."""

ProblemKind = Literal["topic", "short", "unmatched", "mode", "comparable"]


@dataclass(frozen=True)
class SourceRef:
    """Where conversations come from: a file, one conversation in a file, or the corpus."""

    text: str
    path: Path | None = None
    conversation: str | None = None

    @property
    def is_corpus(self) -> bool:
        """True for the real chat corpus."""
        return self.path is None and self.text == CORPUS

    @property
    def is_persona(self) -> bool:
        """True for the persona's own held-out conversations."""
        return self.path is None and self.text == PERSONA


def parse_source(text: str, base: Path | None = None) -> SourceRef:
    """Read ``corpus``, ``FILE`` or ``FILE#ID`` (relative paths resolved against ``base``)."""
    text = text.strip()
    if text.lower() in (CORPUS, PERSONA):
        return SourceRef(text=text.lower())

    def resolve(raw: str) -> Path:
        path = Path(raw).expanduser()
        return path if path.is_absolute() or base is None else base / path

    whole = resolve(text)
    if whole.exists() or "#" not in text:
        return SourceRef(text=text, path=whole)
    file_part, conversation = text.rsplit("#", 1)
    return SourceRef(text=text, path=resolve(file_part), conversation=conversation or None)


def load_source(ref: SourceRef) -> list[Transcript]:
    """The conversations a file reference names (not for the corpus)."""
    if ref.path is None:
        raise ValueError("the corpus is not a file")
    transcripts = read_transcripts(ref.path)
    if ref.conversation is None:
        if not transcripts:
            raise InputError("holds no conversation.", path=ref.path)
        return transcripts
    chosen = [t for t in transcripts if t.id == ref.conversation]
    if not chosen:
        known = ", ".join(repr(t.id) for t in transcripts[:8])
        more = " ..." if len(transcripts) > 8 else ""
        raise InputError(
            f"has no conversation {ref.conversation!r}.",
            path=ref.path,
            hint=f"It has {known}{more}.",
        )
    return chosen


def normalise_topic(topic: str | None) -> str | None:
    """A topic for comparison: case, spacing and closing punctuation ignored."""
    if topic is None:
        return None
    folded = " ".join(topic.casefold().split())
    return re.sub(r"[\s.?!]+$", "", folded) or None


def same_topic(first: str | None, second: str | None) -> bool:
    """True when both topics are set and equal after normalising."""
    a, b = normalise_topic(first), normalise_topic(second)
    return a is not None and a == b


def complete_turns(messages: Sequence[Message]) -> list[Turn]:
    """The burst turns, without a trailing turn that User B has not answered."""
    turns = segment_turns(messages)
    if turns and not turns[-1].is_complete:
        turns.pop()
    return turns


def cut_last_turns(messages: Sequence[Message], x_turns: int) -> list[Message] | None:
    """The messages of the last ``x_turns`` complete turns, or None when there are fewer."""
    turns = complete_turns(messages)
    if len(turns) < x_turns:
        return None
    return flatten_turns(turns[-x_turns:])


def cut_turns(messages: Sequence[Message], first: int, last: int) -> list[Message] | None:
    """The messages of complete turns ``first`` to ``last`` (1-based, both included), or
    None when there are fewer than ``last``."""
    turns = complete_turns(messages)
    if len(turns) < last:
        return None
    return flatten_turns(turns[first - 1 : last])


def cut_first_turns(messages: Sequence[Message], k_turns: int) -> list[Message] | None:
    """The messages of the first ``k_turns`` complete turns, or None when there are fewer."""
    turns = complete_turns(messages)
    if len(turns) < k_turns:
        return None
    return flatten_turns(turns[:k_turns])


@dataclass(frozen=True)
class PairProblem:
    """Something wrong with a pair, for the researcher to see."""

    kind: ProblemKind
    message: str
    x_turns: int | None = None


@dataclass
class Pairing:
    """A bot conversation matched with a human-human conversation."""

    bot: Transcript
    bot_path: str | None
    human: Transcript
    human_path: str | None
    problems: list[PairProblem] = field(default_factory=list)


class HumanPool(Protocol):
    """Gives human-human conversations on a topic."""

    def candidates(self, topic: str | None, min_turns: int, bot: Transcript) -> list[Transcript]:
        """Conversations on ``topic`` (None: any) with ``min_turns`` complete turns or more."""
        ...

    @property
    def topic_free(self) -> bool:
        """True when a bot chat without a topic may still be paired (its chats have none)."""
        ...


class FilePool:
    """Human conversations from a transcript file."""

    topic_free = False

    def __init__(self, transcripts: Sequence[Transcript]) -> None:
        self.transcripts = list(transcripts)

    def candidates(self, topic: str | None, min_turns: int, bot: Transcript) -> list[Transcript]:
        """Conversations of the file on ``topic`` (any topic for None), long enough."""
        return [
            t
            for t in self.transcripts
            if (topic is None or same_topic(t.topic, topic))
            and len(complete_turns(t.messages)) >= min_turns
        ]


class CorpusLike(Protocol):
    """What pairing needs of :class:`sdtt.personas.corpus.Corpus`."""

    def conversations(
        self,
        topic: str | None = None,
        *,
        min_turns: int = 0,
        persona_sender: str | None = None,
        exclude_senders: Collection[str] = (),
    ) -> list[Transcript]:
        """Cleaned conversations on ``topic`` with at least ``min_turns`` turns."""
        ...

    def topics(self) -> list[str]:
        """The corpus's topics."""
        ...

    def resolve_sender(self, prefix: str) -> str:
        """The full sender id that ``prefix`` names."""
        ...


class CorpusPool:
    """Human conversations from the chitchat corpus (loaded on first use)."""

    topic_free = False

    def __init__(self, loader: Callable[[], CorpusLike] | None = None) -> None:
        self._loader = loader
        self._corpus: CorpusLike | None = None

    def corpus(self) -> CorpusLike:
        """The loaded corpus."""
        if self._corpus is None:
            if self._loader is not None:
                self._corpus = self._loader()
            else:
                from sdtt.personas.corpus import load_corpus

                self._corpus = load_corpus()
        return self._corpus

    def candidates(self, topic: str | None, min_turns: int, bot: Transcript) -> list[Transcript]:
        """Corpus conversations on ``topic``, never from the persona the bot plays."""
        corpus = self.corpus()
        found = corpus.conversations(
            topic, min_turns=min_turns, exclude_senders=persona_senders(corpus, bot)
        )
        return [
            t
            for t in found
            if (topic is None or same_topic(t.topic, topic))
            and len(complete_turns(t.messages)) >= min_turns
        ]

    def topics(self) -> list[str]:
        """The corpus's topics."""
        return self.corpus().topics()


HELD_OUT_META = "held_out_from"
"""The meta key of a human chat drawn from a persona's held-out chats: the persona."""


class PersonaPool:
    """The imitated person's own conversations that its persona holds out of every prompt.

    The bot chat's condition names the persona; its ``held_out`` conversations are the
    pool (never in the bot's prompt, see :func:`sdtt.personas.prompt.history_messages`).
    A chat on the bot's topic is preferred; when none is left (chat exports have no
    topics), any of them fits, as the topics do not allow a match.
    """

    topic_free = True

    def __init__(self, loader: Callable[[str], Persona] | None = None) -> None:
        self._loader = loader
        self._held: dict[str, list[Transcript]] = {}

    def held_out(self, bot: Transcript) -> list[Transcript]:
        """The held-out chats of the persona ``bot`` was run as (an error if none)."""
        name = bot.condition.persona if bot.condition else None
        if not name:
            raise InputError(
                f"bot conversation {bot.id!r} names no persona, so human = 'persona' has "
                "no chats of the imitated person to show.",
                hint="Use human = 'corpus' or a transcript file for it.",
            )
        if name not in self._held:
            if self._loader is not None:
                persona = self._loader(name)
            else:
                from sdtt.personas.store import find_persona

                persona = find_persona(name)
            if not persona.info.held_out:
                raise InputError(
                    f"persona {name!r} holds out none of its conversations, so human = "
                    "'persona' has none to show that is not in the bot's prompt.",
                    hint=f"Run 'sdtt persona hold-out {name} --count K', run the bot chats "
                    "as the persona it writes, and build with those.",
                )
            self._held[name] = [
                conversation.model_copy(
                    update={
                        # Ids are the persona's own (conv-0001...): made unique per persona.
                        "id": f"{name}/{conversation.id}",
                        "meta": {**conversation.meta, HELD_OUT_META: name},
                    }
                )
                for conversation in persona.held_out_conversations
            ]
        return self._held[name]

    def candidates(self, topic: str | None, min_turns: int, bot: Transcript) -> list[Transcript]:
        """Held-out chats long enough: those on ``topic`` if any is; else all of them (the
        person's chats are few and need not share the bot's topic: such a pair gets no
        topic check, and the report counts it)."""
        long_enough = [
            t for t in self.held_out(bot) if len(complete_turns(t.messages)) >= min_turns
        ]
        on_topic = [t for t in long_enough if topic is not None and same_topic(t.topic, topic)]
        return on_topic or long_enough


def human_side(source: SourceInfo) -> str:
    """Which kind of human side (a key of :data:`HUMAN_SIDES`) a pair's human chat is."""
    if source.meta.get(HELD_OUT_META):
        return "persona"
    return "corpus" if source.path is None else "file"


def persona_senders(corpus: CorpusLike, bot: Transcript) -> list[str]:
    """Corpus sender ids of the persona a bot conversation imitates (to leave them out)."""
    persona = bot.condition.persona if bot.condition else None
    if not isinstance(persona, str) or not persona.startswith("chitchat-"):
        return []
    try:
        # "chitchat-32b20fa3", or a persona made from it ("chitchat-32b20fa3-held-out").
        return [corpus.resolve_sender(persona.removeprefix("chitchat-").split("-")[0])]
    except InputError:
        return []


def in_bot_mode(
    bot: Transcript, human: Transcript, *, drop_meaningless: bool = False
) -> Transcript:
    """``human`` as it is shown next to ``bot``: converted to ping-pong for a ping-pong bot
    conversation (``drop_meaningless`` also leaves out meaningless turns), else unchanged."""
    if chat_mode(bot.condition) != "pingpong":
        return human
    return transcript_to_pingpong(human, drop_meaningless=drop_meaningless)


def _mode_problem(label: str, bot: Transcript, human: Transcript) -> PairProblem | None:
    if chat_mode(bot.condition) == "burst" and chat_mode(human.condition) == "pingpong":
        return PairProblem(
            "mode",
            f"{label} is a burst chat but human conversation {human.id!r} is ping-pong; "
            "compare burst chats with burst chats (or run the bot with --mode pingpong).",
        )
    return None


def _fitting(found: Sequence[Transcript], bot: Transcript, used: set[str]) -> list[Transcript]:
    """Candidates not used yet whose mode may be shown next to ``bot``."""
    return [c for c in found if c.id not in used and _mode_problem("", bot, c) is None]


def _comparable_first(
    candidates: list[Transcript], bot: Transcript, turns: int, drop_meaningless: bool
) -> list[Transcript]:
    """The candidates best placed to be shown beside the bot's first ``turns`` turns:
    those that go on past turn ``turns`` (so the human window, at the same place as the
    bot's, stops short of the human chat's natural close, as the bot's live chat stops at
    a turn count and not at a goodbye) and whose turns 1..``turns`` look like the bot's
    (same turns, similar message count, see :mod:`~sdtt.questionnaires.comparable`);
    failing that, the comparable ones; failing that, all of them."""
    shown_bot = cut_turns(bot.messages, 1, turns)
    if shown_bot is None:
        return candidates
    good, longer = [], []
    for candidate in candidates:
        shown = in_bot_mode(bot, candidate, drop_meaningless=drop_meaningless)
        cut = cut_turns(shown.messages, 1, turns)
        if cut is not None and not differences(
            shown_bot,
            cut,
            bot_mode=chat_mode(bot.condition),
            human_mode=chat_mode(shown.condition),
            timestamps="hidden",
        ):
            good.append(candidate)
            if len(complete_turns(shown.messages)) > turns:
                longer.append(candidate)
    return longer or good or candidates


def match_pairs(
    bots: Sequence[tuple[Transcript, str | None]],
    human: SourceRef,
    *,
    pool: HumanPool,
    min_turns: int,
    rng: random.Random,
    allow_topic_mismatch: bool = False,
    used: set[str] | None = None,
    drop_meaningless: bool = False,
) -> tuple[list[Pairing], list[PairProblem]]:
    """Match each bot conversation with a human conversation on its topic.

    A human conversation is used at most once (``used`` holds the ids already taken).
    With an explicit ``file#id`` the pairing is fixed and only checked; otherwise a long
    enough conversation on the same topic (and of a mode that fits, see the module
    docstring) is drawn with ``rng``, preferring those whose shown turns look like the
    bot's (comparable message counts). The human conversation of a ping-pong bot
    conversation is converted to ping-pong (:func:`in_bot_mode`). Bot conversations that
    cannot be matched come back as problems.
    """
    used = set() if used is None else used
    pairings: list[Pairing] = []
    problems: list[PairProblem] = []
    human_path = None if human.path is None else str(human.path)
    for bot, bot_path in bots:
        label = f"bot conversation {bot.id!r}"
        if human.conversation is not None:
            (chosen,) = load_source(human)
            pairing = Pairing(
                bot,
                bot_path,
                in_bot_mode(bot, chosen, drop_meaningless=drop_meaningless),
                human_path,
            )
            mode = _mode_problem(label, bot, chosen)
            if mode is not None:
                pairing.problems.append(mode)
            if not same_topic(bot.topic, chosen.topic):
                pairing.problems.append(
                    PairProblem(
                        "topic",
                        f"{label} is about {bot.topic!r} but human conversation "
                        f"{chosen.id!r} is about {chosen.topic!r}.",
                    )
                )
            pairings.append(pairing)
            continue
        if bot.topic is None and not allow_topic_mismatch and not pool.topic_free:
            problems.append(
                PairProblem(
                    "unmatched",
                    f"{label} has no topic, so no human conversation on the same topic can "
                    "be picked; give the human one as FILE#ID.",
                )
            )
            continue
        candidates: list[Transcript] = []
        if bot.topic is not None:
            candidates = _fitting(pool.candidates(bot.topic, min_turns, bot), bot, used)
        if not candidates and pool.topic_free and bot.topic is not None:
            # The person's own chats on other topics (or none), as the pool allows.
            candidates = _fitting(pool.candidates(None, min_turns, bot), bot, used)
        mismatch = False
        if not candidates and allow_topic_mismatch:
            candidates = _fitting(pool.candidates(None, min_turns, bot), bot, used)
            mismatch = True
        if not candidates:
            where = (
                "the corpus"
                if human.is_corpus
                else "the held-out chats of the bot's persona"
                if human.is_persona
                else str(human.path)
            )
            problems.append(
                PairProblem(
                    "unmatched",
                    f"{label}: {where} {'hold' if human.is_persona else 'has'} no unused "
                    f"human conversation about {bot.topic!r} with at least {min_turns} "
                    "complete turns.",
                )
            )
            continue
        chosen = rng.choice(_comparable_first(candidates, bot, min_turns, drop_meaningless))
        used.add(chosen.id)
        pairing = Pairing(
            bot, bot_path, in_bot_mode(bot, chosen, drop_meaningless=drop_meaningless), human_path
        )
        if mismatch:
            about = (
                "has no topic"
                if bot.topic is None
                else f"is about {bot.topic!r}, but no unused conversation on it is long enough"
            )
            other = "no topic" if chosen.topic is None else f"topic {chosen.topic!r}"
            pairing.problems.append(
                PairProblem(
                    "topic",
                    f"{label} {about}; it is compared with human conversation "
                    f"{chosen.id!r} ({other}).",
                )
            )
        pairings.append(pairing)
    return pairings, problems


def check_length(pairing: Pairing, x_turns: int, through: int | None = None) -> PairProblem | None:
    """A problem when either conversation is too short for the window: the bot's needs
    ``x_turns`` complete turns, the human's ``through`` (the last turn shown, which the
    human window shares with the bot's; ``x_turns`` by default)."""
    through = x_turns if through is None else through
    needed = {"bot": x_turns, "human": through}
    short = [
        f"{role} conversation {t.id!r} has {len(complete_turns(t.messages))} complete "
        f"turns, fewer than {needed[role]}"
        for role, t in (("bot", pairing.bot), ("human", pairing.human))
        if len(complete_turns(t.messages)) < needed[role]
    ]
    if not short:
        return None
    why = (
        f" (the human window sits at the bot's place, turns {through - x_turns + 1}-{through})"
        if through != x_turns
        else ""
    )
    return PairProblem("short", f"X={x_turns}: " + " and ".join(short) + why + ".", x_turns=x_turns)


def comparability_problem(
    pairing: Pairing,
    x_turns: int,
    bot: Sequence[Message],
    human: Sequence[Message],
    timestamps: Timestamps,
) -> PairProblem | None:
    """A ``comparable`` problem naming the pair when its shown chats differ in a way that
    gives the answer away (see :mod:`~sdtt.questionnaires.comparable`)."""
    found = differences(
        bot,
        human,
        bot_mode=chat_mode(pairing.bot.condition),
        human_mode=chat_mode(pairing.human.condition),
        timestamps=timestamps,
    )
    if not found:
        return None
    return PairProblem(
        "comparable",
        f"X={x_turns}: bot conversation {pairing.bot.id!r} and human conversation "
        f"{pairing.human.id!r} are not comparable: " + "; ".join(found) + ".",
        x_turns=x_turns,
    )
