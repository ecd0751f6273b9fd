"""Building a persona from a parsed chat, the same way for every export format.

An export format only has to turn its file into a :class:`ParsedChat`.
:func:`build_persona` then picks the persona (``me``) and its partners, splits
conversations at silences, scrubs personal data (unless ``scrub=False``) and fits the
timing profile.

Decisions that hold for all formats:

- Times without a zone (WhatsApp, Telegram, CSV) keep their wall-clock value and are
  labelled with the chosen time zone; absolute times (Discord, Slack, Messenger, epoch
  columns) are converted to it. The default is UTC, so the same export gives the same
  persona file on any machine; give the participant's zone for correct active hours
  from absolute times.
- System lines, deleted messages, bots' messages and forwarded messages are dropped.
  Media without a caption (photos, stickers...) are dropped too unless ``keep_media``,
  which keeps them as a ``[media]`` message; a caption is kept as the message text.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdtt.dialogue.message import RESPONSE, USER, Message, Transcript, turn_starts
from sdtt.errors import InputError
from sdtt.personas.conversations import (
    ChatMessage,
    ConversationSplitter,
    assign_sides,
    count_senders,
    find_participant,
    kept_senders,
    split_conversations,
)
from sdtt.personas.importers.import_report import ImportReport, counts_text
from sdtt.personas.importers.options import ImportOptions
from sdtt.personas.persona import Persona, PersonaInfo
from sdtt.personas.scrub import Scrubber
from sdtt.personas.store import PersonaWriter, save_persona
from sdtt.personas.timing import TimingFit, TimingProfile, fit_timing_profile

MEDIA_TEXT = "[media]"
"""The text of a media message kept with ``keep_media``."""
if TYPE_CHECKING:
    from numpy.typing import NDArray

LICENSE = "private: use only with the consent of the chat's participants"


@dataclass
class ParsedChat:
    """A chat export read into messages, before the persona is chosen."""

    messages: list[ChatMessage]
    warnings: list[str] = field(default_factory=list)
    """Things the user must know, e.g. a guessed date order."""
    dropped: Counter[str] = field(default_factory=Counter)
    """Messages left out, by reason ("system", "deleted", "bot"...)."""
    aliases: dict[str, set[str]] = field(default_factory=dict)
    """Sender -> other names the same person goes by (nickname, real name)."""
    people: list[list[str]] = field(default_factory=list)
    """Further people named in the file (chat title, workspace members): scrubbed too."""
    detected: dict[str, str] = field(default_factory=dict)
    """What the parser worked out itself (e.g. the date order), for the report."""


@dataclass(frozen=True)
class ImportResult:
    """A built persona and what happened on the way."""

    persona: Persona
    report: ImportReport
    scrub_mapping: dict[str, str] = field(default_factory=dict, repr=False)
    """Placeholder -> original value. Personal data: only written on explicit request."""
    scrub_review: dict[str, int] = field(default_factory=dict, repr=False)
    """Lower-case first names left in the persona's messages, with counts (personal data)."""


def add_message(
    messages: list[ChatMessage],
    dropped: Counter[str],
    *,
    sender: str,
    text: str,
    time: datetime,
    has_media: bool,
    thread: str | None = None,
) -> None:
    """Keep a message with ``text``; without text, a media message or an ``empty`` drop.

    ``thread`` keeps the message in the source's own thread (a Slack thread...).
    """
    if text:
        messages.append(ChatMessage(sender=sender, text=text, time=time, thread=thread))
    elif has_media:
        messages.append(
            ChatMessage(sender=sender, text=MEDIA_TEXT, time=time, kind="media", thread=thread)
        )
    else:
        dropped["empty"] += 1


def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:40]


def person_key(digest: str, me: str) -> str:
    """Who a persona imported from an export is: a hash of the export and the sender.

    Two people of one chat get different keys, and the key does not spell the name.
    """
    return hashlib.sha256(f"{digest}\0{me}".encode()).hexdigest()[:16]


