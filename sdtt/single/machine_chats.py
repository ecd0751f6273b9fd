"""Machine-machine chats made the papers' way, with any sdtt model on either side.

Zhang, Kreiman et al. let two models talk under a prompt naming two friends and a topic
("John greets Alice. Alice starts to talk about movies. ...", stop sequences at the two
names, temperature 0.8). For their newer models they drew each reply's length from the
word counts of human chats, cut a longer reply at the most fitting punctuation mark
within that length, and regenerated empty replies. Here:

- each reply's target length is drawn from human word counts (e.g. :func:`human_word_counts`
  of a corpus of human chats);
- a longer reply is cut after the last sentence end (``.!?``) within the target, else
  after the last ``,;:``, else at the target word;
- a reply shorter than ``min_words``, or repeating the speaker's previous message word
  for word (the repetition the papers resampled), is asked again with the temperature
  raised by ``temperature_step`` each time (the ramp), up to ``temperature_max``; after
  ``attempts`` unusable replies the whole chat starts over, at most ``restarts`` times;
- every setting, and per reply its target, attempts, temperature and whether it was cut,
  is recorded in the transcript's ``meta["generation"]``.

A chat is a :class:`~sdtt.dialogue.message.Transcript` with both speakers recorded as
machines (``meta["speakers"]``), so :func:`sdtt.single.items.cut_items` cuts it like
any other chat.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sdtt.dialogue.condition import Condition
from sdtt.dialogue.message import RESPONSE, USER, Message, Transcript
from sdtt.errors import InputError, ModelOutputError
from sdtt.models.base import GenerateConfig, Generator, Prompt
from sdtt.seeds import derive_seed, seeded_rng
from sdtt.single.items import SPEAKERS_KEY, speaker_truth

NAMES = (
    "John", "Alice", "Maria", "David", "Sofia", "Omar", "Lena", "Tom",
    "Priya", "Lucas", "Hana", "Ben", "Nora", "Sam", "Ivy", "Leo",
)  # fmt: skip
"""First names the two friends are drawn from, two different ones per chat (the papers
changed the names every time)."""
PROMPT = (
    "{first} greets {second}. {second} starts to talk about {topic}. Both ask long "
    "questions, give long responses and often disagree. Then the topic changes. The "
    "conversation never ends."
)
"""The papers' prompt, the two names and the topic filled in."""
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_PAUSE = re.compile(r"[,;:](?=\s|$)")
_TIMESTAMP = re.compile(r"^\s*\[[^\]\n]*\]\s*")
SECONDS_APART = 20
"""Made-up times: one message every this many seconds (judges never see times)."""


@dataclass(frozen=True)
class MachineChatSettings:
    """How machine-machine chats are made; all of it is recorded with each chat."""

    word_counts: tuple[int, ...]
    """Human replies' word counts, each reply's target length is drawn from."""
    exchanges: int = 24
    temperature: float = 0.8
    temperature_step: float = 0.2
    temperature_max: float = 1.4
    min_words: int = 1
    attempts: int = 4
    restarts: int = 2
    max_tokens: int = 200
    seed: int = 0
    start: str = "2024-01-01T12:00:00+00:00"

    def __post_init__(self) -> None:
        if not self.word_counts or min(self.word_counts) < 1:
            raise InputError(
                "machine chats need human word counts (each at least 1) to draw reply "
                "lengths from.",
                field="word_counts",
                hint="Give human chats to take them from (--lengths-from).",
            )
        if self.exchanges < 1 or self.attempts < 1 or self.restarts < 0 or self.min_words < 1:
            raise InputError(
                "exchanges, attempts and min_words must be at least 1, restarts at least 0.",
                field="settings",
            )


@dataclass
class ReplyRecord:
    """How one reply came about."""

    speaker: str
    target_words: int
    attempts: int
    temperature: float
    words: int
    cut: bool
    rejected: list[str] = field(default_factory=list)


def human_word_counts(transcripts: Iterable[Transcript]) -> tuple[int, ...]:
    """The word count of every message a human wrote in ``transcripts``."""
    counts = []
    for transcript in transcripts:
        truth = speaker_truth(transcript)
        for message in transcript.messages:
            side = "A" if message.side == USER else "B"
            words = len(message.text.split())
            if truth[side] == "human" and words:
                counts.append(words)
    return tuple(counts)


def cut_to_length(text: str, target: int) -> tuple[str, bool]:
    """``text`` cut to at most ``target`` words at the most fitting punctuation mark:
    the last sentence end within the target, else the last pause, else the word."""
    words = text.split()
    if len(words) <= target:
        return " ".join(words), False
    head = " ".join(words[:target])
    for mark in (_SENTENCE_END, _PAUSE):
        ends = [match.end() for match in mark.finditer(head)]
        if ends:
            return head[: ends[-1]].strip(), True
    return head, True


def clean_reply(text: str, name: str, other: str) -> str:
    """The reply's message: the speaker's own name label and any timestamp removed,
    stopped where the model starts writing the other speaker, lines joined."""
    kept: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if re.match(rf"^(?:{re.escape(other)}|User)\s*:", stripped, re.IGNORECASE):
            break
        stripped = re.sub(
            rf"^(?:{re.escape(name)}|Response)\s*:\s*", "", stripped, flags=re.IGNORECASE
        )
        stripped = _TIMESTAMP.sub("", stripped)
        if stripped:
            kept.append(stripped)
    return " ".join(kept)


