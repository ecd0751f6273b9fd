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
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sdtt.dialogue.message import RESPONSE, Message, Transcript
from sdtt.errors import InputError
from sdtt.personas.conversations import (
    ChatMessage,
    assign_sides,
    count_senders,
    find_participant,
    split_conversations,
)
from sdtt.personas.importers.import_report import ImportReport, counts_text
from sdtt.personas.importers.options import ImportOptions
from sdtt.personas.persona import Persona, PersonaInfo
from sdtt.personas.scrub import Scrubber
from sdtt.personas.timing import fit_timing_profile

MEDIA_TEXT = "[media]"
"""The text of a media message kept with ``keep_media``."""
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
    if not messages:
        raise InputError(
            "holds no chat messages"
            + (f" (left out: {counts_text(dropped)})" if dropped else "")
            + ".",
            path=path,
            hint=f"Is this a {fmt} export with messages in it?",
        )
    counts = count_senders(messages)
    me = find_participant(options.me, counts, chat.aliases, option="--me", path=path)
    partners = [
        find_participant(name, counts, chat.aliases, option="--with", path=path)
        for name in options.partners
    ]
    if me in partners:
        raise InputError(
            "names the persona itself.", path=path, field="--with", hint="Name the partners only."
        )
    sided = assign_sides(messages, me, partners, merge_others=options.merge_others, path=path)
    # The export's messages are the persona's now; the parsed ones go (a long chat's
    # would double the memory held until the persona is written).
    chat.messages = messages = []
    if sided.dropped_others:
        dropped["other participants"] += sided.dropped_others

    scrubber: Scrubber | None = None
    sided_messages = sided.messages
    file_label = Path(path).name
    if options.scrub:
        people = [[sender, *sorted(chat.aliases.get(sender, ()))] for sender in counts]
        people += chat.people + [[name] for name in options.scrub_names]
        scrubber = Scrubber(people)
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
        raise InputError(
            "has no conversation in which the persona wrote.",
            path=path,
            field="--me",
            hint="Check the --me and --with names.",
        )
    transcripts = [
        Transcript(id=f"conv-{index:04d}", messages=conversation, meta={"source": fmt})
        for index, conversation in enumerate(kept, start=1)
    ]
    profile = fit_timing_profile(transcripts)
    all_kept = [message for conversation in kept for message in conversation]
    persona_messages = sum(1 for message in all_kept if message.side == RESPONSE)
    warnings = list(chat.warnings)
    left_out = {reason: count for reason, count in sorted(dropped.items()) if count}
    extra: dict[str, Any] = {
        "format": fmt,
        "file": file_label,
        "person": person_key(digest, me),
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
    name = default_persona_name(options, fmt, digest, me)
    info = PersonaInfo(
        name=name,
        source=f"{fmt} chat export",
        license=LICENSE,
        private=True,
        attribution="Chat export provided by the researcher with the participants' consent.",
        description=f"Imported from a {fmt} export: {len(transcripts)} conversations, "
        f"{persona_messages} messages by the persona.",
        scrubbed=options.scrub,
        created=datetime.now(UTC).replace(microsecond=0),
        timing=profile.model_dump(mode="json"),
        extra=extra,
    )
    report = ImportReport(
        format=fmt,
        persona=name,
        conversations=len(transcripts),
        persona_messages=persona_messages,
        partner_messages=len(all_kept) - persona_messages,
        participants=len(counts),
        warnings=warnings,
        dropped=dict(left_out),
        scrub=scrubber.report if scrubber is not None else None,
        timing_samples=profile.samples,
        timing_fallback=[str(reason) for reason in profile.fallback],
        detected=dict(chat.detected),
    )
    return ImportResult(
        persona=Persona(info=info, conversations=transcripts),
        report=report,
        scrub_mapping=scrubber.mapping() if scrubber is not None else {},
        scrub_review=scrubber.to_review() if scrubber is not None else {},
    )
