"""The burst engine: live chat sessions on trio (method.md, "Burst engine").

- :mod:`sdtt.engine.schedule`: typing delays, reply schedules, stale messages (pure);
- :mod:`sdtt.engine.burst`: the burst rules (the Input Listener, Model Caller and Output
  Sender of method.md) as a state machine with no I/O: events in, actions and a deadline
  out;
- :mod:`sdtt.engine.session`: ``open_session``, the trio driver of that state machine,
  with its :mod:`~sdtt.engine.settings`;
- :mod:`sdtt.engine.events`: what a session reports, its JSONL log and replay;
- :mod:`sdtt.engine.opening`: ``open_bot``, a chat's condition opened into the persona
  bot, its session settings and the condition its header records;
- :mod:`sdtt.engine.live_chat`: one live chat with a partner (the chat app's driver);
- :mod:`sdtt.engine.interrogator` and :mod:`sdtt.engine.simulate`: a simulated human
  side, and simulated chats between it and the persona bot;
- :mod:`sdtt.engine.virtual_clock`: the trio clock simulations run on (waits take no
  time, and neither does a model's real latency: its answer's thinking time does);
- :mod:`sdtt.engine.latency`: garbage-collector settings for hosting many sessions.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sdtt.engine.events import (
        Event,
        EventSink,
        ListSink,
        Replay,
        TeeSink,
        play,
        read_event_log,
    )
    from sdtt.engine.session import Session, SessionClosedError, open_session
    from sdtt.engine.settings import SessionSettings
    from sdtt.engine.simulate import SimulationResult, run_on_virtual_clock, run_simulated_chat

__all__ = [
    "Event",
    "EventSink",
    "ListSink",
    "Replay",
    "Session",
    "SessionClosedError",
    "SessionSettings",
    "SimulationResult",
    "TeeSink",
    "open_session",
    "play",
    "read_event_log",
    "run_on_virtual_clock",
    "run_simulated_chat",
]
"""The engine's face, each name imported from its module on first use: the pure
schedule (read by command parsers) must not load trio."""

_HOMES = {
    "Event": "events",
    "EventSink": "events",
    "ListSink": "events",
    "Replay": "events",
    "TeeSink": "events",
    "play": "events",
    "read_event_log": "events",
    "Session": "session",
    "SessionClosedError": "session",
    "SessionSettings": "settings",
    "open_session": "session",
    "SimulationResult": "simulate",
    "run_on_virtual_clock": "simulate",
    "run_simulated_chat": "simulate",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
