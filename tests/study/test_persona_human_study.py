"""A whole study with ``[questionnaire] human = "persona"``: the person's own held-out
chats as the human side, never in any prompt the study sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.personas.held_out import hold_out
from sdtt.personas.store import find_persona, save_persona
from sdtt.questionnaires.questionnaire import load_key, load_questionnaire
from sdtt.study.ledger import read_ledger
from sdtt.study.runner import StudyRunner
from sdtt.study.spec import read_spec
from tests.study.helpers import CountingMocks, drive, write_spec

SHIPPED = "chitchat-32b20fa3"


def persona_spec(folder: Path, persona: str) -> Path:
    path = write_spec(folder, extra='\n[questionnaire]\nhuman = "persona"\n')
    text = path.read_text().replace(f'personas = ["{SHIPPED}"]', f'personas = ["{persona}"]')
    path.write_text(text)
    return path


def test_a_study_pairs_the_bot_with_the_persons_held_out_chats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    held = hold_out(find_persona(SHIPPED), 2, seed=5, min_turns=2)
    save_persona(held, Path("personas") / f"{held.name}.jsonl")
    spec = persona_spec(tmp_path / "s", held.name)
    mocks = CountingMocks()
    StudyRunner(read_spec(spec), drive=drive, api_factory=mocks).run()
    out = tmp_path / "s" / "out"
    folder = out / "questionnaire"
    key = load_key(folder, load_questionnaire(folder))
    tests = [t for t in key.items.values() if t.kind == "test"]
    assert tests
    held_ids = {f"{held.name}/{c.id}" for c in held.held_out_conversations}
    assert {t.human.id for t in tests} <= held_ids
    # No prompt of the bot, the interrogator or the pseudo-dialogue writer holds a message
    # of a held-out chat, though they show the others (the judges see the held-out chats:
    # they are the human side).
    sent = "\n".join(
        record["prompt"]["system"] + "\n" + record["prompt"]["user"]
        for record in read_ledger(out / "ledger.jsonl")
        if record["stage"] in ("chats", "chains")
    )
    own = {m.text for c in held.held_out_conversations for m in c.messages if len(m.text) > 25}
    shown = {m.text for c in held.prompt_conversations for m in c.messages if len(m.text) > 25}
    assert own and not any(text in sent for text in own - shown)
    assert any(text in sent for text in shown)
    report = (out / "report" / "report.md").read_text()
    assert "Human side of the pairs, per condition" in report
    assert "the imitated person's own held-out chats" in report


def test_a_persona_that_holds_nothing_out_is_refused_before_any_call(tmp_path: Path) -> None:
    spec = persona_spec(tmp_path / "s", SHIPPED)
    mocks = CountingMocks()
    with pytest.raises(InputError, match="holds out none") as caught:
        StudyRunner(read_spec(spec), drive=drive, api_factory=mocks).run()
    assert caught.value.field == "design.personas"
    assert "sdtt persona hold-out chitchat-32b20fa3" in str(caught.value)
    assert mocks.calls == []
