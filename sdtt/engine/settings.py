"""How a session behaves, apart from the trio session itself so that the command line
can take its flags' defaults from here without loading trio."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from sdtt.dialogue.condition import ChatMode
from sdtt.engine.schedule import PresetName
from sdtt.personas.bot import DEFAULT_MAX_MESSAGES
from sdtt.personas.timing import TimingProfile


class SessionSettings(BaseModel):
    """How a session behaves. Written into the event log's header."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: ChatMode = Field(default="burst", description="'burst' or 'pingpong'.")
    t1: float = Field(
        default=3.0,
        ge=0,
        description="Seconds to wait after the first unread partner message before calling "
        "the model, so a burst can finish (burst mode only).",
    )
    delays: PresetName = Field(default="paper", description="Typing-delay preset.")
    timing: TimingProfile | None = Field(
        default=None, description="The persona's timing profile for the 'fitted' preset."
    )
    max_messages: int = Field(
        default=DEFAULT_MAX_MESSAGES, ge=1, description="Most messages sent per reply."
    )
    max_model_gap: float | None = Field(
        default=120.0,
        ge=0,
        description="A timestamp the model wrote more than this many seconds after the "
        "previous message is replaced by the delay preset's time.",
    )
    opening: bool = Field(
        default=False, description="This side writes first, without waiting for a message."
    )
    seed: int = Field(default=0, description="Seeds every random draw of the session.")

    @property
    def reply_limit(self) -> int:
        """Messages allowed per reply: one in ping-pong mode."""
        return 1 if self.mode == "pingpong" else self.max_messages
