"""``sdtt serve`` with a tell put back, so the Chromium tell audit can show it would catch
one: the bot's typing indicator comes exactly 2 s after each question (no jitter), a
person's 2 + U(0, 3) s after, as the bot's came exactly ``t1`` after before the indicator
had one policy. Run as ``python -m tests.serve.tell_injected serve SPEC --port N``."""

from __future__ import annotations

import random
import sys

from sdtt.serve import room


class _NoJitter(random.Random):
    """A generator whose uniform draws are always the low end."""

    def uniform(self, a: float, b: float) -> float:
        return a


_post_init = room.Chat.__post_init__


def _bot_without_jitter(chat: room.Chat) -> None:
    _post_init(chat)
    if chat.witness is None:
        chat.indicator._rng = _NoJitter()


room.Chat.__post_init__ = _bot_without_jitter  # type: ignore[method-assign]

if __name__ == "__main__":
    from sdtt.cli import main

    sys.exit(main(sys.argv[1:]))