def default_persona_name(options: ImportOptions, fmt: str, digest: str, me: str) -> str:
    """The persona name when ``options.name`` is not given.

    A scrubbed persona must not carry the person's name, so it is named after the format,
    a hash of the export and a hash of the person (:func:`person_key`), so two people of
    one chat never share a file; an unscrubbed one is named after the participant ``me``.
    """
    if options.name:
        return options.name
    slug = "" if options.scrub else _slug(me)
    return slug or f"{fmt}-{digest[:8]}-{person_key(digest, me)[:6]}"


@dataclass
class ChatOutline:
    """What a first reading of an export gives a streamed import (see
    :class:`StreamedImport`): all of a :class:`ParsedChat` but the messages, and how
    many of the messages kept each sender wrote (in the order they first wrote)."""

    senders: Counter[str]
    warnings: list[str] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    """As :attr:`ParsedChat.dropped`, with media left out (unless kept) as ``media``."""
    aliases: dict[str, set[str]] = field(default_factory=dict)
    people: list[list[str]] = field(default_factory=list)
    detected: dict[str, str] = field(default_factory=dict)
    time_order: Sequence[int] | None = None
    """The positions of the messages kept (in the order read) sorted by time, stably;
    ``None`` when they are read in time order."""

    @classmethod
    def read(
        cls,
        messages: Iterable[ChatMessage],
        dropped: Counter[str],
        *,
        keep_media: bool,
        people: list[list[str]],
        detected: dict[str, str],
        aliases: dict[str, set[str]] | None = None,
    ) -> ChatOutline:
        """The outline of an export from a first reading of its messages: senders and
        times. ``dropped``, ``people`` and ``aliases`` are filled by the reading."""
        import numpy as np  # only here: `sdtt persona import FORMAT --help` stays light

        senders: Counter[str] = Counter()
        times = array("d")
        for message in messages:
            if message.kind == "media" and not keep_media:
                dropped["media"] += 1
                continue
            senders[message.sender] += 1
            times.append(message.time.timestamp())
        return cls(
            senders=senders,
            dropped=dropped,
            aliases={} if aliases is None else aliases,
            people=people,
            detected=detected,
            time_order=time_order(np.frombuffer(times, dtype=np.float64)),
        )


def time_order(times: NDArray[Any]) -> array[int] | None:
    """The positions of ``times`` sorted (stably, as the import sorts messages by time);
    ``None`` when they are in order already."""
    import numpy as np

    if not np.any(times[1:] < times[:-1]):
        return None
    return array("q", np.argsort(times, kind="stable").astype(np.int64, copy=False).tobytes())


@dataclass(frozen=True)
class _Chosen:
    """The persona's sender, the senders whose messages are kept, and its name."""

    me: str
    partners: list[str]
    kept: set[str]
    name: str


def _choose(
    counts: Counter[str],
    aliases: dict[str, set[str]],
    dropped: Counter[str],
    options: ImportOptions,
    *,
    fmt: str,
    path: str | Path,
    digest: str,
) -> _Chosen:
    if not counts:
        raise InputError(
            "holds no chat messages"
            + (f" (left out: {counts_text(dropped)})" if dropped else "")
            + ".",
            path=path,
            hint=f"Is this a {fmt} export with messages in it?",
        )
    me = find_participant(options.me, counts, aliases, option="--me", path=path)
    partners = [
        find_participant(name, counts, aliases, option="--with", path=path)
        for name in options.partners
    ]
    if me in partners:
        raise InputError(
            "names the persona itself.", path=path, field="--with", hint="Name the partners only."
        )
    kept = kept_senders(counts, me, partners, merge_others=options.merge_others, path=path)
    name = default_persona_name(options, fmt, digest, me)
    return _Chosen(me=me, partners=partners, kept=kept, name=name)


def _scrubber(
    counts: Counter[str],
    aliases: dict[str, set[str]],
    people: list[list[str]],
    options: ImportOptions,
) -> Scrubber | None:
    if not options.scrub:
        return None
    names = [[sender, *sorted(aliases.get(sender, ()))] for sender in counts]
    return Scrubber(names + people + [[name] for name in options.scrub_names])