def chat_prompt(
    first: str, second: str, topic: str, lines: Sequence[tuple[str, str]], speaker: str
) -> Prompt:
    """What the model playing ``speaker`` is asked: the papers' framing, the chat so far
    as ``Name: text`` lines, and the speaker's turn."""
    dialogue = "\n".join([f"{first}: Hi!", *(f"{who}: {text}" for who, text in lines)])
    return Prompt(
        instructions=PROMPT.format(first=first, second=second, topic=topic),
        dialogue=dialogue,
        task=f"Write {speaker}'s next message only.",
        continue_with=f"{dialogue}\n{speaker}:",
    )


async def _reply(
    model: Generator,
    settings: MachineChatSettings,
    prompt: Prompt,
    *,
    name: str,
    other: str,
    target: int,
    previous: str | None,
    seed: int,
) -> tuple[str, ReplyRecord] | None:
    """One usable reply, or None after ``attempts`` unusable ones (the ramp raises the
    temperature after each)."""
    rejected: list[str] = []
    temperature = settings.temperature
    for attempt in range(1, settings.attempts + 1):
        config = GenerateConfig(
            max_tokens=settings.max_tokens,
            temperature=temperature,
            stop=(f"{other}:",),
            seed=derive_seed(seed, attempt),
        )
        output = await model.generate(prompt, config)
        text, cut = cut_to_length(clean_reply(output.text, name, other), target)
        words = len(text.split())
        if words < settings.min_words:
            rejected.append("too short")
        elif previous is not None and text.casefold() == previous.casefold():
            rejected.append("repeats the previous message")
        else:
            record = ReplyRecord(name, target, attempt, temperature, words, cut, rejected)
            return text, record
        temperature = min(
            settings.temperature_max, round(temperature + settings.temperature_step, 6)
        )
    return None


async def machine_chat(
    first_model: Generator,
    second_model: Generator,
    settings: MachineChatSettings,
    *,
    chat_id: str,
    topic: str,
) -> Transcript:
    """One chat of ``settings.exchanges`` messages, A played by ``first_model`` and B by
    ``second_model`` (the same model for a bot with itself)."""
    rng = seeded_rng(settings.seed, "machine-chat", chat_id)
    for restart in range(settings.restarts + 1):
        first, second = rng.sample(NAMES, 2)
        lines: list[tuple[str, str]] = []
        records: list[ReplyRecord] = []
        failed = None
        for index in range(settings.exchanges):
            # A is the second friend, who starts talking about the topic after "Hi!".
            name, other = (second, first) if index % 2 == 0 else (first, second)
            model = first_model if index % 2 == 0 else second_model
            own = [text for who, text in lines if who == name]
            reply = await _reply(
                model,
                settings,
                chat_prompt(first, second, topic, lines, name),
                name=name,
                other=other,
                target=rng.choice(settings.word_counts),
                previous=own[-1] if own else None,
                seed=derive_seed(settings.seed, "machine-chat", chat_id, restart, index),
            )
            if reply is None:
                failed = index
                break
            lines.append((name, reply[0]))
            records.append(reply[1])
        if failed is None:
            return _transcript(
                chat_id, topic, lines, records, first_model, second_model, settings, restart
            )
    raise ModelOutputError(
        f"machine chat {chat_id}: reply {failed + 1 if failed is not None else '?'} was "
        f"unusable {settings.attempts} times in each of {settings.restarts + 1} tries."
    )


def _transcript(
    chat_id: str,
    topic: str,
    lines: Sequence[tuple[str, str]],
    records: Sequence[ReplyRecord],
    first_model: Generator,
    second_model: Generator,
    settings: MachineChatSettings,
    restarts: int,
) -> Transcript:
    start = datetime.fromisoformat(settings.start).astimezone(UTC)
    speaker_a = lines[0][0]
    messages = [
        Message(
            side=USER if who == speaker_a else RESPONSE,
            text=text,
            time=start + timedelta(seconds=SECONDS_APART * (index + 1)),
        )
        for index, (who, text) in enumerate(lines)
    ]
    recorded: dict[str, Any] = {
        key: value for key, value in asdict(settings).items() if key != "word_counts"
    }
    recorded["word_counts"] = {
        "n": len(settings.word_counts),
        "min": min(settings.word_counts),
        "max": max(settings.word_counts),
        "mean": round(sum(settings.word_counts) / len(settings.word_counts), 3),
    }
    return Transcript(
        id=chat_id,
        topic=topic,
        messages=messages,
        condition=Condition(model=second_model.name, interrogator=first_model.name),
        meta={
            SPEAKERS_KEY: {"A": "machine", "B": "machine"},
            "source": "sdtt single machine-chats",
            "generation": {
                "settings": recorded,
                "models": {"A": first_model.name, "B": second_model.name},
                "restarts": restarts,
                "replies": [asdict(record) for record in records],
                "times": f"made up: one message every {SECONDS_APART} s",
            },
        },
    )
