"""``sdtt serve`` with another tell put back, one a three-party page can show (there both
chats end together, so :mod:`tests.serve.tell_injected`'s cannot): a bot's chat shows the
bot's own typing as its session types (on when it starts, off just before its message,
never holding a message), a person's chat the one indicator policy, as before the policy
was one for both. Run as ``python -m tests.serve.tell_typing serve SPEC --port N``."""

from __future__ import annotations

import random
import sys

from sdtt.engine.events import Event, TypingStarted, TypingStopped
from sdtt.serve import room
from sdtt.serve.indicator import Indicator

_post_init = room.Chat.__post_init__
_emit = room.Chat.emit


class _Unscheduled(Indicator):
    """An indicator the interrogator's messages never schedule (so it holds nothing)."""

    def asked(self, now: float) -> None:
        pass


def _bot_chat_without_policy(self: room.Chat) -> None:
    _post_init(self)
    if self.witness is None:
        self.indicator = _Unscheduled(random.Random(), self._show_typing)


def _bot_typing_shown(self: room.Chat, event: Event) -> None:
    if self.witness is None and isinstance(event, TypingStarted | TypingStopped):
        self._show_typing(isinstance(event, TypingStarted))
    _emit(self, event)


room.Chat.__post_init__ = _bot_chat_without_policy  # type: ignore[method-assign]
room.Chat.emit = _bot_typing_shown  # type: ignore[method-assign]

if __name__ == "__main__":
    from sdtt.cli import main

    sys.exit(main(sys.argv[1:]))
