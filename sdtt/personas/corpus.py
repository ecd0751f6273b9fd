"""The Chit-Chat Challenge corpus: real, timestamped human-human chats, cleaned.

The PyPI package ``chitchat-dataset`` (MIT) ships ``dataset.json``: 7,168 chats between
participants (mostly students), recorded in 2018 by the BYU Perception, Control and
Cognition lab. Its shape is ``{conversation_id: {"prompt", "start", "ratings",
"messages": [[{"text", "timestamp", "sender"}, ...], ...]}}``, where each inner list is
one sender's consecutive messages.

This module is the one place that reads it. Everything else asks :func:`load_corpus` for
a :class:`Corpus` and gets cleaned conversations as :class:`Transcript` objects:

- ``corpus.conversations(topic, min_turns=...)``: two-speaker conversations, the sender
  who wrote first as side ``"user"`` (or a chosen sender as ``"response"``);
- ``corpus.topics()``: the topic prompts the participants were given;
- ``corpus.senders(min_messages=...)``: who wrote how much;
- ``corpus.persona(sender_id)``: one sender's conversations as a :class:`Persona`.

**Timestamps.** The data mark message times with ``Z`` (UTC), and they are UTC: the daily
low of activity falls at 09-10 UTC, i.e. 3-4 am in Utah where the participants studied.
(The ``start`` field is not used: it sits exactly one Mountain-time UTC offset later than
the first message, 6 h in summer and 7 h after 4 November 2018, as if local time had been
converted to UTC twice.) Times are converted to US Mountain time with an explicit offset
(``-06:00`` or ``-07:00``), so prompts show the hours at which people really chatted. The
instant in time is unchanged.

**Cleaning** (see :class:`CleaningRules`; every dropped conversation is counted in
:attr:`Corpus.report`):

1. messages whose text is empty or only white space are removed;
2. conversations without exactly two senders are dropped (about 3,150 have one);
3. spam, found by three independent signs:
   - a burst of more than 100 messages (``max_burst``): in two-speaker conversations 99.99 %
     of bursts have at most 92 messages, and each of the 11 bursts above 100 is a flood of
     generated sentences, keyboard mashing, or an hours-long monologue after the partner
     left; the few bursts of 40-100 are mostly long stories and are kept;
   - a flood: a burst of at least 20 messages sent less than 1 s apart on average
     (``flood_*``); nobody types and sends twenty messages that fast;
   - repetition: more than 30 % of the messages, and at least 10 of them, repeat an
     earlier message of the same sender in the conversation (``repeat_*``), which is
     what "a", "k", "asdf" mashing looks like; excited chats with a few repeated
     "YES"/"NOOO" stay below it.

Of 7,168 conversations 4,003 remain (3,151 single-speaker, 14 spam). Some residue is left
that no simple rule catches, e.g. one conversation full of generated sentences sent at a
human pace.

**Speed** (2-core machine): :func:`load_corpus` reads and cleans in about 1.5 s, once per
process; :meth:`Corpus.conversations` builds transcripts on demand, about 0.05 s for one
topic's 80-150 conversations and 1.6 s for all of them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

from sdtt.dialogue.message import RESPONSE, USER, Message, Transcript
from sdtt.dialogue.turns import count_turns
from sdtt.errors import ConfigError, InputError
from sdtt.personas.persona import Persona, PersonaInfo

PACKAGE = "chitchat-dataset"
SOURCE_NAME = "chitchat"
LICENSE = "MIT"
HOME = "https://github.com/BYU-PCCL/chitchat-dataset"
CREDIT = (
    "Chit-Chat Challenge dataset, (c) 2019 Perception, Control and Cognition Lab, "
    "Brigham Young University (Myers, Etchart and Fulda, 'Conversational Scaffolding', "
    "2020), MIT licence"
)

MOUNTAIN_STANDARD = timezone(timedelta(hours=-7))
MOUNTAIN_DAYLIGHT = timezone(timedelta(hours=-6))


@dataclass(frozen=True)
class CleaningRules:
    """Thresholds that decide which conversations count as spam (module docstring)."""

    max_burst: int = 100
    """Most messages one sender may send in a row."""
    flood_min_messages: int = 20
    """Bursts at least this long are checked for flooding."""
    flood_min_gap: float = 1.0
    """Least average seconds between the messages of such a burst."""
    repeat_share: float = 0.3
    """Largest share of messages that may repeat an earlier one of the same sender..."""
    repeat_min: int = 10
    """...once at least this many do."""


class CorpusMessage(NamedTuple):
    """One message as the corpus holds it: sender id, text, time (Mountain time)."""

    sender: str
    text: str
    time: datetime


@dataclass(frozen=True)
class CorpusConversation:
    """One cleaned two-speaker conversation with its source details."""

    id: str
    topic: str | None
    senders: tuple[str, str]
    """Both sender ids, the one who wrote first first."""
    messages: tuple[CorpusMessage, ...]
    ratings: Any = None

    def transcript(self, persona_sender: str | None = None) -> Transcript:
        """The conversation as a transcript.

        ``persona_sender`` becomes side ``"response"``; without it the sender who wrote
        first is side ``"user"`` (A) and the other one ``"response"`` (B).
        """
        first, second = self.senders
        response = second if persona_sender is None else persona_sender
        if response not in self.senders:
            raise ValueError(f"sender {response!r} is not in conversation {self.id!r}")
        user = first if response == second else second
        messages = [
            Message(
                side=RESPONSE if message.sender == response else USER,
                text=message.text,
                time=message.time,
            )
            for message in self.messages
        ]
        meta: dict[str, Any] = {
            "source": SOURCE_NAME,
            "conversation_id": self.id,
            "senders": {"user": user, "response": response},
        }
        if self.ratings is not None:
            meta["ratings"] = self.ratings
        return Transcript(id=self.id, topic=self.topic, messages=messages, meta=meta)


@dataclass
class CleaningReport:
    """How many conversations and messages cleaning kept and dropped, by reason."""

    conversations: int = 0
    kept: int = 0
    empty_messages: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    """Reason -> conversations dropped: ``no_messages``, ``single_speaker``,
    ``many_speakers``, ``long_burst``, ``flood``, ``repetition``."""

    def describe(self) -> str:
        """One sentence for people: what was kept and why the rest was dropped."""
        reasons = ", ".join(
            f"{count:,} {reason.replace('_', ' ')}" for reason, count in self.dropped.most_common()
        )
        return (
            f"kept {self.kept:,} of {self.conversations:,} conversations"
            + (f" (dropped: {reasons})" if reasons else "")
            + f"; {self.empty_messages:,} empty messages removed."
        )


@cache
def _daylight_saving(year: int) -> tuple[datetime, datetime]:
    """When US daylight saving time starts and ends in Mountain time, in UTC."""
    march_first = datetime(year, 3, 1, tzinfo=UTC)
    november_first = datetime(year, 11, 1, tzinfo=UTC)
    # Second Sunday of March, 2:00 MST = 09:00 UTC; first Sunday of November, 2:00 MDT =
    # 08:00 UTC.
    start = march_first + timedelta(days=(6 - march_first.weekday()) % 7 + 7, hours=9)
    end = november_first + timedelta(days=(6 - november_first.weekday()) % 7, hours=8)
    return start, end


def mountain_time(utc: datetime) -> datetime:
    """``utc`` in US Mountain time (the US daylight-saving rules in force since 2007)."""
    start, end = _daylight_saving(utc.year)
    return utc.astimezone(MOUNTAIN_DAYLIGHT if start <= utc < end else MOUNTAIN_STANDARD)


def _utc_to_local(parsed: datetime) -> datetime:
    if parsed.tzinfo is None:
        # Every timestamp of chitchat-dataset 0.9.0 ends in Z; a bare one is read the same.
        parsed = parsed.replace(tzinfo=UTC)
    elif parsed.utcoffset():
        parsed = parsed.astimezone(UTC)
    if parsed.microsecond:
        parsed = parsed.replace(microsecond=0)
    return mountain_time(parsed)


def _parse_messages(conversation_id: str, raw: Any, path: Path) -> tuple[list[CorpusMessage], int]:
    """The conversation's messages in order, and how many empty ones were dropped."""
    messages: list[CorpusMessage] = []
    empty = 0
    try:
        # The fast path assumes the documented shape; anything else is located below.
        for turn in raw:
            for item in turn:
                text, sender = item["text"], item["sender"]
                time = _utc_to_local(datetime.fromisoformat(item["timestamp"]))
                if type(text) is not str or type(sender) is not str or not sender:
                    raise TypeError
                if not text.strip():
                    empty += 1
                    continue
                messages.append(CorpusMessage(sender, text, time))
    except (TypeError, ValueError, KeyError, AttributeError):
        _locate_problem(conversation_id, raw, path)
        raise
    return messages, empty


