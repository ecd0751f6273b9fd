"""The websocket frames between a participant's browser and the server.

Frames are JSON objects with a ``type``. What the browser sends is checked here into
pydantic models; anything else (not JSON, unknown type, extra fields, out-of-range
values, too long, text no store can keep) is a :class:`FrameError` whose message the
participant is shown. Every text of a frame (field names too, at any depth) is checked
once, here, the same whichever store the study uses: a lone UTF-16 surrogate (JSON
allows ``"\ud800"``; it has no UTF-8 form) or U+0000 made a PostgreSQL commit fail,
and a number like ``1e999`` or ``NaN`` is no JSON a store or a browser reads back.

What the server sends never says what a witness is: a chat message is
``{"type": "message", "id": n, "chat": 1|2, "from": "you"|"them", "text": ...}`` whether
the other side is the bot or a person, and typing is ``{"type": "typing", "chat": 1|2,
"from": "them", "on": bool}`` either way. Room and participant ids are never sent; the
reconnect token is random and spells no word (see :func:`new_token`). In a market study
the server names the game a participant is in with an opaque ``game`` (in the phase and
market frames), and every question, answer, quote, trade and "done buying" must carry it
back: a frame meant for a game that has ended is refused rather than taken as part of
the next one.

A websocket message from the server carries one frame, or a list of the frames that were
ready to leave together (the page handles them in order): one message per frame cost the
server a pass of its scheduler and of its websocket layers for each.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from sdtt.serve.store import UNSTORABLE, StoredMessage

MAX_FRAME = 16_384
"""Longest frame read, in characters (a message's own limit is the spec's max_chars)."""
PID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

TOKEN_ALPHABET = "bcdfghjkmnpqrstvwxz23456789"
"""The characters of a token: no vowel (nor ``y``, ``l``, ``0`` or ``1``), so a token
can spell no word. A participant can read theirs (the page keeps it); one drawn from all of
base64 spelled ``bot`` in about one token of 1,500."""


def new_token() -> str:
    """A random token of 30 :data:`TOKEN_ALPHABET` characters (142 bits): a
    participant's reconnect token, the own person's private link, the admin page's."""
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(30))


class FrameError(Exception):
    """A frame the server refuses; the message says why, for the participant."""


class Refused(Exception):
    """A connection the server turns away, with a message for the participant."""


class MoveDevice(Refused):
    """The own person's link opened on a second device: the page asks the person to
    confirm before it takes over from the first."""


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Join(_Frame):
    """Enter the study (first frame of every connection)."""

    type: Literal["join"]
    pid: str = Field(max_length=64)
    study_id: str | None = Field(default=None, max_length=64)
    session_id: str | None = Field(default=None, max_length=64)
    token: str | None = Field(default=None, max_length=64)
    key: str | None = Field(default=None, max_length=64, description="Own-person link key.")
    move: bool = Field(
        default=False,
        description="Own person: continue on this device (the person confirmed it).",
    )


class Consent(_Frame):
    """The participant agreed to take part."""

    type: Literal["consent"]


class Decline(_Frame):
    """The participant does not agree to take part."""

    type: Literal["decline"]


class Send(_Frame):
    """A chat message."""

    type: Literal["send"]
    text: str
    chat: int = Field(default=1, ge=1, le=2, description="Which chat (three-party: 1 or 2).")
    game: str | None = Field(
        default=None,
        max_length=32,
        description="Market study: the game it is meant for (from the phase frame).",
    )


class Typing(_Frame):
    """A keystroke in the chat box."""

    type: Literal["typing"]


class BeliefFrame(_Frame):
    """The belief slider's reading (0: surely a bot, 100: surely a person)."""

    type: Literal["belief"]
    value: int = Field(ge=0, le=100)


class VerdictFrame(_Frame):
    """The interrogator's verdict."""

    type: Literal["verdict"]
    human: Literal["yes", "no", "1", "2"] = Field(
        description="Two-party: is the partner a person; three-party: which chat is."
    )
    confidence: int | None = Field(
        default=None, ge=0, le=100, description="None: the slider was not moved."
    )
    reason: str = Field(max_length=2000)
    answers: dict[str, str] = Field(
        default_factory=dict,
        max_length=50,
        description="Answers to the spec's questions, by question id.",
    )


class Report(_Frame):
    """The participant reports their chat partner (recorded for the researcher)."""

    type: Literal["report"]
    chat: int = Field(default=1, ge=1, le=2)
    reason: str = Field(default="", max_length=500)


class TradeFrame(_Frame):
    """A market bettor buys or sells securities of one kind."""

    type: Literal["trade"]
    kind: Literal["human", "computer"]
    side: Literal["buy", "sell"]
    count: int = Field(ge=1, le=1000)
    quoted: float | None = Field(
        default=None,
        description="The cost the bettor confirmed (from a quote): refused if it now costs more.",
    )
    game: str | None = Field(
        default=None,
        max_length=32,
        description="Market study: the game it is meant for (from the phase frame).",
    )


