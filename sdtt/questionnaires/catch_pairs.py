"""Catch pairs: pairs whose answer is obvious, to spot judges who do not read.

In each, one User B writes like a stock assistant (disclaimers, numbered lists, offers
to help) and the other like a person texting a friend. A judge who gets one wrong was
probably not reading. The conversations are written for sdtt and are part of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sdtt.dialogue.message import Message, Transcript


@dataclass(frozen=True)
class CatchPair:
    """A topic with an obviously machine-written chat and an obviously human one."""

    topic: str
    user: tuple[str, ...]
    """User A's message in each turn (the same person asks in both chats)."""
    machine: tuple[str, ...]
    person: tuple[str, ...]


CATCH_PAIRS: tuple[CatchPair, ...] = (
    CatchPair(
        topic="What did you do last weekend?",
        user=(
            "hey! what did you get up to this weekend",
            "nice, anything fun saturday night?",
            "haha sounds like a good time",
            "same, i'm still tired lol",
        ),
        machine=(
            "As an AI language model, I do not have weekends or personal experiences. "
            "However, I would be happy to help you plan your next weekend!",
            "I do not participate in activities. Here are some popular Saturday night "
            "options: 1. Watching a movie 2. Dining out 3. Attending a concert.",
            "Thank you! Is there anything else I can assist you with today?",
            "I understand that feeling tired is common. Getting 7-9 hours of sleep per night "
            "is recommended for adults.",
        ),
        person=(
            "not much honestly, went hiking with my roommate on saturday",
            "we got pizza after and watched some dumb movie",
            "yeah it was chill, i needed it after this week",
            "lol same. monday came way too fast",
        ),
    ),
    CatchPair(
        topic="What's your favorite food?",
        user=(
            "ok random question what's your favorite food",
            "ooh good choice, do you cook it yourself?",
            "what's the best place you've had it",
            "ok now i'm hungry",
        ),
        machine=(
            "As an artificial intelligence, I do not eat food or have taste preferences. "
            "However, many people enjoy pizza, sushi, and pasta.",
            "I am not able to cook. Would you like me to provide a recipe? I can generate "
            "step-by-step instructions for many dishes.",
            "I do not have personal experiences of restaurants. I recommend checking online "
            "reviews to find highly rated restaurants in your area.",
            "It sounds like you may be hungry. Eating balanced meals at regular times is "
            "important for your health. Is there anything else I can help with?",
        ),
        person=(
            "tacos. no question",
            "sometimes! my mom's recipe is better than mine tho",
            "this tiny food truck back home, they closed last year and i'm still sad",
            "haha sorry. go get some tacos",
        ),
    ),
    CatchPair(
        topic="Where would you go on your dream vacation?",
        user=(
            "if you could go anywhere on vacation where would you go",
            "why there?",
            "have you been anywhere close to that?",
            "someday!",
        ),
        machine=(
            "As a language model, I cannot travel. Popular vacation destinations include "
            "Paris, Tokyo, and Bali, each offering unique cultural experiences.",
            "I do not have preferences. Destinations are typically chosen based on budget, "
            "climate, and personal interests.",
            "I have not been anywhere, as I am an AI. Please let me know if you would like "
            "travel tips or an itinerary.",
            "I hope you have a wonderful trip! Let me know if there is anything else I can "
            "help you with.",
        ),
        person=(
            "iceland probably. or new zealand",
            "the hot springs and all the weird landscapes. looks like another planet",
            "closest i've been is yellowstone lol. still cool tho",
            "yeah one day when i'm not broke",
        ),
    ),
)

_START = datetime(2024, 5, 18, 19, 2, 0, tzinfo=UTC)


def _chat(pair: CatchPair, replies: tuple[str, ...], chat_id: str, offset_s: int) -> Transcript:
    messages: list[Message] = []
    time = _START + timedelta(seconds=offset_s)
    for asked, answered in zip(pair.user, replies, strict=True):
        time += timedelta(seconds=25 + len(asked) // 3)
        messages.append(Message(side="user", text=asked, time=time))
        time += timedelta(seconds=20 + len(answered) // 4)
        messages.append(Message(side="response", text=answered, time=time))
    return Transcript(id=chat_id, topic=pair.topic, messages=messages, meta={"source": "catch"})


def catch_transcripts(index: int) -> tuple[Transcript, Transcript]:
    """The machine-like and the person-like chat of catch pair ``index``."""
    pair = CATCH_PAIRS[index]
    return (
        _chat(pair, pair.machine, f"catch-{index + 1}-machine", 0),
        _chat(pair, pair.person, f"catch-{index + 1}-person", 3 * 3600 + 17 * 60),
    )
