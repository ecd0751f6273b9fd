"""One live chat with a partner: what it is made of (:class:`LiveChat`) and the driver
that runs it on the burst engine, with no user interface in it.

:func:`drive_chat` runs one session: it hands the partner's messages to the session as
they arrive on a memory channel and ends once the bot has answered the chosen number of
turns. The Textual chat app (:mod:`sdtt.ui.chat`) and any other front end only move text
in and events out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio

from sdtt.dialogue.condition import ChatMode, Condition
from sdtt.dialogue.message import Message
from sdtt.engine.events import Event, EventSink, TeeSink
from sdtt.engine.opening import Options, open_bot, open_model
from sdtt.engine.session import new_session_id, open_session
from sdtt.engine.simulate import answered_turns
from sdtt.models.model import Model
from sdtt.personas.persona import Persona

INBOX_BUFFER = 1000
"""Partner messages that may wait for the session (ping-pong holds them during a turn)."""


@dataclass(frozen=True)
class LiveChat:
    """A live chat with a person, checked before it starts: its condition (with the
    persona and pseudo-dialogue already loaded) and where and how it runs."""

    condition: Condition
    """Persona, model, mode, pseudo-dialogue and N, X (``live_turns``), delays, seed."""
    persona: Persona
    out_dir: Path
    pseudo: tuple[Message, ...] = ()
    options: Options = field(default_factory=Options)
    participant: bool = False
    """Hide model, persona and mode from the screen (a study participant is chatting)."""
    session_id: str | None = None
    started: datetime | None = None
    """Wall time of the session's clock 0 (now, by default)."""
    base_url: str | None = None
    """Endpoint of an OpenAI- or Anthropic-compatible server for the model, if any."""
    api_key_env: str | None = None
    """Environment variable holding the key for ``base_url``, if any."""

    @property
    def model_name(self) -> str:
        """The provider/model playing the persona."""
        return str(self.condition.model)

    @property
    def turns(self) -> int:
        """X: the turns the bot answers before the chat ends."""
        return self.condition.live_turns or 0

    @property
    def mode(self) -> ChatMode:
        """'burst' or 'pingpong'."""
        return self.condition.mode

    def open_model(self) -> Model:
        """The model playing the persona (at ``base_url``, if given)."""
        return open_model(self.condition, base_url=self.base_url, api_key_env=self.api_key_env)

    def meta(self) -> dict[str, Any]:
        """Free-form provenance written beside the condition."""
        return {"pseudo_messages": len(self.pseudo), "participant": self.participant}


@dataclass
class ChatOutcome:
    """How a live chat ended."""

    session_id: str
    transcript_path: Path
    log_path: Path
    turns: int = 0
    messages: int = 0
    finished: bool = False
    """True when the turn count was reached (False: the user quit, or it failed)."""
    errors: int = 0


@dataclass
class _Progress:
    """Wakes the driver on every event of the session."""

    changed: trio.Event = field(default_factory=trio.Event)

    def emit(self, event: Event) -> None:
        """Wake whoever waits for a change."""
        changed, self.changed = self.changed, trio.Event()
        changed.set()


async def drive_chat(
    chat: LiveChat,
    inbox: trio.MemoryReceiveChannel[str],
    *,
    sink: EventSink | None = None,
    on_opened: Callable[[ChatOutcome], None] | None = None,
    on_turns_done: Callable[[], None] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> ChatOutcome:
    """Run ``chat``: partner messages come from ``inbox``, events go to ``sink``.

    The transcript and event log are written to ``chat.out_dir`` as things happen.
    ``on_opened`` is called once the files exist; ``on_turns_done`` once the bot has
    answered ``chat.turns`` turns (the UI stops taking input then). Returns when those
    replies have all been sent; cancel the surrounding scope to end earlier (the files
    keep everything up to the last message).
    """
    started = chat.started or datetime.now(UTC).replace(microsecond=0)
    session_id = chat.session_id or new_session_id(started)
    chat.out_dir.mkdir(parents=True, exist_ok=True)
    outcome = ChatOutcome(
        session_id=session_id,
        transcript_path=chat.out_dir / f"{session_id}.jsonl",
        log_path=chat.out_dir / f"{session_id}.events.jsonl",
    )
    progress = _Progress()
    model = chat.open_model()
    try:
        setup = open_bot(
            chat.condition, model, options=chat.options, persona=chat.persona, pseudo=chat.pseudo
        )
        async with open_session(
            setup.bot,
            setup.settings,
            sink=TeeSink(sink, progress),
            log_path=outcome.log_path,
            transcript_path=outcome.transcript_path,
            session_id=session_id,
            condition=setup.condition,
            meta={**chat.meta(), **(meta or {})},
            started=started,
        ) as session:
            if on_opened is not None:
                on_opened(outcome)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_forward, inbox, session.send_user_message)
                while True:
                    outcome.turns = answered_turns(session.messages)
                    outcome.messages = len(session.messages)
                    outcome.errors = session.errors
                    if outcome.turns >= chat.turns:
                        if not outcome.finished and on_turns_done is not None:
                            on_turns_done()
                        outcome.finished = True
                        if session.is_idle:
                            break
                    await progress.changed.wait()
                nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await model.aclose()
    return outcome


async def _forward(inbox: trio.MemoryReceiveChannel[str], send: Callable[[str], Any]) -> None:
    async for text in inbox:
        await send(text)
