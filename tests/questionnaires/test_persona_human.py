"""human = "persona": the imitated person's own chats, held out of every prompt, as the
human side of the pairs."""

from __future__ import annotations

import json
import random
from datetime import timedelta
from pathlib import Path

import pytest
import trio

from sdtt.cli import main
from sdtt.dialogue.condition import Condition
from sdtt.dialogue.store import write_transcripts
from sdtt.engine.opening import open_bot
from sdtt.errors import InputError
from sdtt.models.base import GenerateConfig, ModelOutput, Prompt
from sdtt.models.model import Model
from sdtt.personas.held_out import hold_out
from sdtt.personas.persona import Persona, PersonaInfo
from sdtt.personas.store import find_persona, save_persona
from sdtt.questionnaires.pipeline import build_study
from sdtt.tasks.study import PairSpec, StudySpec
from tests.questionnaires.helpers import START, conversation

TOPIC = "What's your favorite smell?"


def own_chats(topics: list[str | None]) -> list:
    """The person's chats: 12 turns each, their words tagged by chat ("mine3 replies 0")."""
    return [
        conversation(
            f"conv-{n:04d}",
            topic,
            12,
            tag=f"mine{n}",
            start=START + timedelta(days=n),
        )
        for n, topic in enumerate(topics, start=1)
    ]


