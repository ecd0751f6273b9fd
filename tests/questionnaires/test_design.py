"""Judge designs: each judge gets k pairs, every pair the same number of judges, bot
position and order balanced, exported per tool and scored per judge's view."""

from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdtt.cli import main
from sdtt.dialogue.store import write_transcripts
from sdtt.errors import InputError
from sdtt.questionnaires.answers import import_responses
from sdtt.questionnaires.build import BuildResult, build_questionnaire
from sdtt.questionnaires.exports import export_files
from sdtt.questionnaires.pairing import Pairing
from sdtt.questionnaires.pipeline import build_study
from sdtt.surveys import limesurvey, qualtrics, surveyjs
from sdtt.surveys.jspsych import study_data
from sdtt.tasks.design import Slot, balanced_forms
from sdtt.tasks.questionnaire import Questionnaire, load_questionnaire, save_study
from sdtt.tasks.study import DesignSpec, PairSpec, StudySpec
from tests.questionnaires.helpers import bots, conversation, humans, pairings


def _assert_balanced(forms: list[list[Slot]], pairs: int, k: int) -> None:
    assert len(forms) == 2 * pairs
    seen: Counter[int] = Counter()
    first: Counter[int] = Counter()
    places: Counter[tuple[int, int]] = Counter()
    for form in forms:
        assert len(form) == k
        assert len({slot.pair for slot in form}) == k  # never one pair twice
        ones = sum(slot.bot_position == 1 for slot in form)
        assert abs(ones - (k - ones)) <= 1  # within a form, bot first about half the time
        for place, slot in enumerate(form):
            seen[slot.pair] += 1
            first[slot.pair] += slot.bot_position == 1
            places[slot.pair, place] += 1
    assert set(seen.values()) == {2 * k}  # every pair seen equally often
    assert set(first.values()) == {k}  # the bot first for exactly half its judges
    assert set(places.values()) == {2}  # every pair at every place equally often
    assert len(places) == pairs * k


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.data())
def test_every_design_is_balanced(data: st.DataObject) -> None:
    pairs = data.draw(st.integers(min_value=1, max_value=24), label="pairs")
    k = data.draw(st.integers(min_value=1, max_value=pairs), label="k")
    seed = data.draw(st.integers(min_value=0, max_value=10_000), label="seed")
    conversations = [frozenset({f"bot{i}", f"human{i}"}) for i in range(pairs)]
    _assert_balanced(balanced_forms(conversations, k, random.Random(seed)), pairs, k)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    conversations=st.integers(min_value=3, max_value=12),
    k=st.integers(min_value=1, max_value=3),
    seed=st.integers(min_value=0, max_value=1000),
)
def test_no_judge_reads_a_conversation_twice(conversations: int, k: int, seed: int) -> None:
    # Each conversation cut at X=3 and X=10 gives two pairs that share it.
    shared = [frozenset({f"bot{i}", f"human{i}"}) for i in range(conversations)] * 2
    forms = balanced_forms(shared, k, random.Random(seed))
    _assert_balanced(forms, len(shared), k)
    for form in forms:
        names = [name for slot in form for name in shared[slot.pair]]
        assert len(names) == len(set(names))


def test_an_impossible_design_says_why() -> None:
    shared = [frozenset({"bot1", "h1"}), frozenset({"bot1", "h2"})]
    with pytest.raises(InputError, match="'bot1' is in 2 pairs"):
        balanced_forms(shared, 2, random.Random(0))
    with pytest.raises(InputError, match="from 1 to 2"):
        balanced_forms(shared, 3, random.Random(0))


def _design_study(k: int = 2) -> BuildResult:
    spec = StudySpec(
        name="design", seed=5, x_turns=[3, 10], catch_pairs=1, design=DesignSpec(pairs_per_judge=k)
    )
    return build_questionnaire(spec, pairings())


def test_each_view_has_its_own_key_and_the_key_matches_the_chats() -> None:
    study = _design_study()
    questionnaire, key = study.questionnaire, study.key
    tests = [i for i in questionnaire.items if key.items[i.id].kind == "test"]
    assert len(tests) == 8  # 2 conversations x 2 X values x 2 views
    by_pair: dict[str, list[int]] = {}
    for item in tests:
        truth = key.items[item.id]
        assert item.pair == truth.pair is not None
        by_pair.setdefault(truth.pair, []).append(truth.bot_position)
        bot_chat = item.chats[truth.bot_position - 1]
        assert any(" replies " in line.text and line.text.startswith("b") for line in bot_chat)
        assert not any(line.text.startswith("h") for line in bot_chat)
    assert all(sorted(positions) == [1, 2] for positions in by_pair.values())
    assert len(questionnaire.forms) == 8
    for form in questionnaire.forms:
        kinds = Counter(key.items[item_id].kind for item_id in form.items)
        assert kinds == {"test": 2, "catch": 1}
        shown = [key.items[i] for i in form.items if key.items[i].kind == "test"]
        assert len({truth.pair for truth in shown}) == 2
        assert len({truth.bot.id for truth in shown}) == 2  # X=3 and X=10 of one chat: never