class Quote(_Frame):
    """A market bettor asks what a trade would cost, to confirm it."""

    type: Literal["quote"]
    kind: Literal["human", "computer"]
    side: Literal["buy", "sell"]
    count: int = Field(ge=1, le=1000)
    game: str | None = Field(
        default=None,
        max_length=32,
        description="Market study: the game it is meant for (from the phase frame).",
    )


class DoneBuying(_Frame):
    """A market bettor will buy no more in this game."""

    type: Literal["done_buying"]
    game: str | None = Field(
        default=None,
        max_length=32,
        description="Market study: the game it is meant for (from the phase frame).",
    )


class Continue(_Frame):
    """A market bettor has read a game's reveal and is ready for the next game."""

    type: Literal["continue"]


ClientFrame = Annotated[
    Join
    | Consent
    | Decline
    | Send
    | Typing
    | BeliefFrame
    | Quote
    | VerdictFrame
    | TradeFrame
    | DoneBuying
    | Continue
    | Report,
    Field(discriminator="type"),
]
_ADAPTER: TypeAdapter[ClientFrame] = TypeAdapter(ClientFrame)


def parse_frame(raw: str | bytes | None) -> ClientFrame:
    """The frame in ``raw``, checked; raises :class:`FrameError` saying what is wrong."""
    if not isinstance(raw, str):
        raise FrameError("Frames must be JSON text.")
    if len(raw) > MAX_FRAME:
        raise FrameError("That frame is too long.")
    try:
        data = json.loads(raw, parse_float=_finite, parse_constant=_not_a_number)
    except FrameError:
        raise
    except (ValueError, RecursionError):
        raise FrameError("That frame is not valid JSON.") from None
    if not isinstance(data, dict):
        raise FrameError("A frame must be a JSON object.")
    _check_texts(data)
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise FrameError(f"Bad frame ({where}: {first['msg']}).") from None


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise FrameError("That frame holds a number too large to use.")
    return number


def _not_a_number(text: str) -> float:
    raise FrameError(f"That frame holds {text}, which is not a number.")


def _check_texts(data: dict[str, Any]) -> None:
    """Refuse a frame holding text no store can keep: a lone surrogate or U+0000, in any
    value or field name at any depth (walked without recursion: a frame may nest
    thousands deep)."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                field = f"{where}.{key}" if where else key
                _check_text(_shown(field), key)
                stack.append((field, item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
        elif isinstance(value, str):
            _check_text(_shown(where), value)


def _check_text(field: str, text: str) -> None:
    found = UNSTORABLE.search(text)
    if found is None:
        return
    if found[0] == "\x00":  # (nobody types it)
        raise FrameError(f"Text must not contain the character U+0000 (field '{field}').")
    raise FrameError(
        "That text holds a character that is not valid Unicode (a lone surrogate, "
        f"character {found.start() + 1} of field '{field}'): remove it and try again."
    )


def _shown(field: str) -> str:
    """A field's name as a refusal shows it: printable, short, and encodable itself."""
    name = "".join(c if c.isprintable() else "?" for c in UNSTORABLE.sub("?", field))
    return name if len(name) <= 40 else name[:39] + "…"


def message_frame(message: StoredMessage, viewer: str) -> dict[str, Any]:
    """A stored message as ``viewer`` (``"interrogator"`` or ``"witness"``) sees it; a
    witness has one chat, always chat 1."""
    side = "you" if message.sender == viewer else "them"
    chat = message.chat if viewer == "interrogator" else 1
    return {"type": "message", "id": message.seq, "chat": chat, "from": side, "text": message.text}


class Tracked(dict[str, Any]):
    """A frame whose sender is told when it left for the browser (``left(True)``) or
    that it never will from here (``left(False)``: that browser was not connected here,
    or its connection ended first); sent as the plain frame."""

    def __init__(self, frame: dict[str, Any], left: Callable[[bool], None]) -> None:
        super().__init__(frame)
        self.left = left


def typing_frame(on: bool, chat: int = 1) -> dict[str, Any]:
    """The other side of chat ``chat`` started or stopped typing."""
    return {"type": "typing", "chat": chat, "from": "them", "on": on}


def refusal(text: str) -> dict[str, Any]:
    """A frame the server refused, and why (the connection stays open)."""
    return {"type": "refused", "message": text}


def stale_game(game: str | None) -> str:
    """Why a market frame for game ``game`` (None: it named none) is refused: the
    participant is in another game now, or in none."""
    if game is None:
        return (
            "Please reload the page: that did not say which game it was for, so it had no effect."
        )
    return "That was meant for a game that has ended, so it had no effect."


def dumps(frame: dict[str, Any] | list[dict[str, Any]]) -> str:
    """A frame, or a list of frames sent as one message, as compact JSON text."""
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False)


def frames_of(message: str | bytes) -> list[dict[str, Any]]:
    """The frames one message from the server carries, in order: a frame, or a list of
    frames that were ready to leave together."""
    data = json.loads(message)
    return data if isinstance(data, list) else [data]