def _no_conversation(path: str | Path) -> InputError:
    return InputError(
        "has no conversation in which the persona wrote.",
        path=path,
        field="--me",
        hint="Check the --me and --with names.",
    )


@dataclass(frozen=True)
class _Tally:
    """What the history kept holds, for the header and the report."""

    conversations: int
    persona_messages: int
    partner_messages: int
    profile: TimingProfile


def _describe(
    tally: _Tally,
    chosen: _Chosen,
    counts: Counter[str],
    dropped: Counter[str],
    warnings: list[str],
    detected: dict[str, str],
    scrubber: Scrubber | None,
    file_label: str,
    options: ImportOptions,
    *,
    fmt: str,
    digest: str,
) -> tuple[PersonaInfo, ImportReport]:
    """The persona's header and the import's report."""
    left_out = {reason: count for reason, count in sorted(dropped.items()) if count}
    extra: dict[str, Any] = {
        "format": fmt,
        "file": file_label,
        "person": person_key(digest, chosen.me),
        "timezone": str(options.timezone),
        "gap_seconds": options.gap.total_seconds(),
        "participants": len(counts),
        "group": len(counts) > 2,
        "media_kept": options.keep_media,
        "dropped": left_out,
        "warnings": warnings,
    }
    if scrubber is not None:
        extra["scrub"] = scrubber.report.as_dict()
    profile = tally.profile
    info = PersonaInfo(
        name=chosen.name,
        source=f"{fmt} chat export",
        license=LICENSE,
        private=True,
        attribution="Chat export provided by the researcher with the participants' consent.",
        description=f"Imported from a {fmt} export: {tally.conversations} conversations, "
        f"{tally.persona_messages} messages by the persona.",
        scrubbed=options.scrub,
        created=datetime.now(UTC).replace(microsecond=0),
        timing=profile.model_dump(mode="json"),
        extra=extra,
    )
    report = ImportReport(
        format=fmt,
        persona=chosen.name,
        conversations=tally.conversations,
        persona_messages=tally.persona_messages,
        partner_messages=tally.partner_messages,
        participants=len(counts),
        warnings=warnings,
        dropped=dict(left_out),
        scrub=scrubber.report if scrubber is not None else None,
        timing_samples=profile.samples,
        timing_fallback=[str(reason) for reason in profile.fallback],
        detected=dict(detected),
    )
    return info, report


