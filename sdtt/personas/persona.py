"""The persona: a real person's chat history that a bot is prompted to write like.

In the history the persona is side B (``"response"``) and each chat partner is side A
(``"user"``). The on-disk format is described in ``personas/README.md``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sdtt.dialogue.message import SCHEMA_VERSION, Message, Transcript

OLD_PRIVATE_LICENCE_PREFIX = "private"
"""How persona files without a ``private`` field mark a private persona: the licence."""


class PersonaInfo(BaseModel):
    """Everything about a persona except its conversations (the file's first record)."""

    model_config = ConfigDict(extra="forbid")

    version: int = SCHEMA_VERSION
    name: str = Field(description="Short unique name, used on the command line.")
    source: str = Field(description="Where the history came from (corpus, export format).")
    license: str = Field(description="Licence of the source data, e.g. 'MIT'.")
    attribution: str = Field(description="Credit line for the source data.")
    description: str = Field(default="", description="Free text for researchers.")
    scrubbed: bool = Field(
        default=False, description="True when personal data was replaced by placeholders."
    )
    private: bool = Field(
        default=False,
        description="True when the history is someone's personal chats (an imported chat "
        "export) rather than a published corpus.",
    )
    created: datetime | None = Field(default=None, description="When the file was built.")
    timing: dict[str, Any] | None = Field(
        default=None, description="Fitted timing profile (typing speed, gaps, burst sizes)."
    )
    extra: dict[str, Any] = Field(default_factory=dict, description="Builder-specific details.")
    held_out: list[str] = Field(
        default_factory=list,
        description="Ids of conversations kept out of every prompt (the bot's, the "
        "interrogator's, the pseudo-dialogue writer's): the person's own chats a study "
        "with human = 'persona' shows as the human side.",
    )

    @model_validator(mode="before")
    @classmethod
    def _private_from_old_licence(cls, data: Any) -> Any:
        # Files written before the field existed marked private personas by their
        # licence text alone ("private: use only with the consent of ...").
        if isinstance(data, dict) and "private" not in data:
            licence = data.get("license")
            if isinstance(licence, str) and licence.startswith(OLD_PRIVATE_LICENCE_PREFIX):
                return {**data, "private": True}
        return data


class Persona(BaseModel):
    """A persona's metadata and its conversations, oldest first."""

    info: PersonaInfo
    conversations: list[Transcript]

    @property
    def name(self) -> str:
        """The persona's name."""
        return self.info.name

    @property
    def messages(self) -> list[Message]:
        """Every message of every conversation, in order."""
        return [message for conversation in self.conversations for message in conversation.messages]

    @property
    def prompt_conversations(self) -> list[Transcript]:
        """The conversations a prompt may show: all but the held-out ones."""
        held = set(self.info.held_out)
        return [conversation for conversation in self.conversations if conversation.id not in held]

    @property
    def held_out_conversations(self) -> list[Transcript]:
        """The conversations kept out of every prompt (``info.held_out``), in file order."""
        held = set(self.info.held_out)
        return [conversation for conversation in self.conversations if conversation.id in held]

    @model_validator(mode="after")
    def _held_out_exist(self) -> Persona:
        ids = {conversation.id for conversation in self.conversations}
        unknown = [name for name in self.info.held_out if name not in ids]
        if unknown:
            raise ValueError(f"held_out names conversations the persona lacks: {unknown}")
        if self.info.held_out and not self.prompt_conversations:
            raise ValueError("held_out holds every conversation: none is left for the prompt")
        return self
