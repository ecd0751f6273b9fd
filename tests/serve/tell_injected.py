"""``sdtt serve`` with a tell put back, so the Chromium tell audit can show it catches
one: a chat with the bot ends the moment the bot has answered the last turn and stopped
writing, a person's only after :data:`~sdtt.serve.room.END_GRACE` seconds of quiet, as
before both kinds of chat ended by one rule (the page switched to the verdict in the
same instant as the bot's last message). Run as
``python -m tests.serve.tell_injected serve SPEC --port N``."""

from __future__ import annotations

import sys

import trio

from sdtt.serve import room

_check_chats = room.LiveRoom._check_chats


def _bot_ends_at_once(self: room.LiveRoom) -> float:
    now = trio.current_time()
    for chat in self.chats.values():
        if chat.witness is None and not chat.composing(now) and self.answered(chat) >= self.turns:
            chat.done = True
            chat.indicator.answered()
    return _check_chats(self)


room.LiveRoom._check_chats = _bot_ends_at_once  # type: ignore[method-assign]

if __name__ == "__main__":
    from sdtt.cli import main

    sys.exit(main(sys.argv[1:]))
