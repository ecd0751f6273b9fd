"""The ``sdtt chat`` app: a setup screen (when nothing was chosen), then the chat screen."""

from __future__ import annotations

from datetime import tzinfo
from pathlib import Path

import trio
from textual.app import App

from sdtt.engine.live_chat import ChatOutcome, LiveChat
from sdtt.files import TRANSCRIPTS_DIR
from sdtt.ui.chat import ChatScreen
from sdtt.ui.setup import SetupScreen


class ChatApp(App[ChatOutcome | None]):
    """Live chat with a persona bot; returns the chat's outcome (``None``: no chat)."""

    CSS_PATH = "sdtt.tcss"
    TITLE = "sdtt chat"

    def __init__(
        self,
        live: LiveChat | None = None,
        *,
        out_dir: Path = TRANSCRIPTS_DIR,
        clock: trio.abc.Clock | None = None,
        tz: tzinfo | None = None,
        base_url: str | None = None,
    ) -> None:
        super().__init__()
        self.live = live
        self.base_url = base_url
        """``--base-url`` for a model chosen on the setup screen."""
        self.out_dir = out_dir
        self.clock = clock
        self.tz = tz
        self.error: BaseException | None = None
        """What stopped the engine, when something did (re-raised by the command)."""

    def on_mount(self) -> None:
        """Open the chat, or the setup screen when no chat was given."""
        if self.live is not None:
            self.start_chat(self.live)
        else:
            setup = SetupScreen(out_dir=self.out_dir, base_url=self.base_url)
            self.push_screen(setup, self._chosen)

    def _chosen(self, live: LiveChat | None) -> None:
        if live is None:
            self.exit(None)
        else:
            self.start_chat(live)

    def start_chat(self, live: LiveChat) -> None:
        """Open the chat screen for ``live``; the app exits when it closes."""
        screen = ChatScreen(live, clock=self.clock, tz=self.tz)

        def closed(outcome: ChatOutcome | None) -> None:
            self.error = screen.error
            self.exit(outcome)

        self.push_screen(screen, closed)
