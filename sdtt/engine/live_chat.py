"""One live chat with a partner: what it is made of (:class:`ChatPlan`) and the driver
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

from sdtt.dialogue.message import Message
from sdtt.dialogue.turn_index import turn_meta
from sdtt.engine.events import Event, EventSink, TeeSink
from sdtt.engine.session import Mode, SessionSettings, new_session_id, open_session
from sdtt.engine.simulate import answered_turns, persona_bot
from sdtt.models.base import GenerateConfig
from sdtt.models.model import Model, get_model
from sdtt.models.registry import base_url_for
from sdtt.personas.persona import Persona
from sdtt.personas.prompt import DEFAULT_HISTORY_TURNS

INBOX_BUFFER = 1000
"""Partner messages that may wait for the session (ping-pong holds them during a turn)."""


@dataclass(frozen=True)
class ChatPlan:
    """Everything one live chat is made of, checked."""

    persona: Persona
    model_name: str
    settings: SessionSettings
    turns: int
    out_dir: Path
    pseudo_path: Path | None = None
    pseudo: tuple[Message, ...] = ()
    pseudo_turns: int = 0
    """N: turns of pseudo-dialogue in the bot's prompt."""
    participant: bool = False
    """Hide model, persona and mode from the screen (a study participant is chatting)."""
    history_turns: int = DEFAULT_HISTORY_TURNS
    session_id: str | None = None
    started: datetime | None = None
    """Wall time of the session's clock 0 (now, by default)."""
    base_url: str | None = None
    """Endpoint of an OpenAI- or Anthropic-compatible server for the model, if any."""
    api_key_env: str | None = None
    """Environment variable holding the key for ``base_url``, if any."""

    @property
    def mode(self) -> Mode:
        """'burst' or 'pingpong'."""
        return self.settings.mode

    def meta(self) -> dict[str, Any]:
        """Provenance written into the transcript and the event log."""
        return {
            "persona": self.persona.name,
            "model": self.model_name,
            "interrogator": "human",
            "pseudo": str(self.pseudo_path) if self.pseudo_path else None,
            "pseudo_messages": len(self.pseudo),
            **turn_meta(self.pseudo_turns, self.turns),
            "mode": self.mode,
            "participant": self.participant,
        }

    def open_model(self) -> Model:
        """The model playing the persona."""
        return get_model(
            self.model_name,
            config=GenerateConfig(stop=("\nUser:",)),
            seed=self.settings.seed,
            base_url=base_url_for(self.model_name, self.base_url),
            api_key_env=self.api_key_env,
        )


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
    plan: ChatPlan,
    inbox: trio.MemoryReceiveChannel[str],
    *,
    sink: EventSink | None = None,
    on_opened: Callable[[ChatOutcome], None] | None = None,
    on_turns_done: Callable[[], None] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> ChatOutcome:
    """Run the chat of ``plan``: partner messages come from ``inbox``, events go to ``sink``.

    The transcript and event log are written to ``plan.out_dir`` as things happen.
    ``on_opened`` is called once the files exist; ``on_turns_done`` once the bot has
    answered ``plan.turns`` turns (the UI stops taking input then). Returns when those
    replies have all been sent; cancel the surrounding scope to end earlier (the files
    keep everything up to the last message).
    """
    started = plan.started or datetime.now(UTC).replace(microsecond=0)
    session_id = plan.session_id or new_session_id(started)
    plan.out_dir.mkdir(parents=True, exist_ok=True)
    outcome = ChatOutcome(
        session_id=session_id,
        transcript_path=plan.out_dir / f"{session_id}.jsonl",
        log_path=plan.out_dir / f"{session_id}.events.jsonl",
    )
    progress = _Progress()
    model = plan.open_model()
    try:
        bot = persona_bot(
            model,
            plan.persona,
            mode=plan.mode,
            history_turns=plan.history_turns,
            pseudo=plan.pseudo,
            max_messages=plan.settings.max_messages,
        )
        async with open_session(
            bot,
            plan.settings,
            sink=TeeSink(sink, progress),
            log_path=outcome.log_path,
            transcript_path=outcome.transcript_path,
            session_id=session_id,
            meta={**plan.meta(), **(meta or {})},
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
                    if outcome.turns >= plan.turns:
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
