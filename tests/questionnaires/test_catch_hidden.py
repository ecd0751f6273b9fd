"""Under a judge design nothing a judge receives singles out the catch pair: no id or chat
that the single jsPsych page shares between forms, and the catch at a random place in
every tool (the Qualtrics flow is played here as Qualtrics runs it)."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sdtt.cli import main
from sdtt.dialogue.store import write_transcripts
from sdtt.questionnaires.build import BuildResult, build_questionnaire
from sdtt.questionnaires.exports import export_files
from sdtt.surveys.qualtrics import qualtrics_id
from sdtt.tasks.layout import escape_html
from sdtt.tasks.study import DesignSpec, StudySpec
from tests.questionnaires.helpers import bots, humans, pairings

JUDGES = 400


def _study(k: int = 2, seed: int = 5) -> BuildResult:
    spec = StudySpec(
        name="design",
        seed=seed,
        x_turns=[3, 10],
        catch_pairs=1,
        design=DesignSpec(pairs_per_judge=k),
    )
    return build_questionnaire(spec, pairings())


def _catches(study: BuildResult) -> set[str]:
    return {i for i, truth in study.key.items.items() if truth.kind == "catch"}


def test_the_single_jspsych_page_holds_no_id_or_chat_line_readably(tmp_path: Path) -> None:
    study = _study()
    export_files(study.questionnaire, ["jspsych"], tmp_path)
    page = (tmp_path / "jspsych.html").read_text(encoding="utf-8")
    # Before, every form's list of ids was readable and only the catch's id was in all.
    for item in study.questionnaire.items:
        assert item.id not in page
        for chat in item.chats:
            for line in chat:
                assert escape_html(line.text) not in page
    (data,) = re.findall(r'<script type="application/json" id="study-data">(.*?)</script>', page)
    forms = json.loads(data)["forms"]
    assert len(forms) == len(study.questionnaire.forms)
    # Each form is scrambled with its own key: the same pair (and the catch, in all of
    # them) never gives the same text in two forms.
    blobs = [blob for _key, blob in forms]
    pieces = [{blob[i : i + 16] for i in range(0, len(blob) - 16, 4)} for blob in blobs]
    for first in range(len(blobs)):
        for second in range(first + 1, len(blobs)):
            assert not any(piece in blobs[second] for piece in pieces[first])


def test_per_form_files_put_the_catch_at_different_places(tmp_path: Path) -> None:
    places: Counter[int] = Counter()
    for seed in range(3):
        study = _study(seed=seed)
        catches = _catches(study)
        folder = tmp_path / str(seed)
        export_files(study.questionnaire, ["surveyjs"], folder)
        for form in study.questionnaire.forms:
            survey = json.loads(
                (folder / f"form-{form.number:02d}" / "surveyjs.json").read_text("utf-8")
            )
            (pairs,) = [p for p in survey["pages"] if p["name"] == "pairs"]
            names = [panel["name"].removesuffix("page") for panel in pairs["elements"]]
            places[next(i for i, name in enumerate(names) if name in catches)] += 1
    assert sorted(places) == [0, 1, 2]  # first, middle and last all occur


def _play(node: dict[str, Any], rng: random.Random, data: dict[str, str], shown: list[str]) -> None:
    """Runs one judge through a survey flow as Qualtrics does."""
    kind = node["Type"]
    if kind in ("Block", "Standard"):
        shown.append(node["ID"])
    elif kind == "EmbeddedData":
        for field in node["EmbeddedData"]:
            data[field["Field"]] = field.get("Value", "")
    elif kind == "BlockRandomizer":
        # A random SubSet of its elements, in a random order.
        for child in rng.sample(node["Flow"], int(node["SubSet"])):
            _play(child, rng, data, shown)
    elif kind == "Branch":
        condition = node["BranchLogic"]["0"]["0"]
        assert condition["LogicType"] == "EmbeddedField"
        assert condition["Operator"] == "EqualTo"
        if data.get(condition["LeftOperand"]) == condition["RightOperand"]:
            for child in node["Flow"]:
                _play(child, rng, data, shown)
    elif kind in ("Root", "Group"):
        for child in node["Flow"]:
            _play(child, rng, data, shown)
    else:
        raise AssertionError(f"flow element {kind} is not modelled here")


def test_the_single_qualtrics_flow_puts_the_catch_anywhere_and_no_pair_twice(
    tmp_path: Path,
) -> None:
    k = 2
    ranks: Counter[int] = Counter()
    for seed in range(3):
        study = _study(k=k, seed=seed)
        questionnaire = study.questionnaire
        folder = tmp_path / str(seed)
        export_files(questionnaire, ["qualtrics"], folder)
        qsf = json.loads((folder / "qualtrics.qsf").read_text(encoding="utf-8"))
        flow = next(e for e in qsf["SurveyElements"] if e["Element"] == "FL")["Payload"]
        blocks = next(e for e in qsf["SurveyElements"] if e["Element"] == "BL")["Payload"]
        item_of = {
            qualtrics_id("BL_", f"{questionnaire.id}:{i.id}"): i.id for i in questionnaire.items
        }
        first_qid = {
            b["ID"]: int(b["BlockElements"][0]["QuestionID"][3:])
            for b in blocks
            if b["ID"] in item_of
        }
        catches = _catches(study)
        places: Counter[int] = Counter()
        seen: Counter[str] = Counter()
        rng = random.Random(seed)
        for _ in range(JUDGES):
            shown: list[str] = []
            _play(flow, rng, {}, shown)
            items = [item_of[block] for block in shown if block in item_of]
            tests = [study.key.items[i] for i in items if i not in catches]
            assert len(tests) == k and len({t.pair for t in tests}) == k  # k pairs, none twice
            assert sum(i in catches for i in items) == 1
            places[next(n for n, i in enumerate(items) if i in catches)] += 1
            seen.update(t.pair or "" for t in tests)
            # Question ids show in the page's HTML: the catch's are not always the highest.
            by_qid = sorted((b for b in shown if b in item_of), key=first_qid.__getitem__)
            ranks[next(n for n, b in enumerate(by_qid) if item_of[b] in catches)] += 1
        # The catch is as likely at each place as a test pair (before: always last).
        assert sorted(places) == list(range(k + 1))
        assert min(places.values()) > JUDGES / (k + 1) / 2
        assert len(seen) == len({i.pair for i in questionnaire.items if i.pair})
    assert sorted(ranks) == list(range(k + 1))


def test_export_still_warns_of_a_model_named_in_a_scrambled_chat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    chats = bots()
    last = chats[0].messages[-1]
    chats[0].messages[-1] = last.model_copy(update={"text": "i am not gpt-4o-2024-08-06"})
    write_transcripts(tmp_path / "bots.jsonl", chats)
    write_transcripts(tmp_path / "humans.jsonl", humans())
    monkeypatch.chdir(tmp_path)
    build = ["questionnaire", "build", "--bot", "bots.jsonl", "--human", "humans.jsonl"]
    assert main([*build, "--x", "3", "--pairs-per-judge", "1", "--out", "s"]) == 0
    capsys.readouterr()
    assert main(["questionnaire", "export", "s", "--format", "jspsych"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the jspsych export mentions gpt-4o-2024-08-06" in out
