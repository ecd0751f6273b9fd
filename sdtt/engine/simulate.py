"""A simulated live chat: the persona bot and a simulated interrogator, both on the engine.

Two sessions run side by side and relay each other's sent messages: whatever the
interrogator's session sends arrives in the bot's session as a partner message, and the
other way round. The bot's session is the one recorded (its transcript and event log);
the interrogator's session only drives it.

The chat stops after ``turns`` burst turns: once the bot has answered the ``turns``-th
burst of the interrogator, nothing more is relayed to the bot, the bot finishes the reply
it is typing, and both sessions close. It also stops when neither side will ever write
again (e.g. a script ran out, or a model kept failing), or after ``max_duration``
seconds of session clock.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar, TypeVarTuple, Unpack

import trio

from sdtt.dialogue.condition import Condition
from sdtt.dialogue.message import Message, Transcript, segment_turns
from sdtt.dialogue.store import read_transcripts, write_transcripts
from sdtt.engine.events import Event, EventSink, MessageSent, TeeSink
from sdtt.engine.interrogator import interrogator_settings as default_interrogator_settings
from sdtt.engine.schedule import preset_decides
from sdtt.engine.session import (
    ChatMode,
    Replier,
    Session,
    SessionSettings,
    new_session_id,
    open_session,
)
from sdtt.engine.virtual_clock import VirtualClock
from sdtt.models.base import GenerateConfig, Generator, ModelOutput, Prompt, Usage
from sdtt.models.registry import provider_of
from sdtt.personas.bot import DEFAULT_MAX_MESSAGES, PersonaBot
from sdtt.personas.character import OUT_OF_CHARACTER
from sdtt.personas.persona import Persona
from sdtt.personas.privacy import warn_if_sent_remotely
from sdtt.personas.prompt import DEFAULT_HISTORY_TURNS, BotPromptBuilder
from sdtt.seeds import derive_seed

RELAY_BUFFER = 1000
"""Messages that may wait to be relayed to the other session."""

Stop = Literal["turns", "stalled", "time"]
Result = TypeVar("Result")
Arguments = TypeVarTuple("Arguments")


def answered_turns(messages: list[Message]) -> int:
    """Burst turns in which the bot (side B) has written."""
    return sum(1 for turn in segment_turns(messages) if turn.response)


@dataclass(frozen=True)
class SimulationResult:
    """What a simulated chat produced."""

    transcript: Transcript
    turns: int
    """Burst turns the bot answered."""
    stopped: Stop
    """'turns' (reached), 'stalled' (nobody would write again) or 'time' (max_duration)."""
    duration: float
    """Seconds of session clock."""
    transcript_path: Path | None
    log_path: Path | None
    bot_usage: Usage
    interrogator_usage: Usage
    bot_errors: int
    interrogator_errors: int
    out_of_character: dict[str, int]
    """Messages each side's replies held that broke character (repeated its instructions
    or said it is an AI), by side ("bot", "interrogator"): none was sent, each reply was
    asked again. The transcript records the same under ``meta["out_of_character"]``."""


class _Relay:
    """An event sink that passes one session's sent messages on, and wakes the watcher."""

    def __init__(self, channel: trio.MemorySendChannel[str], watcher: _Watcher) -> None:
        self.channel = channel
        self.watcher = watcher
        self.open = True
        self.in_flight = 0
        """Messages taken from the session but not yet handed to the other one."""

    def emit(self, event: Event) -> None:
        if self.open and isinstance(event, MessageSent):
            self.in_flight += 1
            self.channel.send_nowait(event.text)
        self.watcher.poke()


class _Watcher:
    """Lets the supervising task sleep until either session reports something."""

    def __init__(self) -> None:
        self._event = trio.Event()

    def poke(self) -> None:
        event, self._event = self._event, trio.Event()
        event.set()

    async def wait(self) -> None:
        await self._event.wait()