def test_exports_one_survey_per_form_and_native_assignment(tmp_path: Path) -> None:
    study = _design_study()
    formats = ["surveyjs", "qualtrics", "jspsych", "limesurvey", "csv", "html", "markdown"]
    written = export_files(study.questionnaire, formats, tmp_path)
    # One file per form for every tool; only Qualtrics and jsPsych also get a single file
    # (any other single file would show both views of a pair to every judge).
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == [
        "jspsych.html",
        "qualtrics.qsf",
    ]
    forms = study.questionnaire.forms
    for form in forms:
        folder = tmp_path / f"form-{form.number:02d}"
        survey = json.loads((folder / "surveyjs.json").read_text(encoding="utf-8"))
        assert surveyjs.check(survey) == []
        (pairs,) = [p for p in survey["pages"] if p["name"] == "pairs"]
        assert pairs["questionOrder"] == "initial"  # the design's order, balanced across forms
        assert [panel["name"].removesuffix("page") for panel in pairs["elements"]] == form.items
        assert qualtrics.check(json.loads((folder / "qualtrics.qsf").read_text("utf-8"))) == []
        assert limesurvey.check((folder / "limesurvey.txt").read_text("utf-8")) == []
    assert written[f"form-{len(forms):02d}/csv"].exists()

    qsf = json.loads((tmp_path / "qualtrics.qsf").read_text(encoding="utf-8"))
    assert qualtrics.check(qsf) == []
    flow = next(e for e in qsf["SurveyElements"] if e["Element"] == "FL")["Payload"]["Flow"]
    draw, order = [node for node in flow if node["Type"] == "BlockRandomizer"]
    # k of the 4 pairs drawn evenly, then the drawn pairs and the catch in a random order.
    assert (draw["SubSet"], draw["EvenPresentation"], len(draw["Flow"])) == (2, True, 4)
    assert {node["Type"] for node in draw["Flow"]} == {"EmbeddedData"}
    assert (order["SubSet"], len(order["Flow"])) == (5, 5)
    for group in order["Flow"][:4]:
        (branch,) = group["Flow"]
        (inner,) = branch["Flow"]
        assert (inner["SubSet"], inner["EvenPresentation"], len(inner["Flow"])) == (1, True, 2)
    data = study_data(study.questionnaire)
    assert len(data["forms"]) == len(forms) and data["items"] == []


def _answers_csv(path: Path, answers: dict[str, list[str]], study: BuildResult) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["judge_id", "question", "answer"])
    for judge, items in answers.items():
        for item_id in items:
            writer.writerow([judge, item_id, "A"])
            item = study.questionnaire.item(item_id)
            assert item is not None and item.topic is not None
            truth = study.key.items[item_id]
            writer.writerow([judge, item.topic.name, truth.topic_value])
    path.write_text(buffer.getvalue(), encoding="utf-8")


def test_answers_score_against_each_judges_own_view(tmp_path: Path) -> None:
    study = _design_study()
    forms = study.questionnaire.forms
    answers = {f"judge{form.number}": form.items for form in forms}
    _answers_csv(tmp_path / "answers.csv", answers, study)
    imported = import_responses([tmp_path / "answers.csv"], "csv", study.questionnaire, study.key)
    # Only the pairs a judge saw become judgements; nobody is excluded for the rest.
    assert len(imported.judgements) == sum(len(form.items) for form in forms)
    assert not any(j.excluded for j in imported.judgements)
    for judgement in imported.judgements:
        view = judgement.shown.design_view or judgement.pair_id
        truth = study.key.items[view]
        assert judgement.bot_position == truth.bot_position
        assert judgement.correct is (truth.bot_position == 1)  # everyone answered "chat 1"
    tests = [j for j in imported.judgements if j.pair_kind == "test"]
    per_pair = Counter(j.pair_id for j in tests)
    assert len(per_pair) == 4 and set(per_pair.values()) == {4}  # 2k judges per pair
    first = Counter(j.pair_id for j in tests if j.bot_position == 1)
    assert set(first.values()) == {2}


