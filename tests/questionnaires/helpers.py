"""Hand-made conversations and studies for the questionnaire tests."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from typing import Any

from sdtt.dialogue.message import Message, Transcript
from sdtt.questionnaires.build import BuildResult, build_questionnaire
from sdtt.questionnaires.pairing import Pairing, same_topic
from sdtt.tasks.study import StudySpec

START = datetime(2025, 3, 14, 18, 30, tzinfo=UTC)

PLANTED = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> {age} ${q://QID1/ChoiceGroup/SelectedChoices}'
"""Chat text that would run or pull in answers if any export failed to escape it."""

MODEL = "openai/gpt-4o-2024-08-06"
PERSONA = "chitchat-5e1f9a7b"
SECRET_META = {"model": MODEL, "persona": PERSONA, "interrogator": "anthropic/claude-sonnet-4-5"}
SECRET_WORDS = (
    MODEL,
    "gpt-4o-2024-08-06",
    PERSONA,
    "claude-sonnet-4-5",
    "anthropic",
    "openai",
    "bot-conv-1",
    "bot-conv-2",
    "human-conv-1",
    "human-conv-2",
)
"""Names that must not appear in anything a judge receives."""


def conversation(
    conversation_id: str,
    topic: str | None,
    turns: int,
    *,
    tag: str,
    meta: dict[str, Any] | None = None,
    start: datetime = START,
    planted_at: Collection[int] = (),
    trailing_user: bool = False,
) -> Transcript:
    """A conversation of ``turns`` burst turns (the second message of turn 2 is a burst)."""
    messages: list[Message] = []
    time = start
    for turn in range(turns):
        text = f"{tag} asks {turn}"
        if turn in planted_at:
            text += " " + PLANTED
        messages.append(Message(side="user", text=text, time=time))
        time += timedelta(seconds=40)
        messages.append(Message(side="response", text=f"{tag} replies {turn}", time=time))
        if turn == 1:
            time += timedelta(seconds=9)
            messages.append(Message(side="response", text=f"{tag} adds {turn}", time=time))
        time += timedelta(seconds=35)
    if trailing_user:
        messages.append(Message(side="user", text=f"{tag} unanswered", time=time))
    return Transcript(id=conversation_id, topic=topic, messages=messages, meta=meta or {})


TOPICS = ("What's your favorite smell?", "Mozart or Beethoven?")


def bots() -> list[Transcript]:
    """Two bot conversations with model and persona names in their metadata."""
    return [
        conversation(
            f"bot-conv-{n + 1}",
            topic,
            12,
            tag=f"b{n}",
            meta={**SECRET_META, "pseudo_turns": 0},
            planted_at={10},
        )
        for n, topic in enumerate(TOPICS)
    ]


def humans() -> list[Transcript]:
    """Human-human conversations on the same topics (one with a trailing question), longer
    than the bots' so that a window at the bots' place ends before their last turn."""
    return [
        conversation(
            f"human-conv-{n + 1}",
            topic.lower().rstrip("?"),
            13,
            tag=f"h{n}",
            start=START - timedelta(days=2000),
            planted_at={9},
            trailing_user=n == 0,
        )
        for n, topic in enumerate(TOPICS)
    ]


def pairings() -> list[Pairing]:
    """The bots paired with the humans on their topics."""
    found = []
    for bot in bots():
        human = next(h for h in humans() if same_topic(h.topic, bot.topic))
        found.append(Pairing(bot, "bots.jsonl", human, "humans.jsonl"))
    return found


FIXTURE_SPEC = StudySpec(name="fixture", seed=11, x_turns=[3], catch_pairs=1)


def fixture_study(spec: StudySpec = FIXTURE_SPEC) -> BuildResult:
    """The study the importer fixtures were written for (ids depend on the seed)."""
    return build_questionnaire(spec, pairings())


class FakeCorpus:
    """A corpus with a few conversations, shaped like :class:`sdtt.personas.corpus.Corpus`."""

    def __init__(self, transcripts: list[Transcript], senders: dict[str, str]) -> None:
        self.transcripts = transcripts
        self.senders = senders
        """Conversation id to the sender id of its side B."""

    def conversations(
        self,
        topic: str | None = None,
        *,
        min_turns: int = 0,
        persona_sender: str | None = None,
        exclude_senders: Collection[str] = (),
    ) -> list[Transcript]:
        return [
            t
            for t in self.transcripts
            if (topic is None or same_topic(t.topic, topic))
            and self.senders.get(t.id) not in set(exclude_senders)
        ]

    def topics(self) -> list[str]:
        return sorted({t.topic for t in self.transcripts if t.topic})

    def resolve_sender(self, prefix: str) -> str:
        matches = [s for s in self.senders.values() if s.startswith(prefix)]
        if len(matches) != 1:
            from sdtt.errors import InputError

            raise InputError(f"sender {prefix!r} not found")
        return matches[0]
