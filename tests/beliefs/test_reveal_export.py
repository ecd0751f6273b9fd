"""Reveal mode in the exporters and importers, checked on the files themselves."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from pathlib import Path

import pytest

from sdtt.beliefs.reveal_import import import_reveal
from sdtt.errors import InputError
from sdtt.questionnaires.build import BuildResult
from sdtt.questionnaires.exports import export_files, export_text
from sdtt.surveys import surveyjs
from sdtt.surveys.tool import ExportOptions, RevealNotSupported
from sdtt.surveys.tools import TOOLS, reveal_tools
from sdtt.tasks.reveal_turns import belief_name, reveal_turns
from tests.questionnaires.helpers import SECRET_WORDS, fixture_study

REVEAL = ExportOptions(reveal=True)
KEY_WORDS = ("bot_position", "correct_choice", "topic_value", "target_human", "answer key")
MACHINERY = re.compile(r"(?<![A-Za-z0-9])(bots?|chatbots?|persona|sdtt|simulated)(?![A-Za-z0-9])")


@pytest.fixture(scope="module")
def study() -> BuildResult:
    return fixture_study()


@pytest.mark.parametrize("name", [n for n in TOOLS if n not in reveal_tools()])
def test_tools_without_reveal_say_so(study: BuildResult, name: str, tmp_path: Path) -> None:
    with pytest.raises(RevealNotSupported, match=f"not supported by this tool \\({name}\\)"):
        export_text(study.questionnaire, name, REVEAL)
    with pytest.raises(RevealNotSupported):
        export_files(study.questionnaire, [name], tmp_path, REVEAL)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("name", reveal_tools())
def test_reveal_exports_leak_nothing(study: BuildResult, name: str) -> None:
    text = export_text(study.questionnaire, name, REVEAL)
    for word in (*SECRET_WORDS, *KEY_WORDS):
        assert word.lower() not in text.lower(), f"{name} reveal export contains {word!r}"
    assert MACHINERY.search(text) is None
    assert "<script>window.__pwned" not in text and "pwned" in text


def test_surveyjs_reveal_shows_each_turn_then_asks_a_belief(study: BuildResult) -> None:
    survey = json.loads(export_text(study.questionnaire, "surveyjs", REVEAL))
    assert surveyjs.check(survey) == []
    item = study.questionnaire.items[0]
    page = next(p for p in survey["pages"] if p["name"] == item.id + "pair")
    turns = reveal_turns(item)
    assert [panel["name"] for panel in page["elements"]] == [
        f"{item.id}step{t}" for t in range(1, turns + 1)
    ]
    sliders = [panel["elements"][1] for panel in page["elements"]]
    assert [s["name"] for s in sliders] == [belief_name(item.id, t) for t in range(1, turns + 1)]
    assert {(s["type"], s["min"], s["max"]) for s in sliders} == {("slider", 0, 100)}
    # Each step shows more of the chats, and a step never shows a later turn's text.
    views = [panel["elements"][0]["html"] for panel in page["elements"]]
    assert all(len(a) < len(b) for a, b in itertools.pairwise(views))
    last_line = item.chats[0][-1].text
    assert all(last_line not in view for view in views[:-1]) and last_line in views[-1]
    # No A/B question: the last belief is the verdict.
    names = json.dumps(survey)
    assert f'"name": "{item.id}"' not in names


def test_jspsych_reveal_page_carries_the_slider_plugin(study: BuildResult) -> None:
    page = export_text(study.questionnaire, "jspsych", REVEAL)
    assert "jsPsychHtmlSliderResponse" in page and '"steps"' in page


def _answers(study: BuildResult, belief: int) -> dict[str, object]:
    answers: dict[str, object] = {"PROLIFIC_PID": "judge-1"}
    for item in study.questionnaire.items:
        truth = study.key.items[item.id]
        for turn in range(1, reveal_turns(item) + 1):
            # Catch pairs answered right so the judge is kept.
            right = 100 - belief if truth.bot_position == 1 else belief
            answers[belief_name(item.id, turn)] = right if truth.kind == "catch" else belief
        if item.topic is not None:
            answers[item.topic.name] = truth.topic_value
    return answers


def test_surveyjs_reveal_answers_import_as_traces(study: BuildResult, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps([_answers(study, 80)]), encoding="utf-8")
    traces = import_reveal([path], "surveyjs", study.questionnaire, study.key)
    assert len(traces) == len(study.questionnaire.items)
    for trace in traces:
        assert trace.judge_id == "judge-1" and not trace.excluded
        assert [p.source for p in trace.points] == ["slider"] * len(trace.points)
        assert trace.target_human is (study.key.items[trace.item_id].bot_position == 2)
        assert trace.points[0].text and "chat 1:" in trace.points[0].text


def test_jspsych_reveal_csv_imports_as_traces(study: BuildResult, tmp_path: Path) -> None:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["role", "question", "answer", "response", "rt", "judge_id", "item"])
    for name, value in _answers(study, 30).items():
        if "belief" in name:
            writer.writerow(["belief", name, "", value, "1500", "j9", name[:7]])
        elif name.endswith("topic"):
            writer.writerow(["topic", name, value, "", "900", "j9", name[:7]])
    path = tmp_path / "data.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    traces = import_reveal([path], "jspsych", study.questionnaire, study.key)
    test = [t for t in traces if t.pair_kind == "test"]
    assert test and all(t.final_belief == 30 for t in test)
    assert all(t.points[-1].time_s == pytest.approx(1.5 * len(t.points)) for t in traces)


def test_reveal_import_refuses_other_tools_and_bad_beliefs(
    study: BuildResult, tmp_path: Path
) -> None:
    path = tmp_path / "results.json"
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(InputError, match="not supported by this tool"):
        import_reveal([path], "qualtrics", study.questionnaire, study.key)
    answers = _answers(study, 80)
    answers[belief_name(study.questionnaire.items[0].id, 1)] = 140
    path.write_text(json.dumps([answers]), encoding="utf-8")
    with pytest.raises(InputError, match="outside 0 to 100"):
        import_reveal([path], "surveyjs", study.questionnaire, study.key)