def test_cli_builds_a_design_and_says_how_many_judges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_transcripts(tmp_path / "bots.jsonl", bots())
    write_transcripts(tmp_path / "humans.jsonl", humans())
    monkeypatch.chdir(tmp_path)
    args = ["questionnaire", "build", "--bot", "bots.jsonl", "--human", "humans.jsonl"]
    assert main([*args, "--x", "3", "--x", "10", "--pairs-per-judge", "2", "--out", "s"]) == 0
    out = capsys.readouterr().out
    assert "judge design: 8 forms of 2 test pair(s)" in out
    assert "Recruit a multiple of 8 judges" in out
    assert "more than one pair" not in out  # the design keeps repeats apart
    assert main(["questionnaire", "export", "s", "--format", "surveyjs"]) == 0
    assert len(list((tmp_path / "s" / "export").glob("form-*/surveyjs.json"))) == 8
    assert main([*args, "--pairs-per-judge", "9", "--out", "t"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "pairs_per_judge is 9 but the study has 4 test pair(s)" in err


def test_spec_setting_reaches_the_build(tmp_path: Path) -> None:
    write_transcripts(tmp_path / "bots.jsonl", bots())
    write_transcripts(tmp_path / "humans.jsonl", humans())
    spec = StudySpec(
        x_turns=[3],
        design=DesignSpec(pairs_per_judge=1),
        pairs=[PairSpec(bot="bots.jsonl", human="humans.jsonl")],
    )
    built = build_study(spec, base=tmp_path)
    assert len(built.questionnaire.forms) == 4


def test_judge_ui_shows_one_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sdtt.ui.judge

    study = _design_study()
    save_study(tmp_path / "s", study.questionnaire, study.key)
    shown: list[list[str]] = []

    class FakeApp:
        def __init__(self, questionnaire: Questionnaire, *args: object, **kwargs: object) -> None:
            shown.append([item.id for item in questionnaire.items])

        def run(self) -> None:
            return None

    monkeypatch.setattr(sdtt.ui.judge, "JudgeApp", FakeApp)
    assert main(["judge-ui", str(tmp_path / "s"), "--judge", "p1", "--form", "3"]) == 0
    assert shown == [study.questionnaire.forms[2].items]
    assert "gets form 3" in capsys.readouterr().out
    assert main(["judge-ui", str(tmp_path / "s"), "--form", "99"]) == 2
    assert "forms 1 to 8" in capsys.readouterr().err


def _many_pairs(count: int = 5, k: int = 3) -> BuildResult:
    many = [
        Pairing(
            conversation(f"bot-{n}", f"topic {n}", 5, tag=f"b{n}"),
            None,
            conversation(f"human-{n}", f"topic {n}", 5, tag=f"h{n}"),
            None,
        )
        for n in range(count)
    ]
    spec = StudySpec(name="d", seed=5, x_turns=[3], design=DesignSpec(pairs_per_judge=k))
    return build_questionnaire(spec, many)


def test_the_order_of_views_in_a_file_does_not_tell_the_bots_side() -> None:
    study = _many_pairs(count=12, k=2)
    first_seen: dict[str, int] = {}
    for item in study.questionnaire.items:
        truth = study.key.items[item.id]
        if truth.pair is not None and truth.pair not in first_seen:
            first_seen[truth.pair] = truth.bot_position
    assert set(first_seen.values()) == {1, 2}


def test_a_pair_skipped_in_ones_own_form_is_no_answer(tmp_path: Path) -> None:
    study = _many_pairs()
    forms = study.questionnaire.forms
    views = {i for form in forms for i in form.items if study.key.items[i].kind == "test"}
    # A judge whose answers fit only one form (the form is known), one test pair skipped.
    cases = [
        (form, view)
        for form in forms
        for view in form.items
        if view in views
        and sum(set(form.items) - {view} <= set(other.items) for other in forms) == 1
    ]
    assert cases
    form, skipped_view = cases[0]
    answered = [i for i in form.items if i != skipped_view]
    _answers_csv(tmp_path / "a.csv", {"j": answered}, study)
    imported = import_responses([tmp_path / "a.csv"], "csv", study.questionnaire, study.key)
    assert len(imported.judgements) == len(form.items)
    (skipped,) = [j for j in imported.judgements if j.choice is None]
    assert skipped.shown.design_view == skipped_view
    assert skipped.exclusion_reason is not None and "no answer" in skipped.exclusion_reason


def test_a_form_naming_an_unknown_pair_is_a_clear_error(tmp_path: Path) -> None:
    study = _design_study()
    save_study(tmp_path, study.questionnaire, study.key)
    path = tmp_path / "questionnaire.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["forms"][0]["items"][0] = "pnothere1"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="form 1 shows unknown pair"):
        load_questionnaire(tmp_path)
