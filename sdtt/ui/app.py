"""The ``sdtt chat`` app: a setup screen (when nothing was chosen), then the chat screen."""

from __future__ import annotations

from datetime import tzinfo
from pathlib import Path

import trio
from textual.app import App

from sdtt.engine.live_chat import ChatOutcome, ChatPlan
from sdtt.files import TRANSCRIPTS_DIR
from sdtt.ui.chat import ChatScreen
from sdtt.ui.setup import SetupScreen


class ChatApp(App[ChatOutcome | None]):
    """Live chat with a persona bot; returns the chat's outcome (``None``: no chat)."""

    CSS_PATH = "sdtt.tcss"
    TITLE = "sdtt chat"

    def __init__(
        self,
        plan: ChatPlan | None = None,
        *,
        out_dir: Path = TRANSCRIPTS_DIR,
        clock: trio.abc.Clock | None = None,
        tz: tzinfo | None = None,
        base_url: str | None = None,
    ) -> None:
        super().__init__()
        self.plan = plan
        self.base_url = base_url
        """``--base-url`` for a model chosen on the setup screen."""
        self.out_dir = out_dir
        self.clock = clock
        self.tz = tz
        self.error: BaseException | None = None
        """What stopped the engine, when something did (re-raised by the command)."""

    def on_mount(self) -> None:
        """Open the chat, or the setup screen when no plan was given."""
        if self.plan is not None:
            self.start_chat(self.plan)
        else:
            setup = SetupScreen(out_dir=self.out_dir, base_url=self.base_url)
            self.push_screen(setup, self._planned)

    def _planned(self, plan: ChatPlan | None) -> None:
        if plan is None:
            self.exit(None)
        else:
            self.start_chat(plan)

    def start_chat(self, plan: ChatPlan) -> None:
        """Open the chat screen for ``plan``; the app exits when it closes."""
        screen = ChatScreen(plan, clock=self.clock, tz=self.tz)

        def closed(outcome: ChatOutcome | None) -> None:
            self.error = screen.error
            self.exit(outcome)

        self.push_screen(screen, closed)
