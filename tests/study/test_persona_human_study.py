"""A whole study with ``[questionnaire] human = "persona"``: the person's own held-out
chats as the human side, never in any prompt the study sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.personas.held_out import hold_out
from sdtt.personas.store import find_persona, save_persona
from sdtt.study.ledger import read_ledger
from sdtt.study.runner import StudyRunner
from sdtt.study.spec import read_spec
from sdtt.tasks.questionnaire import load_key, load_questionnaire
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


def held_out_spec(folder: Path, held_out: str, *, human: str = "persona", **kw: str) -> Path:
    """The small study with the person's chats held out by the spec itself."""
    extra = f'\n[questionnaire]\nhuman = "{human}"\nheld_out = {held_out}\n'
    return write_spec(folder, extra=extra, **kw)


def test_the_spec_holds_out_the_persons_chats_itself_and_the_bot_never_sees_them(
    tmp_path: Path,
) -> None:
    spec = held_out_spec(tmp_path / "s", "2")
    mocks = CountingMocks()
    StudyRunner(read_spec(spec), drive=drive, api_factory=mocks).run()
    out = tmp_path / "s" / "out"
    # The same draw as 'sdtt persona hold-out' with the study's seed (3) and the design's
    # live turns (2): deterministic, so the run can be checked against it.
    plain = find_persona(SHIPPED)
    held = hold_out(plain, 2, seed=3, min_turns=2, name=SHIPPED)
    assert not plain.info.held_out and len(held.info.held_out) == 2
    folder = out / "questionnaire"
    key = load_key(folder, load_questionnaire(folder))
    tests = [t for t in key.items.values() if t.kind == "test"]
    assert tests
    assert {t.human.id for t in tests} <= {f"{SHIPPED}/{c.id}" for c in held.held_out_conversations}
    # The bot's real prompts, as the ledger recorded them: none holds a held-out chat's
    # words, while the chats left in the prompt are there.
    sent = "\n".join(
        record["prompt"]["system"] + "\n" + record["prompt"]["user"]
        for record in read_ledger(out / "ledger.jsonl")
        if record["stage"] in ("chats", "chains")
    )
    own = {m.text for c in held.held_out_conversations for m in c.messages if len(m.text) > 25}
    shown = {m.text for c in held.prompt_conversations for m in c.messages if len(m.text) > 25}
    assert own - shown and not any(text in sent for text in own - shown)
    assert any(text in sent for text in shown)
    assert "the imitated person's own held-out chats" in (out / "report" / "report.md").read_text()


def test_a_share_of_the_chats_can_be_held_out(tmp_path: Path) -> None:
    from sdtt.study.personas import StudyPersonas

    study = read_spec(held_out_spec(tmp_path / "s", "0.5"))
    persona = StudyPersonas(study)(SHIPPED)
    assert len(persona.info.held_out) == 3  # half of its 6 chats
    assert persona.name == SHIPPED and len(persona.prompt_conversations) == 3


def test_the_preregistration_says_the_run_holds_the_chats_out(tmp_path: Path) -> None:
    from sdtt.study.prereg import prereg_text

    text = prereg_text(read_spec(held_out_spec(tmp_path / "s", "2")))
    assert "held out of the bot's prompt (human = persona; held_out = 2, drawn with" in text


def test_holding_out_every_chat_is_refused_before_any_call(tmp_path: Path) -> None:
    spec = held_out_spec(tmp_path / "s", "6")
    mocks = CountingMocks()
    with pytest.raises(InputError) as caught:
        StudyRunner(read_spec(spec), drive=drive, api_factory=mocks).run()
    assert caught.value.field == "questionnaire.held_out"
    assert caught.value.path == str(spec) and "\n" not in str(caught.value)
    assert mocks.calls == []


@pytest.mark.parametrize(
    ("held_out", "human", "message"),
    [
        ("2", "corpus", "it needs human = 'persona'"),
        ("1.5", "persona", "a share of chats is between 0 and 1"),
        ("0", "persona", "a count of chats must be 1 or more"),
        ("true", "persona", "not true or false"),
    ],
)
def test_a_bad_held_out_is_one_line_naming_the_spec(
    tmp_path: Path, held_out: str, human: str, message: str
) -> None:
    spec = held_out_spec(tmp_path / "s", held_out, human=human)
    with pytest.raises(InputError) as caught:
        read_spec(spec)
    text = str(caught.value)
    assert message in text and str(spec) in text and "questionnaire" in text
    assert "\n" not in text


def test_people_holding_the_chats_get_the_persona_as_the_study_holds_it(tmp_path: Path) -> None:
    spec = held_out_spec(tmp_path / "s", "2", interrogator="human")
    result = StudyRunner(read_spec(spec), drive=drive, api_factory=CountingMocks()).run()
    assert not result.finished
    path = tmp_path / "s" / "out" / "personas" / f"{SHIPPED}.jsonl"
    assert any(f"sdtt chat --persona {path}" in line for line in result.next), result.next
    written = find_persona(path)
    expected = hold_out(find_persona(SHIPPED), 2, seed=3, min_turns=2, name=SHIPPED)
    assert written.info.held_out == expected.info.held_out