@pytest.fixture
def maya(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Persona:
    """Persona 'maya' (six chats of a chat export: no topics) and 'maya-held-out' holding
    three of them out, in ./personas/."""
    monkeypatch.chdir(tmp_path)
    info = PersonaInfo(name="maya", source="whatsapp chat export", license="p", attribution="x")
    persona = Persona(info=info, conversations=own_chats([None] * 6))
    save_persona(persona, Path("personas/maya.jsonl"))
    held = hold_out(persona, 3, seed=7)
    save_persona(held, Path("personas/maya-held-out.jsonl"))
    return held


class Recording:
    """A model API that records every prompt and answers with one line."""

    name = "scripted/x"

    def __init__(self) -> None:
        self.prompts: list[Prompt] = []

    async def generate(self, prompt: Prompt, config: GenerateConfig) -> ModelOutput:
        self.prompts.append(prompt)
        return ModelOutput(text="Response: [00:00:05] sure", model=self.name)

    async def aclose(self) -> None:
        return None


def test_held_out_chats_are_never_in_the_bots_actual_prompt(maya: Persona) -> None:
    api = Recording()
    condition = Condition(persona="maya-held-out", model="scripted/x", seed=1)
    setup = open_bot(condition, Model(api))
    from sdtt.dialogue.message import Message

    hello = [Message(side="user", text="hi", time=START)]
    trio.run(setup.bot.reply, hello, START + timedelta(seconds=5), random.Random(0))
    [prompt] = api.prompts
    sent = "\n".join([prompt.instructions, prompt.history, prompt.dialogue])
    held = {c.id for c in maya.held_out_conversations}
    assert len(held) == 3
    for chat in maya.conversations:
        tag = chat.messages[1].text  # "mineN replies 0"
        if chat.id in held:
            assert tag.split()[0] + " " not in sent  # not a word of a held-out chat
        else:
            assert tag.split()[0] + " " in sent
    # The persona as imported (nothing held out) shows them all: the check can fail.
    plain = open_bot(condition.model_copy(update={"persona": "maya"}), Model(api))
    trio.run(plain.bot.reply, hello, START + timedelta(seconds=5), random.Random(0))
    assert all(
        c.messages[1].text.split()[0] + " " in api.prompts[1].history for c in maya.conversations
    )


def bot_chats(persona: str, count: int = 2) -> list:
    return [
        conversation(
            f"bot-{n}",
            TOPIC,
            6,
            tag=f"bot{n}",
            meta={"persona": persona, "model": "mock/x", "pseudo_turns": 0},
        )
        for n in range(count)
    ]


def spec(human: str = "persona") -> StudySpec:
    return StudySpec(
        name="own",
        seed=2,
        x_turns=[4],
        catch_pairs=0,
        pairs=[PairSpec(bot="bots.jsonl", human=human)],
    )


def test_the_human_side_is_the_persons_own_held_out_chats(maya: Persona, tmp_path: Path) -> None:
    write_transcripts(tmp_path / "bots.jsonl", bot_chats("maya-held-out"))
    built = build_study(spec(), base=tmp_path)
    held = {c.id for c in maya.held_out_conversations}
    tests = [t for t in built.key.items.values() if t.kind == "test"]
    assert len(tests) == 2
    humans = {t.human.id for t in tests}
    assert {h.split("/", 1)[1] for h in humans} <= held
    assert len(humans) == 2  # each held-out chat at most once
    for truth in tests:
        assert truth.human.meta["held_out_from"] == "maya-held-out"
    # The same window rule as any human side: the person's chat shows the bot's turns 3-6.
    item = next(i for i in built.questionnaire.items if built.key.items[i.id].kind == "test")
    truth = built.key.items[item.id]
    human_lines = item.chats[2 - truth.bot_position]
    assert human_lines[0].text.endswith("asks 2")
    # Nothing a judge receives names the persona.
    assert "maya" not in json.dumps(built.questionnaire.model_dump(mode="json"))


def test_topics_are_matched_where_the_held_out_chats_have_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    chats = own_chats([TOPIC, "Mozart or Beethoven?", TOPIC, "Mozart or Beethoven?", None])
    info = PersonaInfo(name="lee", source="corpus", license="p", attribution="x")
    persona = Persona(info=info, conversations=chats)
    held = hold_out(persona, 4, seed=1, name="lee-h")
    save_persona(held, Path("personas/lee-h.jsonl"))
    write_transcripts(tmp_path / "bots.jsonl", bot_chats("lee-h", count=1))
    built = build_study(spec(), base=tmp_path)
    [truth] = built.key.items.values()
    # Four of five held out: at least one on the bot's topic, and that one is shown.
    assert truth.human.topic == TOPIC
    item = built.questionnaire.items[0]
    assert item.topic is not None  # on the same topic: judges are asked it
    # More bot chats than held-out chats on the topic: the others are the person's chats
    # on other topics (never a stranger's), without a topic check (it would point at the
    # bot's chat), and the report counts them.
    write_transcripts(tmp_path / "bots.jsonl", bot_chats("lee-h", count=3))
    built = build_study(spec(), base=tmp_path)
    tests = {t.human.id: t for t in built.key.items.values() if t.kind == "test"}
    assert len(tests) == 3 and all(t.human.meta["held_out_from"] == "lee-h" for t in tests.values())
    for item in built.questionnaire.items:
        truth = built.key.items[item.id]
        assert (item.topic is not None) == (truth.human.topic == TOPIC)
    off = sum(1 for t in tests.values() if t.human.topic != TOPIC)
    assert off >= 1
    from sdtt.analysis.report import human_side_section

    section = human_side_section(built.key)
    assert section is not None
    assert section.rows[0][1].endswith(f"3 pairs ({off} not on the bot chat's topic)")


def test_a_persona_holding_nothing_out_is_refused(maya: Persona, tmp_path: Path) -> None:
    write_transcripts(tmp_path / "bots.jsonl", bot_chats("maya"))
    with pytest.raises(InputError, match="holds out none") as caught:
        build_study(spec(), base=tmp_path)
    assert "sdtt persona hold-out maya" in str(caught.value)


def test_the_report_says_which_human_side_each_condition_used(
    maya: Persona, tmp_path: Path
) -> None:
    from sdtt.analysis.report import human_side_section

    write_transcripts(tmp_path / "bots.jsonl", bot_chats("maya-held-out"))
    built = build_study(spec(), base=tmp_path)
    section = human_side_section(built.key)
    assert section is not None
    [[condition, side]] = section.rows
    assert "mock/x" in condition
    # A chat export's chats have no topics: none is on the bot chat's, and it says so.
    assert (
        side == "the imitated person's own held-out chats: 2 pairs (2 not on the bot chat's topic)"
    )
    # Strangers' chats (a transcript file) are named as such.
    write_transcripts(tmp_path / "others.jsonl", own_chats([TOPIC, TOPIC]))
    other = build_study(spec("others.jsonl"), base=tmp_path)
    other_section = human_side_section(other.key)
    assert other_section is not None
    assert other_section.rows[0][1] == "chats from a transcript file: 2 pairs"


def test_hold_out_command_writes_a_persona_of_its_own(
    maya: Persona, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["persona", "hold-out", "maya", "--count", "2", "--name", "maya-2"]) == 0
    held = find_persona("maya-2")
    assert len(held.info.held_out) == 2 and held.info.extra["held_out_from"] == "maya"
    assert len(held.prompt_conversations) == 4
    assert main(["persona", "show", "maya-2"]) == 0
    assert "2 conversations held out of every prompt" in " ".join(capsys.readouterr().out.split())
    assert main(["persona", "hold-out", "maya", "--count", "6", "--name", "maya-6"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--count" in err and "leaves one or more for the prompt" in err


def test_a_persona_file_holding_out_an_unknown_chat_is_one_clear_error(
    maya: Persona, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path("personas/maya-held-out.jsonl")
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["held_out"] = ["conv-0001", "conv-9999"]
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert main(["persona", "show", "maya-held-out"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "maya-held-out.jsonl" in err and "held_out" in err and "'conv-9999'" in err
    assert "Traceback" not in err


def test_the_corpus_still_leaves_out_the_person_behind_a_held_out_chitchat_persona() -> None:
    from sdtt.questionnaires.pairing import persona_senders
    from tests.questionnaires.helpers import FakeCorpus

    corpus = FakeCorpus([], {"c1": "32b20fa3-a6cd", "c2": "99999999-0000"})
    for name in ("chitchat-32b20fa3", "chitchat-32b20fa3-held-out"):
        bot = conversation("b", TOPIC, 3, tag="b", meta={"persona": name})
        assert persona_senders(corpus, bot) == ["32b20fa3-a6cd"]