def build_persona(
    chat: ParsedChat,
    options: ImportOptions,
    *,
    fmt: str,
    path: str | Path,
    digest: str = "",
) -> ImportResult:
    """Turn a parsed chat into a persona: sides, conversations, scrubbing, timing."""
    dropped = Counter(chat.dropped)
    messages = chat.messages
    if not options.keep_media:
        text_only = [message for message in messages if message.kind != "media"]
        if len(text_only) < len(messages):
            dropped["media"] += len(messages) - len(text_only)
        messages = text_only
    counts = count_senders(messages)
    chosen = _choose(counts, chat.aliases, dropped, options, fmt=fmt, path=path, digest=digest)
    sided = assign_sides(
        messages, chosen.me, chosen.partners, merge_others=options.merge_others, path=path
    )
    # The export's messages are the persona's now; the parsed ones go (a long chat's
    # would double the memory held until the persona is written).
    chat.messages = messages = []
    if sided.dropped_others:
        dropped["other participants"] += sided.dropped_others

    scrubber = _scrubber(counts, chat.aliases, chat.people, options)
    sided_messages = sided.messages
    file_label = Path(path).name
    if scrubber is not None:
        # In place, one message at a time: the unscrubbed message goes as its scrubbed
        # copy comes, so a long chat is never held twice. Side and time are the
        # validated message's own, so the copy needs no second validation.
        for index, message in enumerate(sided_messages):
            own = message.side == RESPONSE
            text = scrubber.scrub_own(message.text) if own else scrubber.scrub(message.text)
            if text != message.text:
                sided_messages[index] = Message.model_construct(
                    side=message.side, text=text, time=message.time
                )
        file_label = scrubber.scrub(file_label)

    conversations = split_conversations(sided_messages, options.gap, sided.threads)
    kept = [c for c in conversations if any(message.side == RESPONSE for message in c)]
    if len(kept) < len(conversations):
        dropped["conversations without the persona"] += len(conversations) - len(kept)
    if not kept:
        raise _no_conversation(path)
    transcripts = [
        Transcript(id=f"conv-{index:04d}", messages=conversation, meta={"source": fmt})
        for index, conversation in enumerate(kept, start=1)
    ]
    persona_messages = sum(
        1 for conversation in kept for message in conversation if message.side == RESPONSE
    )
    tally = _Tally(
        conversations=len(transcripts),
        persona_messages=persona_messages,
        partner_messages=sum(map(len, kept)) - persona_messages,
        profile=fit_timing_profile(transcripts),
    )
    info, report = _describe(
        tally,
        chosen,
        counts,
        dropped,
        list(chat.warnings),
        chat.detected,
        scrubber,
        file_label,
        options,
        fmt=fmt,
        digest=digest,
    )
    return ImportResult(
        persona=Persona(info=info, conversations=transcripts),
        report=report,
        scrub_mapping=scrubber.mapping() if scrubber is not None else {},
        scrub_review=scrubber.to_review() if scrubber is not None else {},
    )


@dataclass(frozen=True)
class WrittenImport:
    """A persona written to its file, and what happened on the way (the persona itself
    is not held: a long chat's would not fit)."""

    info: PersonaInfo
    report: ImportReport
    path: Path
    conversations: int
    turns: int
    messages: int
    scrub_mapping: dict[str, str] = field(default_factory=dict, repr=False)
    scrub_review: dict[str, int] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, result: ImportResult, path: Path) -> WrittenImport:
        """The account of ``result``'s persona, written to ``path``."""
        persona = result.persona
        return cls(
            info=persona.info,
            report=result.report,
            path=path,
            conversations=len(persona.conversations),
            turns=sum(len(turn_starts(c.messages)) for c in persona.conversations),
            messages=sum(len(c.messages) for c in persona.conversations),
            scrub_mapping=result.scrub_mapping,
            scrub_review=result.scrub_review,
        )


class PreparedImport:
    """An import read as far as needed to know the persona's name and person
    (:func:`person_key`), so the command line can refuse its target before the long
    part; :meth:`write` builds and writes it. This one has built the persona whole."""

    def __init__(self, result: ImportResult) -> None:
        self._result = result
        info = result.persona.info
        self.name: str = info.name
        self.person: str | None = info.extra.get("person")

    def write(self, path: Path) -> WrittenImport:
        """Write the persona file to ``path`` (replacing it)."""
        save_persona(self._result.persona, path)
        return WrittenImport.of(self._result, path)


class OutOfOrder(Exception):
    """A streamed export's messages come otherwise than its first reading found: the
    import is built with the chat held whole."""