async def _relay(
    source: trio.MemoryReceiveChannel[str],
    target: Session,
    relay: _Relay,
    *,
    limit: int | None = None,
    finished: Callable[[], bool] = lambda: False,
) -> None:
    """Hand each message to ``target``; with ``limit``, close the relay (dropping the
    message) once ``target`` has answered ``limit`` turns, as a message from now on would
    open turn ``limit + 1``. A message sent once ``finished()`` holds (the bot's reply to
    the last turn) is dropped too: an answer to it would never be relayed, and whether
    its call was made before the chat stopped would depend on how trio ran the tasks.

    The check is made at the moment of delivery, after ``target`` did whatever was due
    by then: a bot message and an interrogator message sent at the same instant count in
    the order the burst rules give (the bot's own send first) and never in the order
    trio happened to run the two sessions' timers.
    """
    async for text in source:
        try:
            if relay.open and limit is not None:
                target.catch_up()
                if answered_turns(target.messages) >= limit:
                    relay.open = False
            if relay.open and finished():
                relay.open = False
            if relay.open:
                await target.send_user_message(text)
        finally:
            relay.in_flight -= 1
            relay.watcher.poke()


INTERROGATOR = "interrogator"
"""The role name the simulated interrogator's seed derives from."""


async def run_simulated_chat(
    bot: Replier,
    interrogator: Replier,
    *,
    turns: int,
    bot_settings: SessionSettings | None = None,
    interrogator_settings: SessionSettings | None = None,
    sink: EventSink | None = None,
    interrogator_sink: EventSink | None = None,
    out_dir: str | Path | None = None,
    session_id: str | None = None,
    topic: str | None = None,
    meta: Mapping[str, Any] | None = None,
    condition: Condition | None = None,
    started: datetime | None = None,
    max_duration: float | None = None,
) -> SimulationResult:
    """Let ``interrogator`` chat with ``bot`` for ``turns`` burst turns.

    The interrogator opens. With ``out_dir``, the bot session's transcript is written to
    ``<out_dir>/<id>.jsonl`` and its event log to ``<out_dir>/<id>.events.jsonl``.
    ``sink`` gets the bot session's events, ``interrogator_sink`` the interrogator's.
    ``condition`` is recorded with the transcript (its X defaults to ``turns``); the
    interrogator's seed derives from the bot's (:func:`~sdtt.seeds.derive_seed`).
    Once the chat is over, the transcript's meta gets ``out_of_character``: each side's
    messages caught breaking character and left unsent (the report counts them).
    """
    if turns < 1:
        raise ValueError("turns must be at least 1")
    bot_settings = bot_settings or SessionSettings()
    interrogator_settings = interrogator_settings or default_interrogator_settings(
        bot_settings.mode, derive_seed(bot_settings.seed, INTERROGATOR)
    )
    interrogator_settings = interrogator_settings.model_copy(
        update={"opening": True, "mode": bot_settings.mode}
    )
    started = started or datetime.now(UTC)
    session_id = session_id or new_session_id(started)
    transcript_path = log_path = None
    if out_dir is not None:
        transcript_path = Path(out_dir) / f"{session_id}.jsonl"
        log_path = Path(out_dir) / f"{session_id}.events.jsonl"
    meta = {**(meta or {}), "simulated": True}
    condition = condition or Condition()
    if condition.live_turns is None:
        condition = condition.model_copy(update={"live_turns": turns})

    watcher = _Watcher()
    to_interrogator, from_bot = trio.open_memory_channel[str](RELAY_BUFFER)
    to_bot, from_interrogator = trio.open_memory_channel[str](RELAY_BUFFER)
    bot_relay = _Relay(to_interrogator, watcher)
    interrogator_relay = _Relay(to_bot, watcher)
    stopped: Stop = "time"
    async with open_session(
        bot,
        bot_settings,
        sink=TeeSink(sink, bot_relay),
        log_path=log_path,
        transcript_path=transcript_path,
        session_id=session_id,
        topic=topic,
        meta=meta,
        condition=condition,
        started=started,
    ) as bot_session:
        origin = trio.current_time()
        async with (
            open_session(
                interrogator,
                interrogator_settings,
                sink=TeeSink(interrogator_sink, interrogator_relay),
                session_id=f"{session_id}-interrogator",
                topic=topic,
                started=started,
            ) as interrogator_session,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(
                partial(_relay, finished=lambda: answered_turns(bot_session.messages) >= turns),
                from_bot,
                interrogator_session,
                bot_relay,
            )
            nursery.start_soon(
                partial(_relay, limit=turns), from_interrogator, bot_session, interrogator_relay
            )
            deadline = origin + max_duration if max_duration is not None else float("inf")
            with trio.move_on_at(deadline):
                while True:
                    if interrogator_relay.open and answered_turns(bot_session.messages) >= turns:
                        # Whatever the interrogator writes from now on would open turn
                        # turns + 1: stop relaying and let the bot finish its reply.
                        interrogator_relay.open = False
                    if not interrogator_relay.open and bot_session.is_idle:
                        stopped = "turns"
                        break
                    quiet = bot_session.is_idle and interrogator_session.is_idle
                    if quiet and not (bot_relay.in_flight or interrogator_relay.in_flight):
                        stopped = "stalled"
                        break
                    await watcher.wait()
            nursery.cancel_scope.cancel()
        duration = trio.current_time() - origin
    caught = {
        "bot": bot_session.out_of_character,
        "interrogator": interrogator_session.out_of_character,
    }
    transcript = bot_session.transcript
    transcript = transcript.model_copy(
        update={"meta": {**transcript.meta, OUT_OF_CHARACTER: caught}}
    )
    if transcript_path is not None:
        _record_out_of_character(transcript_path, caught)
    return SimulationResult(
        transcript=transcript,
        turns=answered_turns(bot_session.messages),
        stopped=stopped,
        duration=duration,
        transcript_path=transcript_path,
        log_path=log_path,
        bot_usage=bot_session.usage,
        interrogator_usage=interrogator_session.usage,
        bot_errors=bot_session.errors,
        interrogator_errors=interrogator_session.errors,
        out_of_character=caught,
    )


def _record_out_of_character(path: Path, caught: dict[str, int]) -> None:
    """Write ``caught`` into the transcript's meta at ``path``: known only once the chat
    is over, after its header was written."""
    [written] = read_transcripts(path)
    meta = {**written.meta, OUT_OF_CHARACTER: caught}
    write_transcripts(path, [written.model_copy(update={"meta": meta})])


def run_on_virtual_clock(
    async_fn: Callable[[Unpack[Arguments]], Awaitable[Result]], *args: *Arguments
) -> Result:
    """``trio.run`` on a :class:`~sdtt.engine.virtual_clock.VirtualClock`, which jumps
    whenever every task waits: a chat of many minutes runs in a moment, with the same
    timing on every run.

    Wrap models that compute outside trio (threads, network) with :class:`RealTimeCalls`
    (:func:`persona_bot` does), or the clock would leap ahead while they think.
    """
    return trio.run(async_fn, *args, clock=VirtualClock())


THINKING_SECONDS = 0.5
"""Virtual seconds every answer of a real-time model takes, before its length counts."""
THINKING_CHARS_PER_SECOND = 200.0
"""How fast a real-time model writes on a virtual clock: about 50 tokens a second at four
characters a token, the pace of a served model."""


def thinking_time(output: ModelOutput) -> float:
    """Virtual seconds a real-time model's answer takes on a virtual clock:
    :data:`THINKING_SECONDS` plus its characters at :data:`THINKING_CHARS_PER_SECOND`.

    A rule of the answer alone, so every run of a simulation (resumed, or answered again
    from a recording) times each call alike; the answer's text rather than its token
    count, as every provider and a recording give the text, not all the tokens. Never
    zero: the answer lands after whatever else was due when the call started.
    """
    return THINKING_SECONDS + len(output.text) / THINKING_CHARS_PER_SECOND


class RealTimeCalls:
    """A model whose calls take a stated thinking time on a virtual clock, whatever they
    really take.

    A model that computes in a thread (the local provider) or over the network leaves
    every trio task waiting, so a jumping clock would leap to the next timer (often the
    call's own timeout) while it thinks. During each call this wrapper holds the
    :class:`~sdtt.engine.virtual_clock.VirtualClock` still
    (:meth:`~sdtt.engine.virtual_clock.VirtualClock.standing_still`): the call's own
    timeouts and retries run at real speed while nothing else in the simulation moves.
    Once the answer is in, :func:`thinking_time` passes in virtual time before it is
    returned (its ``latency`` says so); what the partner writes meanwhile was written
    during the call, as with any model (the session asks again at once, and the unsent
    rest of this reply goes stale). A call that fails takes no virtual time. The real
    latency, and the retries the call needed (its ``attempts`` is 1: a resumed or replayed
    run gets the answer at the first try), depend on the server's luck: they are for a
    caller's own log (a study's run log) and never reach the chat. On any other clock
    this wrapper changes nothing.
    """

    def __init__(self, model: Generator) -> None:
        self.model = model

    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return str(getattr(self.model, "name", "model"))

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        """Call the wrapped model with the virtual clock held still, then let the
        answer's thinking time pass."""
        clock = trio.lowlevel.current_clock()
        if not isinstance(clock, VirtualClock):
            return await self.model.generate(prompt, config)
        with clock.standing_still():
            output = await self.model.generate(prompt, config)
        seconds = thinking_time(output)
        await trio.sleep(seconds)
        return replace(output, latency=seconds, attempts=1)


def for_virtual_clock(model: Generator) -> Generator:
    """``model`` ready for a virtual clock: models whose provider waits only through
    trio's clock (mock) as they are, everything else wrapped in :class:`RealTimeCalls`."""
    provider = provider_of(str(getattr(model, "name", "")))
    if provider is not None and provider.virtual_time:
        return model
    return RealTimeCalls(model)


DEMO_TOPIC = "If money were no object, how would you spend your time?"
"""A topic prompt of the chitchat corpus, so demo chats pair with real chats on it."""

DEMO_SCRIPT: tuple[tuple[str, ...], ...] = (
    ("hey!", "ok random question, if money were no object how would you spend your time"),
    ("haha fair enough", "i think i'd travel a lot. where would you go first?"),
    ("oh nice", "i've always wanted to see japan honestly"),
)
"""A short interrogator script for demos on :data:`DEMO_TOPIC`: three bursts, one per turn."""


def persona_bot(
    model: Generator,
    persona: Persona,
    *,
    mode: ChatMode = "burst",
    history_turns: int = DEFAULT_HISTORY_TURNS,
    pseudo: Sequence[Message] = (),
    max_messages: int = DEFAULT_MAX_MESSAGES,
    virtual_clock: bool = False,
    seed: int | None = None,
) -> PersonaBot:
    """A persona bot set up for the engine.

    Timestamps the model leaves out are timed by the session's delay preset alone
    (:func:`~sdtt.engine.schedule.preset_decides`); for a virtual clock the model is
    prepared with :func:`for_virtual_clock`. ``seed`` is the sampling seed of its calls
    (the condition's seed), sent to every backend that takes one.
    """
    warn_if_sent_remotely(persona, getattr(model, "name", ""))
    return PersonaBot(
        model=for_virtual_clock(model) if virtual_clock else model,
        prompts=BotPromptBuilder.for_persona(
            persona, mode=mode, history_turns=history_turns, pseudo=pseudo
        ),
        config=GenerateConfig(stop=("\nUser:",), seed=seed),
        max_messages=max_messages,
        resample=preset_decides,
    )
