"""Items cut from conversations, catch items, the balanced design and the built study."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from sdtt.errors import InputError
from sdtt.single.build import (
    StudySettings,
    build_study,
    chat_leaks,
    load_key,
    load_task,
    save_study,
)
from sdtt.single.catch import LONG_LIST, catch_item, catch_items
from sdtt.single.items import SingleItem, cut_items, read_items, speaker_truth, write_items
from sdtt.tasks.design import item_forms
from sdtt.tasks.single_task import Part
from tests.single.helpers import bot_chat, chat, corpus


def test_every_cut_of_every_conversation_is_an_item_and_long_cuts_are_left_out() -> None:
    chats = [chat("a", "HM", 10), chat("b", "MM", 24)]
    items, skipped = cut_items(chats, (3, 6, 12, 24))
    got = {(item.source, item.cut): len(item.lines) for item in items}
    assert got == {("a", 3): 3, ("a", 6): 6, ("b", 3): 3, ("b", 6): 6, ("b", 12): 12, ("b", 24): 24}
    assert skipped == [("a", 12), ("a", 24)]
    first = next(item for item in items if item.id == "a@3")
    assert [line.speaker for line in first.lines] == ["A", "B", "A"]
    assert first.lines[2].text == chats[0].messages[2].text
    assert first.klass == "HM" and first.truth == {"A": "human", "B": "machine"}


@pytest.mark.parametrize(
    ("interrogator", "klass"), [(None, "HM"), ("human", "HM"), ("script", "MM"), ("mock/x", "MM")]
)
def test_a_bot_chat_without_speakers_is_read_from_its_condition(
    interrogator: str | None, klass: str
) -> None:
    truth = speaker_truth(bot_chat("c", interrogator))
    assert "".join("H" if truth[s] == "human" else "M" for s in "AB") == klass


def test_a_chat_with_no_condition_is_human_human_and_bad_speakers_are_named() -> None:
    plain = chat("h", "HH").model_copy(update={"meta": {}})
    assert speaker_truth(plain) == {"A": "human", "B": "human"}
    wrong = chat("w", "HH").model_copy(update={"meta": {"speakers": {"A": "robot"}}})
    with pytest.raises(InputError, match=r"meta\.speakers"):
        speaker_truth(wrong)


def test_items_of_other_tasks_plug_in_and_round_trip(tmp_path: Path) -> None:
    association = SingleItem(
        id="cue-apple",
        source="apple",
        parts=[Part(label="Cue", text="apple"), Part(label="Association", text="pie")],
        truth={"Association": "machine"},
    )
    assert association.klass == "M" and association.judged == ["Association"]
    path = tmp_path / "items.jsonl"
    write_items(path, [association, *cut_items([chat("a", "HH", 6)], (3,))[0]])
    back = read_items(path)
    assert back[0] == association and back[1].cut == 3
    with pytest.raises(ValueError, match="image must be"):
        SingleItem(id="x", source="x", image="file:///etc/passwd", truth={"Caption": "human"})


def test_catch_items_make_one_speaker_an_obvious_machine_and_score_only_it() -> None:
    (item,) = cut_items([chat("a", "HH", 6)], (6,))[0]
    repeated = catch_item(item, "repetition", "B", pattern="@@@")
    assert [s.text for s in repeated.lines if s.speaker == "B"] == ["@@@"] * 3
    assert [s.text for s in repeated.lines if s.speaker == "A"] == [
        s.text for s in item.lines if s.speaker == "A"
    ]
    assert repeated.truth == {"B": "machine"} and repeated.judged == ["A", "B"]
    listed = catch_item(item, "long-list", "A")
    assert sum(s.text == LONG_LIST for s in listed.lines) == 1
    made = catch_items(cut_items(corpus(2), (6,))[0], 4, seed=3)
    assert len({m.id for m in made}) == 4
    assert Counter(m.catch for m in made) == {"repetition": 2, "long-list": 2}


def test_forms_never_show_two_cuts_of_one_conversation_and_show_items_evenly() -> None:
    items, _ = cut_items(corpus(3, 24), (3, 6, 12, 24))
    catch = catch_items(items, 8, seed=2)
    forms = item_forms(items, forms=16, per_form=6, catch=catch, catch_per_form=1, seed=5)
    by_id = {item.id: item for item in [*items, *catch]}
    for form in forms:
        sources = [by_id[i].source for i in form]
        assert len(sources) == len(set(sources)) == 7
        assert sum(by_id[i].catch is not None for i in form) == 1
    shown = Counter(i for form in forms for i in form if by_id[i].catch is None)
    # 16 forms x 6 = 96 showings of 48 items: each twice.
    assert len(shown) == len(items) and set(shown.values()) == {2}
    assert forms == item_forms(items, forms=16, per_form=6, catch=catch, catch_per_form=1, seed=5)
    assert forms != item_forms(items, forms=16, per_form=6, catch=catch, catch_per_form=1, seed=6)


def test_a_form_larger_than_the_conversations_is_refused_with_what_to_do() -> None:
    items, _ = cut_items(corpus(1), (3, 6))
    wanted = r"needs 5 different sources \(one item per conversation\), and there are 4"
    with pytest.raises(InputError, match=wanted) as error:
        item_forms(items, forms=1, per_form=5)
    assert error.value.hint is not None and "fewer items" in error.value.hint


def test_built_study_hides_the_truth_and_keeps_it_in_the_key(tmp_path: Path) -> None:
    items, _ = cut_items(corpus(2), (3, 12))
    task, key = build_study(items, StudySettings(forms=2, per_form=6, seed=1))
    save_study(tmp_path, task, key)
    text = (tmp_path / "single-task.json").read_text(encoding="utf-8")
    for word in ('machine"', 'human"', "persona-name-xyz", "hh0@3", '"source"', "truth"):
        assert word not in text
    assert load_task(tmp_path) == task and load_key(tmp_path) == key
    for view in task.items:
        entry = key.entry(view.id)
        item = next(i for i in items if i.id == entry.item)
        assert [line.text for line in view.lines] == [s.text for s in item.lines]
        assert [j.label for j in view.judged] == ["User A", "User B"]
        # The topic check: five options, one of them the conversation's topic.
        assert view.topic is not None and len(view.topic.choices or []) == 5
        right = view.topic.choice_for(entry.topic or "")
        assert right is not None and right.label == item.topic
    assert json.loads(text)["forms"] == task.forms


def test_a_broken_study_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "single-task.json").write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON") as error:
        load_task(tmp_path)
    assert error.value.path is not None and error.value.path.endswith("single-task.json")
    with pytest.raises(InputError, match="does not exist"):
        load_key(tmp_path)


def test_chat_text_naming_the_bots_model_or_persona_is_warned_about() -> None:
    chat_ = bot_chat("c", "human")
    said = chat_.messages[0].model_copy(update={"text": "are you chatty or a person?"})
    named = chat_.model_copy(
        update={
            "messages": [said, *chat_.messages[1:]],
            "condition": chat_.condition.model_copy(update={"persona": "Chatty"})
            if chat_.condition
            else None,
        }
    )
    items, _ = cut_items([named, chat("plain", "HH", 6)], (3, 6))
    warnings = chat_leaks(items)
    assert len(warnings) == 2  # both cuts of the named chat, none of the plain one
    assert all(
        "'chatty'" in warning.lower() and "judges will see it" in warning for warning in warnings
    )
    assert len(chat_leaks(items * 5, limit=3)) == 4


def test_items_of_parts_and_images_are_asked_about_their_part_and_escaped() -> None:
    from sdtt.surveys.tool import ExportOptions
    from sdtt.surveys.tools import TOOLS
    from sdtt.tasks.single_task import item_html

    items = [
        SingleItem(
            id="apple",
            source="apple",
            parts=[Part(label="Cue", text="apple"), Part(label="Association", text="<b>pie</b>")],
            truth={"Association": "machine"},
        ),
        SingleItem(
            id="img",
            source="img",
            image='https://example.org/a.jpg?x="><script>',
            parts=[Part(label="Caption", text="a dog")],
            truth={"Caption": "human"},
        ),
    ]
    task, key = build_study(items, StudySettings(forms=1, per_form=2))
    by_item = {key.entry(view.id).item: view for view in task.items}
    association = by_item["apple"]
    assert association.topic is None  # no chat, no topic check
    assert "conversation" not in task.intro
    assert task.question_for(association.judged[0]) == (
        "Was this association written by a human or a machine?"
    )
    html = item_html(association)
    assert "&lt;b&gt;pie&lt;/b&gt;" in html and "<b>pie</b>" not in html
    picture = item_html(by_item["img"])
    assert '<img src="https://example.org/a.jpg?x=&quot;&gt;&lt;script&gt;"' in picture
    fielded = TOOLS["surveyjs"].single
    assert fielded is not None
    (survey,) = fielded.write(task, ExportOptions()).values()
    assert "Was this caption written by a human or a machine?" in survey


def test_an_answer_that_is_no_option_names_the_file_and_record(tmp_path: Path) -> None:
    from sdtt.surveys import jspsych, surveyjs

    items, _ = cut_items(corpus(1), (3,))
    task, _ = build_study(items, StudySettings(forms=1, per_form=4, confidence=True))
    item = task.items[0]
    results = tmp_path / "results.json"
    results.write_text(json.dumps([{item.verdict_name(1): "robot"}]), encoding="utf-8")
    with pytest.raises(InputError, match=r"results\.json\[1\]: answer 'robot' to A is neither"):
        surveyjs.read_single(results, task)
    results.write_text(json.dumps([{item.confidence_name(2): 9}]), encoding="utf-8")
    with pytest.raises(InputError, match="confidence 9 in B is not a whole number from 1 to 5"):
        surveyjs.read_single(results, task)
    table = tmp_path / "page.csv"
    table.write_text(
        "judge_id,role,item,answer,rt,form\nj,single,nosuch1,{},10,\n", encoding="utf-8"
    )
    with pytest.raises(InputError, match="'nosuch1' is not in this single-item task"):
        jspsych.read_single(table, task)
    table.write_text(
        f"judge_id,role,item,answer,rt,form\nj,single,{item.id},{{}},10,other-task\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="holds answers to task 'other-task'") as error:
        jspsych.read_single(table, task)
    assert error.value.line == 2


def test_one_build_draws_ids_forms_and_catch_items_from_streams_of_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With one seed for all three, the ids' draws were the forms' tie-breaks: an id
    # said where its item fell in a form.
    seeds: list[object] = []

    class Recorded(random.Random):
        def __init__(self, seed: object = None) -> None:
            seeds.append(seed)
            super().__init__(seed)  # type: ignore[arg-type]

    monkeypatch.setattr(random, "Random", Recorded)
    items = cut_items(corpus(3), (6,))[0]
    catch = catch_items(items, 2, seed=4)
    build_study(items, StudySettings(forms=2, per_form=4, catch_per_form=1, seed=4), catch=catch)
    assert len(seeds) >= 3
    assert len(set(map(str, seeds))) == len(seeds), seeds
