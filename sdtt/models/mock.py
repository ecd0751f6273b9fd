"""The ``mock`` provider: scripted replies, offline, for tests, examples and demos.

In code, script the replies yourself::

    model = get_model("mock/test", replies=["hi", ServerError("boom"), MockReply("ok", delay=2)])

``replies`` is one of

- a **list**: used in order; when it runs out, the next call raises
  :class:`MockExhaustedError` (a test that makes more calls than it scripted should fail
  loudly), unless ``cycle=True``, which starts over;
- a **generator** (any iterator): one item per call, :class:`MockExhaustedError` when
  it stops;
- a **callable** ``(prompt, config) -> item``, called on every call.

An item is the reply text (``str``), a :class:`MockReply` (text plus a delay, a usage,
or an error to raise after the delay), or an ``Exception`` instance, which is raised on
cue (e.g. ``RateLimitError("slow down", retry_after=3)`` to exercise retries). Delays
use ``trio.sleep``, so they are instant and exact under ``autojump_clock``.

Usage is estimated in words: input = words of the system and user text, output = words
of the reply, cached = the system words plus the dialogue's stable prefix when the prompt
has a dialogue (as if an earlier call of the same conversation had warmed a prefix
cache), so usage too depends on the prompt alone.

From the command line, with no code, use a built-in script:

- ``mock/echo``: repeats the last ``User:`` line of the prompt back as one ``Response:``
  line, whatever it was asked (so as a judge it never gives a usable answer).
- ``mock/chatty``: answers with casual chat replies of two to four messages each, as
  ``Response: [timestamp] text`` lines a few seconds apart after the last timestamp in the
  prompt, so bursts show. Asked for a whole chat of N rounds (``sdtt generate``), it
  writes N rounds of ``User:`` and ``Response:`` lines; asked for N topics (``sdtt
  topics``), it lists N everyday topics not yet taken; asked to pick one of two options
  (an LLM judge's "Answer with ... only: A or B"), it answers one of them; asked for a
  verdict per speaker (lines such as "A: human or AI"), it answers each human or AI;
  asked for "one whole number from L to H" (a similarity rating), it answers the word
  overlap of the two excerpts on that scale, moved a point by the call's seed;
  asked for a belief as a whole number from 0 to 100 (a reveal-mode judge), it gives
  one, with log-probabilities when the call asks for them.
- ``mock/fail``: always raises :class:`~sdtt.errors.ServerError` (retried, then raised).
- ``mock/short``: answers one word (a word association), or a one-sentence caption when
  the prompt shows an image.
- ``mock/empty``: answers with whitespace and a line for the wrong side, i.e. output that
  holds no usable message, to see how garbage output is reported.

Each accepts ``delay=seconds`` to answer slowly.

The built-in scripts keep no state: a reply, and its estimated usage, is a pure function
of the prompt and the call's settings (seed included), so chains run concurrently, or
resumed after a kill, get exactly the replies of an uninterrupted run.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

import trio

from sdtt.errors import ConfigError, ModelError, ServerError
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt, TokenLogprobs, Usage


@dataclass(frozen=True)
class MockReply:
    """One scripted answer: text after ``delay`` seconds, or ``error`` after the delay."""

    text: str = ""
    delay: float = 0.0
    usage: Usage | None = None
    """Reported usage; estimated from word counts when ``None``."""
    error: Exception | None = None
    """Raised (after ``delay``) instead of answering."""
    logprobs: tuple[TokenLogprobs, ...] | None = None
    """Token log-probabilities to report with the reply (for log-probability judges)."""


MockItem = str | MockReply | Exception
MockScript = Callable[[Prompt, GenerateConfig], MockItem]
MockReplies = Iterable[MockItem] | MockScript


class MockExhaustedError(ModelError):
    """A mock model was called more often than it had scripted replies."""


class MockModelAPI:
    """A provider that answers from a script instead of a model."""

    def __init__(
        self,
        replies: MockReplies,
        *,
        name: str = "mock/model",
        cycle: bool = False,
        delay: float = 0.0,
    ) -> None:
        self.name = name
        self.delay = delay
        """Seconds added before every answer."""
        self.prompts: list[Prompt] = []
        """Every prompt received, in order (for assertions)."""
        self._script: MockScript | None = None
        self._items: Iterator[MockItem] | None = None
        self._count: int | None = None
        if callable(replies):
            self._script = replies
        elif isinstance(replies, list | tuple):
            items = list(replies)
            if not items:
                raise ConfigError(f"{name}: give at least one scripted reply.")
            self._count = len(items)
            self._items = itertools.cycle(items) if cycle else iter(items)
        else:
            self._items = iter(replies)

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        """Answer with the next scripted item (sleeping, raising or replying as it says)."""
        # A checkpoint even without a delay, as a call over the network is: Model.generate
        # takes a free concurrency slot without one and relies on the provider's.
        await trio.lowlevel.checkpoint()
        self.prompts.append(prompt)
        item = self._next(prompt, config)
        if isinstance(item, Exception):
            if self.delay:
                await trio.sleep(self.delay)
            raise item
        reply = item if isinstance(item, MockReply) else MockReply(text=item)
        if self.delay or reply.delay:
            await trio.sleep(self.delay + reply.delay)
        if reply.error is not None:
            raise reply.error
        usage = reply.usage or self._estimate(prompt, reply.text)
        return ModelOutput(text=reply.text, model=self.name, usage=usage, logprobs=reply.logprobs)

    async def aclose(self) -> None:
        """Nothing to release."""

    def _next(self, prompt: Prompt, config: GenerateConfig) -> MockItem:
        if self._script is not None:
            return self._script(prompt, config)
        assert self._items is not None
        try:
            return next(self._items)
        except StopIteration:
            what = (
                "the script is"
                if self._count is None
                else f"all {self._count} scripted replies are"
            )
            raise MockExhaustedError(
                f"{self.name}: call {len(self.prompts)}, but {what} used up. "
                "Script more replies, or pass cycle=True to reuse a list."
            ) from None

    def _estimate(self, prompt: Prompt, text: str) -> Usage:
        system = prompt.system_text()
        system_words = len(system.split())
        cached = 0
        if prompt.dialogue:
            stable = prompt.dialogue[: prompt.stable_dialogue_chars]
            cached = system_words + len(stable.split())
        return Usage(
            input_tokens=system_words + len(prompt.user_text().split()),
            cached_input_tokens=cached,
            output_tokens=len(text.split()),
        )


def call_key(prompt: Prompt, config: GenerateConfig) -> int:
    """A number that depends only on the prompt's text and the call's settings.

    The built-in scripts draw every choice from it, so the same call always gets the
    same reply, whatever was called before or alongside it.
    """
    fields = [
        prompt.instructions,
        prompt.history,
        prompt.dialogue,
        prompt.task,
        prompt.continue_with,
        config.max_tokens,
        config.temperature,
        list(config.stop),
        config.seed,
    ]
    if prompt.images:
        # Text prompts keep the keys they always had; an image prompt's reply depends on
        # which image it shows.
        fields.append([hashlib.sha256(image.data).hexdigest() for image in prompt.images])
    digest = hashlib.sha256(json.dumps(fields, ensure_ascii=False).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


_TIMESTAMP = re.compile(r"\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\]")
_USER_LINE = re.compile(r"^\s*User:\s*(?:\[[^\]\n]*\])?\s*(?P<text>.*)$")
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def _prompt_text(prompt: Prompt) -> str:
    return "\n".join(p for p in (prompt.history, prompt.dialogue, prompt.task) if p)


def _last_time(prompt: Prompt) -> datetime | None:
    stamps = _TIMESTAMP.findall(_prompt_text(prompt))
    return datetime.strptime(stamps[-1], _TIME_FORMAT) if stamps else None


def _response_lines(texts: Iterable[str], after: datetime | None) -> str:
    """``Response:`` lines, timestamped a typing delay apart when a start time is known."""
    lines = []
    when = after
    for text in texts:
        if when is None:
            lines.append(f"Response: {text}")
            continue
        when = when + timedelta(seconds=3 + round(0.3 * len(text)))
        lines.append(f"Response: [{when.strftime(_TIME_FORMAT)}] {text}")
    return "\n".join(lines)


_CHOICE = re.compile(r"\bonly:\s*\(?([\w-]+)\)? or \(?([\w-]+)\)?[.\s]")
_SCALE = re.compile(r"\bone whole number from (-?\d+) to (-?\d+)\b")
_PER_SPEAKER = re.compile(r"^(\S+): human or AI$", re.MULTILINE)
_TOPIC_LIST = re.compile(r"\bList (\d{1,3}) (?:such |more )?topics\b")
_TAKEN = re.compile(r"^- (.+)$", re.MULTILINE)

MOCK_TOPICS: tuple[str, ...] = (
    "a film you saw recently",
    "weekend plans",
    "cooking something new",
    "plans for the holidays",
    "the weather lately",
    "a pet you had as a child",
    "music for long drives",
    "a game you play on your phone",
    "getting up early",
    "the best pizza toppings",
    "a hobby you picked up",
    "moving to a new city",
    "favourite snacks at the cinema",
    "a book you could not put down",
    "learning to drive",
    "birthdays and parties",
    "coffee or tea",
    "a concert you went to",
    "the first job you had",
    "what to do on a rainy day",
)
"""Everyday topics ``mock/chatty`` lists when asked for topics (written for sdtt)."""


def _pick(options: tuple[str, str], key: int) -> str:
    return options[key % 2]


def _similarity_rating(dialogue: str, low: int, high: int, key: int) -> int:
    """A rating from the word overlap of the prompt's two excerpts, moved one point up or
    down or left alone by ``key`` (so it depends on the seed and temperature too)."""
    first, _, second = dialogue.partition("Excerpt 2:")
    words = [
        set(re.findall(r"[a-z]+", part.lower())) - {"excerpt", "user"} for part in (first, second)
    ]
    union = words[0] | words[1]
    overlap = len(words[0] & words[1]) / len(union) if union else 0.0
    value = low + round(overlap * (high - low)) + (key % 3) - 1
    return min(high, max(low, value))


def special_reply(prompt: Prompt, config: GenerateConfig) -> str | None:
    """The answer to a prompt that asks for one of two options or for a list of topics
    (an LLM judge's or ``sdtt topics``' prompt); None for any other prompt."""
    key = call_key(prompt, config)
    scale = _SCALE.search(prompt.task)
    if scale is not None:
        # A similarity rating: word overlap of the two excerpts, plus seeded noise.
        low, high = int(scale.group(1)), int(scale.group(2))
        return str(_similarity_rating(prompt.dialogue, low, high, key))
    speakers = _PER_SPEAKER.findall(prompt.task)
    if speakers:
        # A single-item judge's verdict on each speaker, one bit of the call's key each.
        return "\n".join(
            f"{speaker}: {_pick(('human', 'AI'), key >> n)}" for n, speaker in enumerate(speakers)
        )
    choice = _CHOICE.search(prompt.task)
    if choice is not None:
        # A judge's verdict: one of the two options, as a pure function of the call.
        return _pick((choice.group(1), choice.group(2)), key)
    wanted = _TOPIC_LIST.search(prompt.task)
    if wanted is not None:
        taken = {topic.strip().lower() for topic in _TAKEN.findall(prompt.task)}
        fresh = [topic for topic in MOCK_TOPICS if topic.lower() not in taken]
        start = key % len(fresh) if fresh else 0
        ordered = fresh[start:] + fresh[:start]
        return "\n".join(ordered[: int(wanted.group(1))])
    return None


def echo_script() -> MockScript:
    """Repeat the last ``User:`` line of the prompt as one ``Response:`` line."""

    def echo(prompt: Prompt, config: GenerateConfig) -> str:
        text = ""
        for line in (prompt.dialogue or prompt.user_text()).splitlines():
            match = _USER_LINE.match(line)
            if match:
                text = match.group("text").strip()
        if not text:
            lines = [line.strip() for line in prompt.user_text().splitlines() if line.strip()]
            text = lines[-1] if lines else "hello?"
        return _response_lines([text], _last_time(prompt))

    return echo


CHATTY_REPLIES: tuple[tuple[str, ...], ...] = (
    ("haha yeah", "honestly same", "what are you up to today?"),
    ("oh nice", "i've been meaning to try that"),
    ("wait really??", "no way", "tell me more lol"),
    ("hmm not sure tbh", "depends on the weather i guess"),
    ("lol", "ok that's fair", "i was mostly just chilling this weekend", "you?"),
    ("yeah i get that", "work has been kind of a lot lately"),
)
"""Casual bursts ``mock/chatty`` answers with."""


CHATTY_PARTNER: tuple[str, ...] = (
    "hey! how was your day",
    "omg guess what happened",
    "wait are you free later?",
    "that's so funny",
    "ok but seriously what do you think",
)
"""Lines of the other side when ``mock/chatty`` writes a whole chat."""
_ROUNDS = re.compile(r"\b(\d{1,3}) (?:more )?rounds?\b")


def _chat_lines(rounds: int, after: datetime | None, first: int) -> str:
    """``rounds`` rounds of a ``User:`` line then a ``Response:`` burst, a few seconds
    apart, the bursts taken in order from :data:`CHATTY_REPLIES` starting at ``first``."""
    when = after or datetime(2024, 1, 1, 12, 0)
    partner = itertools.cycle(CHATTY_PARTNER)
    lines = []
    for index in range(rounds):
        when += timedelta(seconds=20)
        lines.append(f"User: [{when.strftime(_TIME_FORMAT)}] {next(partner)}")
        burst = CHATTY_REPLIES[(first + index) % len(CHATTY_REPLIES)]
        response = _response_lines(burst, when)
        lines.append(response)
        when = _last_time(Prompt(instructions="", dialogue=response)) or when
    return "\n".join(lines)


_PROBABILITY = re.compile(r"whole number from 0 to 100")
"""What a belief question (reveal-mode judge) asks for."""


def probability_reply(key: int, top_logprobs: int = 0) -> MockReply:
    """A belief from 0 to 100 drawn from ``key``, with made-up log-probabilities around
    it when asked (so log-probability judges can be tested offline)."""
    value = 5 + key % 91
    logprobs = None
    if top_logprobs > 0:
        near = [value, min(100, value + 10), max(0, value - 10), 50]
        weights = [0.6, 0.2, 0.15, 0.05]
        top = tuple((str(v), math.log(w)) for v, w in zip(near, weights, strict=True))
        logprobs = (TokenLogprobs(str(value), math.log(0.6), top[:top_logprobs]),)
    return MockReply(text=str(value), logprobs=logprobs)


def chatty_script() -> MockScript:
    """Casual bursts from :data:`CHATTY_REPLIES`, timestamped after the prompt's last time.

    Which burst is drawn from :func:`call_key`, so the same call always gets the same
    reply. A prompt whose task asks for a whole chat of N rounds (a pseudo-dialogue prompt
    of :mod:`sdtt.generate`) gets N rounds of both sides instead; judge and topic prompts
    get an option or a list of topics (see :func:`special_reply`).
    """

    def chatty(prompt: Prompt, config: GenerateConfig) -> MockItem:
        if _PROBABILITY.search(prompt.task):
            return probability_reply(call_key(prompt, config), config.top_logprobs)
        special = special_reply(prompt, config)
        if special is not None:
            return special
        first = call_key(prompt, config) % len(CHATTY_REPLIES)
        wanted = _ROUNDS.search(prompt.task)
        if wanted:
            return _chat_lines(int(wanted.group(1)), _last_time(prompt), first)
        return _response_lines(CHATTY_REPLIES[first], _last_time(prompt))

    return chatty


def fail_script() -> MockScript:
    """Fail every call with a retryable server error."""

    def fail(prompt: Prompt, config: GenerateConfig) -> Exception:
        return ServerError("mock/fail: scripted server failure (HTTP 500).")

    return fail


def empty_script() -> MockScript:
    """Answer every call with output that holds no usable message (garbage)."""

    def empty(prompt: Prompt, config: GenerateConfig) -> str:
        return "   \nUser: [2024-01-01 00:00:00] (the model wrote the other side instead)\n"

    return empty


SHORT_WORDS: tuple[str, ...] = (
    "bread",
    "river",
    "happy",
    "music",
    "winter",
    "garden",
    "light",
    "friend",
    "money",
    "paper",
    "quiet",
    "travel",
    "doctor",
    "summer",
    "window",
    "sleep",
    "orange",
    "chair",
)
"""The single words ``mock/short`` answers with when asked for one word."""
SHORT_CAPTIONS: tuple[str, ...] = (
    "A small dog sits on a wooden porch in the afternoon sun.",
    "Two people walk along a busy street past a row of shops.",
    "A plate of pasta with tomato sauce rests on a kitchen table.",
    "A red bicycle leans against a brick wall near a doorway.",
    "Several boats are tied up in a calm harbour at dusk.",
    "A child in a yellow coat plays in a park covered with leaves.",
)
"""The captions ``mock/short`` answers with when shown an image."""


def short_script() -> MockScript:
    """Short answers: a caption for a prompt with an image, else one word (a word
    association), each drawn from :func:`call_key` so a call always gets the same one."""

    def short(prompt: Prompt, config: GenerateConfig) -> str:
        key = call_key(prompt, config)
        pool = SHORT_CAPTIONS if prompt.images else SHORT_WORDS
        return pool[key % len(pool)]

    return short


SCRIPTS: dict[str, Callable[[], MockScript]] = {
    "echo": echo_script,
    "chatty": chatty_script,
    "fail": fail_script,
    "empty": empty_script,
    "short": short_script,
}
"""The built-in scripts, by model name."""


def check_name(model: str) -> None:
    """Raise a :class:`ConfigError` unless ``mock/<model>`` has a built-in script."""
    if model not in SCRIPTS:
        known = ", ".join(f"mock/{name}" for name in SCRIPTS)
        raise ConfigError(
            f"mock/{model} has no script: use one of {known}, or pass replies=[...] in code."
        )


def create(
    model: str,
    *,
    replies: MockReplies | None = None,
    cycle: bool = False,
    delay: float = 0.0,
) -> MockModelAPI:
    """A mock model: ``replies`` if given, else the built-in script named ``model``."""
    if replies is None:
        factory = SCRIPTS.get(model)
        if factory is None:
            known = ", ".join(f"mock/{name}" for name in SCRIPTS)
            raise ConfigError(
                f"mock/{model} has no script: use one of {known}, or pass replies=[...] in code."
            )
        replies = factory()
    return MockModelAPI(replies, name=f"mock/{model}", cycle=cycle, delay=delay)


def availability() -> tuple[bool, str]:
    """The mock provider is always usable."""
    scripts = ", ".join(f"mock/{name}" for name in SCRIPTS)
    return True, f"built in, offline; scripts: {scripts}"
