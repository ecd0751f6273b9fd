"""Building a rating task: items, pairs, the balanced design, nothing leaked to judges."""

from __future__ import annotations

import itertools
import json
import random
import re
import tomllib
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdtt.align.export import export_task
from sdtt.align.task import (
    build_rating_task,
    load_rating_key,
    load_rating_task,
    save_rating_task,
)
from sdtt.dialogue.message import Transcript
from sdtt.errors import InputError
from sdtt.personas.corpus import SOURCE_NAME
from sdtt.questionnaires.leaks import find_terms
from sdtt.surveys.tools import rating_tools
from sdtt.tasks.design import rating_forms
from sdtt.tasks.questionnaire import save_study
from sdtt.tasks.rating_spec import RatingSource, RatingSpec
from sdtt.tasks.study import StudySpec
from tests.align.helpers import build, rating_spec, write_sources
from tests.questionnaires.helpers import SECRET_WORDS, fixture_study, humans


def test_all_pairs_of_a_small_set_with_bot_and_human_items(tmp_path: Path) -> None:
    built = build(tmp_path, items_per_source=3)
    items = built.task.items
    assert len(items) == 6
    sides = Counter(built.key.items[item.id].side for item in items)
    assert sides == {"bot": 3, "human": 3}
    shown = {frozenset((p.first, p.second)) for p in built.task.pairs}
    assert shown == {frozenset(c) for c in itertools.combinations([i.id for i in items], 2)}
    assert built.task.forms == []
    # Bursts are side B only, and the chat text is there as written.
    assert all(line.speaker == "B" for item in items for line in item.lines)


def test_the_same_spec_builds_the_same_task(tmp_path: Path) -> None:
    assert build(tmp_path).task == build(tmp_path).task


def test_excerpts_show_both_sides(tmp_path: Path) -> None:
    built = build(tmp_path, unit="excerpt", excerpt_turns=2)
    speakers = {line.speaker for item in built.task.items for line in item.lines}
    assert speakers == {"A", "B"}


@given(
    items=st.integers(min_value=4, max_value=12),
    per_judge=st.integers(min_value=1, max_value=30),
    repeats=st.integers(min_value=1, max_value=4),
    seed=st.integers(min_value=0, max_value=1000),
)
def test_rating_forms_rate_every_pair_equally_often(
    items: int, per_judge: int, repeats: int, seed: int
) -> None:
    pairs = [f"p{a}x{b}" for a, b in itertools.combinations(range(items), 2)]
    if per_judge >= len(pairs):
        with pytest.raises(InputError, match="smaller than the number of pairs"):
            rating_forms(pairs, per_judge, repeats, random.Random(seed))
        return
    forms = rating_forms(pairs, per_judge, repeats, random.Random(seed))
    counts = Counter(pair for form in forms for pair in form)
    assert counts == {pair: repeats for pair in pairs}
    assert all(len(set(form)) == len(form) for form in forms)
    assert all(len(form) == per_judge for form in forms[:-1])
    assert 1 <= len(forms[-1]) <= per_judge


def test_larger_sets_get_forms(tmp_path: Path) -> None:
    built = build(tmp_path, items_per_source=5, pairs_per_judge=9, ratings_per_pair=2)
    assert len(built.task.pairs) == 45
    assert len(built.task.forms) == 10
    counts = Counter(pair for form in built.task.forms for pair in form)
    assert set(counts.values()) == {2}


def test_nothing_a_judge_receives_names_the_bot(tmp_path: Path) -> None:
    built = build(tmp_path)
    save_rating_task(tmp_path / "task", built.task, built.key)
    received = [(tmp_path / "task" / "rating-task.json").read_text(encoding="utf-8")]
    for fmt in rating_tools():
        for path in export_task(built.task, fmt, tmp_path / "out"):
            received.append(path.read_text(encoding="utf-8"))
    for text in received:
        for word in SECRET_WORDS:
            assert word not in text, word
        # Not even which kinds of item there are (the vendored jsPsych code aside).
        data = text.split('id="task-data">')[-1].split("</script>")[0]
        assert find_terms(data, ["bot", "human", "AI"]) == []
    # The key, which judges never get, knows the truth.
    key_text = (tmp_path / "task" / "rating-key.json").read_text(encoding="utf-8")
    assert "bot-conv-1" in key_text