def _locate_problem(conversation_id: str, raw: Any, path: Path) -> None:
    """Raise an :class:`InputError` naming the first malformed part of a conversation."""
    where = f"{conversation_id}.messages"
    if not isinstance(raw, list):
        raise InputError("is missing or not a list of turns.", path=path, field=where)
    for turn_index, turn in enumerate(raw):
        if not isinstance(turn, list):
            raise InputError("is not a list.", path=path, field=f"{where}[{turn_index}]")
        for index, item in enumerate(turn):
            at = f"{where}[{turn_index}][{index}]"
            if not isinstance(item, dict):
                raise InputError("is not an object.", path=path, field=at)
            for key in ("text", "sender", "timestamp"):
                value = item.get(key)
                if not isinstance(value, str) or (key != "text" and not value):
                    raise InputError("is missing or not a string.", path=path, field=f"{at}.{key}")
            try:
                datetime.fromisoformat(item["timestamp"])
            except ValueError:
                raise InputError(
                    f"{item['timestamp']!r} is not an ISO 8601 time.",
                    path=path,
                    field=f"{at}.timestamp",
                ) from None
    raise InputError("is malformed.", path=path, field=where)


def _bursts(messages: list[CorpusMessage]) -> list[list[CorpusMessage]]:
    runs: list[list[CorpusMessage]] = []
    for message in messages:
        if runs and runs[-1][-1].sender == message.sender:
            runs[-1].append(message)
        else:
            runs.append([message])
    return runs


