from __future__ import annotations

import warnings
from pathlib import Path

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


def test_privacy_is_the_persona_field_not_the_licence_text() -> None:
    info = PersonaInfo(
        name="ann", source="telegram", license="CC-BY", attribution="x", private=True
    )
    with pytest.warns(PrivacyWarning):
        warn_if_sent_remotely(Persona(info=info, conversations=[]), "openai/gpt-4o")
    public = PersonaInfo(
        name="bo", source="corpus", license="private-use dataset", attribution="x", private=False
    )
    assert not public.private


def test_an_old_persona_file_with_a_private_licence_still_reads_as_private(
    tmp_path: Path,
) -> None:
    import json

    from sdtt.personas.store import load_persona, save_persona
    from tests.generate.helpers import make_persona

    info = PersonaInfo(name="ann", source="whatsapp", license="private: consent", attribution="x")
    persona = make_persona("ann").model_copy(update={"info": info})
    path = save_persona(persona, tmp_path / "ann.jsonl")
    # Written before the field existed: no "private" in the header record.
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header.pop("private", None)
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    old = load_persona(path)
    assert old.info.private
    with pytest.warns(PrivacyWarning):
        warn_if_sent_remotely(old, "anthropic/claude-haiku-4-5")
    # Saved again, the file says so explicitly.
    assert json.loads(save_persona(old, path).read_text().splitlines()[0])["private"] is True