@dataclass(eq=False)
class StreamedImport(PreparedImport):
    """An import that reads the export's messages a second time while it writes the
    persona (:class:`~sdtt.personas.store.PersonaWriter`), so memory holds one
    conversation, not the chat; the file is the one :func:`build_persona` and
    :func:`~sdtt.personas.store.save_persona` make. Messages out of time order wait for
    their turn (:attr:`ChatOutline.time_order`); a source's threads are conversations of
    their own, each handed on once its thread falls silent
    (:class:`~sdtt.personas.conversations.ConversationSplitter`). Messages other than
    the first reading found (the file changed in between) are built by the import held
    whole (``whole``) instead."""

    outline: ChatOutline
    messages: Callable[[], Iterable[ChatMessage]]
    whole: Callable[[], ImportResult]
    options: ImportOptions
    fmt: str = field(kw_only=True)
    path: Path = field(kw_only=True)
    digest: str = field(kw_only=True)

    def __post_init__(self) -> None:
        self._chosen = _choose(
            self.outline.senders,
            self.outline.aliases,
            self.outline.dropped,
            self.options,
            fmt=self.fmt,
            path=self.path,
            digest=self.digest,
        )
        self.name = self._chosen.name
        self.person = person_key(self.digest, self._chosen.me)

    def write(self, path: Path) -> WrittenImport:
        """Build the persona from the export's messages read again, writing it to
        ``path`` as it goes."""
        try:
            with PersonaWriter(path) as writer:
                return self._stream(writer)
        except OutOfOrder:
            return PreparedImport(self.whole()).write(path)

    def _in_time_order(self) -> Iterator[ChatMessage]:
        """The messages kept (media only with ``keep_media``) in time order: one read
        before its turn waits, so memory holds the messages out of place, not the chat."""
        keep_media = self.options.keep_media
        kept = (m for m in self.messages() if keep_media or m.kind != "media")
        order = self.outline.time_order
        if order is None:
            yield from kept
            return
        waiting: dict[int, ChatMessage] = {}
        position = 0
        for index, message in enumerate(kept):
            if position < len(order) and order[position] == index:  # its turn: most
                yield message
                position += 1
            else:
                waiting[index] = message
            while waiting and position < len(order) and order[position] in waiting:
                yield waiting.pop(order[position])
                position += 1
        if waiting or position < len(order):
            raise OutOfOrder

    def _stream(self, writer: PersonaWriter) -> WrittenImport:
        outline, options, chosen = self.outline, self.options, self._chosen
        dropped = Counter(outline.dropped)
        scrubber = _scrubber(outline.senders, outline.aliases, outline.people, options)
        fit = TimingFit()
        me, kept_senders = chosen.me, chosen.kept
        last: datetime | None = None
        conversations = persona_messages = partner_messages = turns = 0

        def flush(current: list[Message]) -> None:
            nonlocal conversations, persona_messages, partner_messages, turns
            own = sum(1 for message in current if message.side == RESPONSE)
            if not own:
                dropped["conversations without the persona"] += 1
                return
            conversations += 1
            transcript = Transcript(
                id=f"conv-{conversations:04d}", messages=current, meta={"source": self.fmt}
            )
            writer.add(transcript)
            fit.add(current)
            persona_messages += own
            partner_messages += len(current) - own
            turns += len(turn_starts(current))

        splitter = ConversationSplitter(options.gap, flush)
        for chat_message in self._in_time_order():
            if chat_message.sender not in kept_senders:
                dropped["other participants"] += 1
                continue
            time = chat_message.time
            if last is not None and time < last:
                raise OutOfOrder
            side = RESPONSE if chat_message.sender == me else USER
            text = chat_message.text
            if scrubber is not None:
                text = scrubber.scrub_own(text) if side == RESPONSE else scrubber.scrub(text)
            splitter.add(Message(side=side, text=text, time=time), chat_message.thread)
            last = time
        splitter.close()
        if not conversations:
            raise _no_conversation(self.path)
        file_label = self.path.name
        if scrubber is not None:
            file_label = scrubber.scrub(file_label)
        tally = _Tally(
            conversations=conversations,
            persona_messages=persona_messages,
            partner_messages=partner_messages,
            profile=fit.profile(),
        )
        info, report = _describe(
            tally,
            chosen,
            outline.senders,
            dropped,
            list(outline.warnings),
            outline.detected,
            scrubber,
            file_label,
            options,
            fmt=self.fmt,
            digest=self.digest,
        )
        writer.finish(info)
        return WrittenImport(
            info=info,
            report=report,
            path=writer.path,
            conversations=conversations,
            turns=turns,
            messages=persona_messages + partner_messages,
            scrub_mapping=scrubber.mapping() if scrubber is not None else {},
            scrub_review=scrubber.to_review() if scrubber is not None else {},
        )