def spam_reason(messages: list[CorpusMessage], rules: CleaningRules) -> str | None:
    """Why these messages look like spam (``long_burst``, ``flood``, ``repetition``)."""
    for burst in _bursts(messages):
        if len(burst) > rules.max_burst:
            return "long_burst"
        if len(burst) >= rules.flood_min_messages:
            seconds = (burst[-1].time - burst[0].time).total_seconds()
            if seconds < rules.flood_min_gap * (len(burst) - 1):
                return "flood"
    seen: set[tuple[str, str]] = set()
    repeats = 0
    for message in messages:
        key = (message.sender, " ".join(message.text.lower().split()))
        if key in seen:
            repeats += 1
        seen.add(key)
    if repeats >= rules.repeat_min and repeats > rules.repeat_share * len(messages):
        return "repetition"
    return None


def _topic(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return " ".join(value.split()) or None


class Corpus:
    """The cleaned corpus: two-speaker human-human conversations, oldest first."""

    def __init__(
        self,
        conversations: Iterable[CorpusConversation],
        *,
        report: CleaningReport | None = None,
        rules: CleaningRules | None = None,
        version: str = "unknown",
    ) -> None:
        self._conversations = sorted(conversations, key=lambda c: (c.messages[0].time, c.id))
        self.report = report or CleaningReport(
            conversations=len(self._conversations), kept=len(self._conversations)
        )
        self.rules = rules or CleaningRules()
        self.version = version
        self._by_sender: dict[str, list[CorpusConversation]] = {}
        self._message_counts: Counter[str] = Counter()
        for conversation in self._conversations:
            for sender in conversation.senders:
                self._by_sender.setdefault(sender, []).append(conversation)
            self._message_counts.update(message.sender for message in conversation.messages)

    @classmethod
    def from_raw(
        cls,
        raw: Mapping[str, Any],
        *,
        rules: CleaningRules | None = None,
        path: str | Path = "dataset.json",
        version: str = "unknown",
    ) -> Corpus:
        """Clean a corpus given in the package's raw format (``dataset.json`` parsed)."""
        rules = rules or CleaningRules()
        path = Path(path)
        report = CleaningReport()
        kept: list[CorpusConversation] = []
        for conversation_id, item in raw.items():
            report.conversations += 1
            if not isinstance(item, dict):
                raise InputError("is not an object.", path=path, field=conversation_id)
            messages, empty = _parse_messages(conversation_id, item.get("messages"), path)
            report.empty_messages += empty
            senders = list(dict.fromkeys(message.sender for message in messages))
            reason: str | None
            if not messages:
                reason = "no_messages"
            elif len(senders) == 1:
                reason = "single_speaker"
            elif len(senders) > 2:
                reason = "many_speakers"
            else:
                reason = spam_reason(messages, rules)
            if reason is not None:
                report.dropped[reason] += 1
                continue
            kept.append(
                CorpusConversation(
                    id=conversation_id,
                    topic=_topic(item.get("prompt")),
                    senders=(senders[0], senders[1]),
                    messages=tuple(messages),
                    ratings=item.get("ratings"),
                )
            )
        report.kept = len(kept)
        return cls(kept, report=report, rules=rules, version=version)

    def __len__(self) -> int:
        return len(self._conversations)

    @property
    def raw_conversations(self) -> list[CorpusConversation]:
        """The cleaned conversations with sender ids, oldest first."""
        return list(self._conversations)

    def conversations(
        self,
        topic: str | None = None,
        *,
        min_turns: int = 0,
        persona_sender: str | None = None,
        exclude_senders: Collection[str] = (),
    ) -> list[Transcript]:
        """Cleaned conversations as transcripts, oldest first.

        ``topic`` keeps those on that prompt (compared ignoring case and spacing);
        ``min_turns`` those with at least that many burst turns. Without
        ``persona_sender`` the sender who wrote first is side ``"user"``; with it, only
        that sender's conversations are returned, with that sender as ``"response"``.
        ``exclude_senders`` leaves out conversations of those senders (e.g. the persona,
        so a comparison conversation never comes from the persona's own history).
        """
        wanted = None if topic is None else _topic(topic.lower())
        pool = (
            self._by_sender.get(persona_sender, [])
            if persona_sender is not None
            else self._conversations
        )
        excluded = set(exclude_senders)
        transcripts: list[Transcript] = []
        for conversation in pool:
            if wanted is not None and (conversation.topic or "").lower() != wanted:
                continue
            if excluded.intersection(conversation.senders):
                continue
            transcript = conversation.transcript(persona_sender)
            if min_turns and count_turns(transcript.messages) < min_turns:
                continue
            transcripts.append(transcript)
        return transcripts

    def topics(self) -> list[str]:
        """The distinct topic prompts of the kept conversations, alphabetically.

        Prompts differing only in case count once, spelled as they first appear.
        """
        found: dict[str, str] = {}
        for conversation in self._conversations:
            if conversation.topic is not None:
                found.setdefault(conversation.topic.lower(), conversation.topic)
        return [found[key] for key in sorted(found)]

    def senders(self, min_messages: int = 1) -> list[tuple[str, int]]:
        """``(sender_id, messages)`` of senders with at least ``min_messages``, most first."""
        return sorted(
            ((sender, n) for sender, n in self._message_counts.items() if n >= min_messages),
            key=lambda pair: (-pair[1], pair[0]),
        )

    def resolve_sender(self, prefix: str) -> str:
        """The full sender id that ``prefix`` (e.g. the 8 characters in a persona name) names."""
        if prefix in self._message_counts:
            return prefix
        matches = [sender for sender in self._message_counts if sender.startswith(prefix)]
        if len(matches) == 1:
            return matches[0]
        problem = "matches no sender" if not matches else f"matches {len(matches)} senders"
        raise InputError(
            f"sender {prefix!r} {problem} of the cleaned chitchat corpus.",
            field="sender",
            hint="Give the full anonymised id or its first characters (at least 8).",
        )

    def persona(
        self,
        sender_id: str,
        *,
        history_turns: int = 0,
        name: str | None = None,
        created: datetime | None = None,
    ) -> Persona:
        """The sender's conversations as a persona (the sender is side ``"response"``).

        With ``history_turns`` > 0, only the most recent whole conversations are kept,
        as few as give at least that many burst turns.
        """
        sender = self.resolve_sender(sender_id)
        everything = self.conversations(persona_sender=sender)
        if not everything:
            raise InputError(
                f"sender {sender!r} has no clean two-speaker conversation.", field="sender"
            )
        kept = everything
        if history_turns > 0:
            total = 0
            start = len(everything)
            while start > 0 and total < history_turns:
                start -= 1
                total += count_turns(everything[start].messages)
            kept = everything[start:]
        persona_messages = sum(
            1 for transcript in kept for message in transcript.messages if message.side == RESPONSE
        )
        info = PersonaInfo(
            name=name or persona_name(sender),
            source=f"{PACKAGE} {self.version}",
            license=LICENSE,
            attribution=attribution(self.version),
            description=(
                f"A participant in the 2018 BYU Chit-Chat Challenge (anonymised sender "
                f"{sender}), chatting by text with other participants about prompts they "
                "were given. "
                f"{len(kept)} of their {len(everything)} cleaned conversations, "
                f"{persona_messages} of their messages."
            ),
            scrubbed=False,
            created=created or datetime.now(UTC).replace(microsecond=0),
            extra={
                "corpus": PACKAGE,
                "corpus_version": self.version,
                "sender": sender,
                "conversations_available": len(everything),
                "messages_available": self._message_counts[sender],
                "history_turns": history_turns,
                "timezone": "US Mountain time (participants studied in Utah)",
                "cleaning": asdict(self.rules),
            },
        )
        return Persona(info=info, conversations=kept)


def persona_name(sender_id: str) -> str:
    """The persona name for a corpus sender: ``chitchat-`` and the id's first 8 characters."""
    return f"{SOURCE_NAME}-{sender_id[:8]}"


def corpus_version() -> str:
    """The installed version of the ``chitchat-dataset`` package."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"


def attribution(version: str | None = None) -> str:
    """The credit line persona files built from the corpus carry."""
    version = version or corpus_version()
    return f"{CREDIT}; {HOME} (PyPI package {PACKAGE} {version})."


def dataset_path() -> Path:
    """Where the installed package keeps ``dataset.json``."""
    try:
        import chitchat_dataset
    except ImportError:
        raise ConfigError(
            f"the chat corpus is not installed: run 'pip install {PACKAGE}' "
            "(it is a dependency of sdtt, so reinstalling sdtt also works)."
        ) from None
    return Path(chitchat_dataset.__file__).with_name("dataset.json")


@cache
def _load(path: Path, rules: CleaningRules, version: str) -> Corpus:
    try:
        with path.open(encoding="utf-8") as handle:
            raw = json.load(handle)
    except FileNotFoundError:
        raise InputError("corpus file not found.", path=path) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"cannot read the corpus ({error}).", path=path) from None
    if not isinstance(raw, dict):
        raise InputError("is not a JSON object of conversations.", path=path)
    return Corpus.from_raw(raw, rules=rules, path=path, version=version)


def load_corpus(path: str | Path | None = None, *, rules: CleaningRules | None = None) -> Corpus:
    """The cleaned chitchat corpus, parsed once per process and then cached.

    ``path`` reads another file in the same raw format (default: the installed
    package's ``dataset.json``).
    """
    if path is None:
        return _load(dataset_path(), rules or CleaningRules(), corpus_version())
    return _load(Path(path).resolve(), rules or CleaningRules(), "unknown")