def test_planted_markup_stays_text_in_the_html_exports(tmp_path: Path) -> None:
    built = build(tmp_path, unit="excerpt", excerpt_turns=1, items_per_source=1, planted=True)
    [page] = export_task(built.task, "jspsych", tmp_path / "out")
    [survey] = export_task(built.task, "surveyjs", tmp_path / "out")
    assert "window.__pwned" in page.read_text(encoding="utf-8")  # the text is there...
    assert "<script>window.__pwned" not in page.read_text(encoding="utf-8")  # ...as text
    assert "<script>window" not in json.loads(survey.read_text(encoding="utf-8")).__repr__()


def test_a_model_name_in_the_question_is_an_error(tmp_path: Path) -> None:
    write_sources(tmp_path)
    spec = rating_spec(question="Which is more like gpt-4o-2024-08-06?")
    with pytest.raises(InputError, match="gpt-4o-2024-08-06"):
        build_rating_task(spec, tmp_path)


@pytest.mark.parametrize("fmt", ["qualtrics", "limesurvey", "html", "markdown"])
def test_other_formats_say_they_are_not_supported(tmp_path: Path, fmt: str) -> None:
    built = build(tmp_path)
    with pytest.raises(InputError, match="not supported for rating tasks"):
        export_task(built.task, fmt, tmp_path / "out")


def test_saved_task_and_key_load_back_and_belong_together(tmp_path: Path) -> None:
    built = build(tmp_path)
    save_rating_task(tmp_path / "task", built.task, built.key)
    task = load_rating_task(tmp_path / "task")
    assert task == built.task
    assert load_rating_key(tmp_path / "task", task).items == built.key.items
    other = build(tmp_path, items_per_source=2).task
    with pytest.raises(InputError, match="belongs to rating task"):
        load_rating_key(tmp_path / "task", other)


def test_missing_source_file_names_it(tmp_path: Path) -> None:
    spec = StudySpec(rating=RatingSpec(sources=[RatingSource(path="nowhere.jsonl", side="bot")]))
    with pytest.raises(InputError, match=r"nowhere\.jsonl"):
        build_rating_task(spec, tmp_path)


def test_items_from_a_built_study_take_both_sides_from_its_key(tmp_path: Path) -> None:
    write_sources(tmp_path)
    study = fixture_study()
    save_study(tmp_path / "study", study.questionnaire, study.key)
    spec = StudySpec(name="from-study", rating=RatingSpec(sources=[RatingSource(study="study")]))
    built = build_rating_task(spec, tmp_path)
    sides = Counter(entry.side for entry in built.key.items.values())
    assert sides == {"bot": 4, "human": 4}
    conversations = {entry.conversation for entry in built.key.items.values()}
    assert conversations <= {"bot-conv-1", "bot-conv-2", "human-conv-1", "human-conv-2"}


class _FakeConversation:
    def __init__(self, transcript: Transcript) -> None:
        self.id = transcript.id
        self._transcript = transcript
        self.asked: list[str | None] = []

    def transcript(self, persona_sender: str | None = None) -> Transcript:
        self.asked.append(persona_sender)
        return self._transcript


def test_corpus_chats_of_a_built_study_come_from_the_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_sources(tmp_path)
    study = fixture_study()
    corpus_human = humans()[0]
    fake = _FakeConversation(corpus_human)
    items = {}
    for pair_id, entry in study.key.items.items():
        human = entry.human.model_copy(
            update={
                "path": None,
                "meta": {
                    "source": SOURCE_NAME,
                    "conversation_id": corpus_human.id,
                    "senders": {"user": "s1", "response": "s2"},
                },
            }
        )
        items[pair_id] = entry.model_copy(update={"human": human})
    key = study.key.model_copy(update={"items": items})
    save_study(tmp_path / "study", study.questionnaire, key)
    monkeypatch.setattr(
        "sdtt.align.task._corpus", lambda: SimpleNamespace(raw_conversations=[fake])
    )
    spec = StudySpec(rating=RatingSpec(sources=[RatingSource(study="study")]))
    built = build_rating_task(spec, tmp_path)
    assert fake.asked and set(fake.asked) == {"s2"}
    humans_found = {e.conversation for e in built.key.items.values() if e.side == "human"}
    assert humans_found == {corpus_human.id}


def test_the_example_spec_documents_every_rating_field() -> None:
    text = (Path(__file__).parents[2] / "questionnaires" / "example-study.toml").read_text(
        encoding="utf-8"
    )
    block = text[text.index("# [rating]") :]
    data = tomllib.loads("\n".join(re.sub(r"^# ?", "", line) for line in block.splitlines()))
    spec = RatingSpec.model_validate(data["rating"])
    assert set(data["rating"]) == set(RatingSpec.model_fields) - {"intro", "end_text"}
    assert spec.sources[0].study is not None and spec.sources[1].side == "bot"
