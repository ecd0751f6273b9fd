from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.questionnaires.pipeline import build_demo_questionnaire
from tests.questionnaires.helpers import FakeCorpus, conversation


def corpus() -> FakeCorpus:
    talks = [
        conversation("real-1", "What's your favorite smell?", 6, tag="r"),
        conversation("real-2", "Cats or dogs?", 6, tag="s"),
    ]
    return FakeCorpus(talks, {"real-1": "aaa", "real-2": "bbb"})


def test_demo_builds_surveyjs_and_html_from_a_chat_and_the_corpus(tmp_path: Path) -> None:
    bot = conversation(
        "demo-chat",
        "What's your favorite smell?",
        4,
        tag="b",
        meta={"model": "mock/x", "pseudo_turns": 0},
    )
    made = build_demo_questionnaire(bot, tmp_path / "q", corpus_loader=corpus)
    names = sorted(p.name for p in made.files)
    assert names == ["answer-key.json", "questionnaire.html", "questionnaire.json", "surveyjs.json"]
    assert made.x_turns == 3 and made.notes == []
    key = json.loads((tmp_path / "q" / "answer-key.json").read_text())
    humans = {item["human"]["id"] for item in key["items"].values() if item["kind"] == "test"}
    assert humans == {"real-1"}


def test_demo_with_a_short_untopical_chat_says_what_it_did(tmp_path: Path) -> None:
    bot = conversation("demo-chat", None, 1, tag="b")
    made = build_demo_questionnaire(bot, tmp_path / "q", corpus_loader=corpus)
    assert made.x_turns == 1
    assert any("1 complete turn" in note for note in made.notes)
    assert any("has no topic; it is compared with human conversation" in n for n in made.notes)


def test_demo_refuses_a_chat_without_a_reply(tmp_path: Path) -> None:
    bot = conversation("demo-chat", None, 0, tag="b", trailing_user=True)
    with pytest.raises(InputError, match="no complete turn"):
        build_demo_questionnaire(bot, tmp_path / "q", corpus_loader=corpus)
