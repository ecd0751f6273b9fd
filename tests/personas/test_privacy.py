from __future__ import annotations

import warnings

import pytest

from sdtt.personas.persona import Persona, PersonaInfo
from sdtt.personas.privacy import PrivacyWarning, warn_if_sent_remotely


def persona(*, scrubbed: bool, license: str) -> Persona:
    info = PersonaInfo(
        name="ann", source="whatsapp", license=license, attribution="x", scrubbed=scrubbed
    )
    return Persona(info=info, conversations=[])


def test_unscrubbed_private_persona_sent_remotely_is_warned_about() -> None:
    with pytest.warns(PrivacyWarning, match="--no-scrub.*openai/gpt-4o"):
        warn_if_sent_remotely(persona(scrubbed=False, license="private: consent"), "openai/gpt-4o")


@pytest.mark.parametrize(
    ("scrubbed", "license", "model"),
    [
        (True, "private: consent", "anthropic/claude-haiku-4-5"),
        (False, "MIT", "openai/gpt-4o"),
        (False, "private: consent", "local/gemma-3-270m"),
        (False, "private: consent", "mock/chatty"),
    ],
)
def test_no_warning_when_nothing_private_leaves(scrubbed: bool, license: str, model: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_if_sent_remotely(persona(scrubbed=scrubbed, license=license), model)
    assert caught == []
