"""The setup screen of ``sdtt chat``: pick persona, model, pseudo-dialogue file and mode."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal
from textual.screen import Screen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Footer, Input, Label, Select, Static

from sdtt.dialogue.condition import CHAT_MODES, ChatMode
from sdtt.engine.live_chat import LiveChat
from sdtt.engine.schedule import PRESETS, PresetName
from sdtt.errors import SdttError
from sdtt.files import TRANSCRIPTS_DIR
from sdtt.models.registry import DEFAULT_MODEL, PROVIDERS
from sdtt.personas.store import DEFAULT_PERSONA, list_personas
from sdtt.ui.chat_setup import build_live_chat

DEFAULT_TURNS = 10


def known_personas() -> list[str]:
    """Names of the personas that load (shipped and in ./personas)."""
    return [entry.name for entry in list_personas() if entry.persona is not None]


def default_model() -> str:
    """The model the form starts with: the embedded one when it can run here, else
    ``mock/chatty``, so Start never fails on a missing ``local`` extra."""
    from sdtt.models.gguf import KNOWN_MODELS, is_installed

    name = DEFAULT_MODEL.partition("/")[2]
    if is_installed("llama_cpp") and KNOWN_MODELS[name].status()[0]:
        return DEFAULT_MODEL
    return "mock/chatty"


def model_examples() -> list[str]:
    """Model names to suggest: one example per provider, mock models first."""
    return [
        "mock/chatty",
        "mock/echo",
        *(p.example for p in PROVIDERS.values() if p.name != "mock"),
    ]


class SetupScreen(Screen[LiveChat | None]):
    """Choose what to chat with; dismissed with a checked :class:`LiveChat`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "start", "Start chat", priority=True),
        Binding("ctrl+q", "cancel", "Quit", priority=True),
        Binding("ctrl+c", "cancel", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        *,
        personas: Sequence[str] | None = None,
        models: Sequence[str] | None = None,
        out_dir: Path = TRANSCRIPTS_DIR,
        base_url: str | None = None,
    ) -> None:
        super().__init__()
        self.base_url = base_url
        self.personas = list(personas) if personas is not None else known_personas()
        self.models = list(models) if models is not None else model_examples()
        self.out_dir = out_dir

    def compose(self) -> ComposeResult:
        """A form: persona, model, pseudo file, mode, delays, turns."""
        yield Static(Text("Start a chat with a persona bot"), id="setup-title")
        persona = DEFAULT_PERSONA if DEFAULT_PERSONA in self.personas else Select.NULL
        with Grid(id="setup-form"):
            yield Label("Persona")
            yield Select(
                [(name, name) for name in self.personas],
                value=persona,
                id="persona",
                prompt="choose a persona",
            )
            yield Label("Model")
            yield Input(
                value=default_model(),
                id="model",
                suggester=SuggestFromList(self.models, case_sensitive=False),
                placeholder="provider/model, e.g. mock/chatty",
            )
            yield Label("Pseudo file")
            yield Input(id="pseudo", placeholder="optional: chain file from 'sdtt generate'")
            yield Label("Mode, turns")
            with Horizontal(id="setup-mode"):
                yield Select(
                    [(m, m) for m in CHAT_MODES], value="burst", id="mode", allow_blank=False
                )
                yield Select(
                    [(f"delays: {p}", p) for p in PRESETS],
                    value="paper",
                    id="delays",
                    allow_blank=False,
                )
                yield Input(value=str(DEFAULT_TURNS), id="turns", type="integer")
        yield Static(id="setup-error")
        with Horizontal(id="setup-buttons"):
            yield Button("Start chat", id="start", variant="primary")
            yield Button("Quit", id="quit")
        yield Footer()

    def on_mount(self) -> None:
        """Focus the first field."""
        self.query_one("#persona", Select).focus()

    @on(Button.Pressed, "#start")
    @on(Input.Submitted)
    def action_start(self) -> None:
        """Check the choices; start the chat or say what is wrong."""
        error = self.query_one("#setup-error", Static)
        persona = self.query_one("#persona", Select).value
        if persona is Select.NULL:
            error.update(Text("Choose a persona."))
            return
        pseudo = self.query_one("#pseudo", Input).value.strip()
        turns_text = self.query_one("#turns", Input).value.strip()
        try:
            turns = int(turns_text)
        except ValueError:
            error.update(Text(f"Turns must be a whole number, not {turns_text!r}."))
            return
        model = self.query_one("#model", Input).value.strip()
        if "/" not in model:
            error.update(Text("Give the model as provider/model, e.g. mock/chatty."))
            return
        try:
            live = build_live_chat(
                persona=str(persona),
                model=model,
                pseudo=Path(pseudo) if pseudo else None,
                mode=cast(ChatMode, self.query_one("#mode", Select).value),
                delays=cast(PresetName, self.query_one("#delays", Select).value),
                turns=turns,
                out_dir=self.out_dir,
                base_url=self.base_url,
            )
        except SdttError as problem:
            error.update(Text(str(problem)))
            return
        self.dismiss(live)

    @on(Button.Pressed, "#quit")
    def action_cancel(self) -> None:
        """Leave without chatting."""
        self.dismiss(None)
