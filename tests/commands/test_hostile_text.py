"""Text that would mislead judges or hide a damaged file: reported, neutralised or refused.

Lone surrogates and NULs read from a file are repaired and said so; bidi controls and
invisible characters leave no export; empty, NUL-filled, UTF-16 and garbled survey
files are one error line; a pipe that delivers a whole file is read.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest

from sdtt.questionnaires.exports import export_texts
from sdtt.redact import HIDDEN_CHARACTERS
from sdtt.surveys.tools import TOOLS
from sdtt.tasks.questionnaire import Questionnaire
from tests.commands.inputs import run
from tests.commands.test_hostile_input import one_line_error
from tests.questionnaires.helpers import fixture_study

# -- 1. lone surrogates and NULs are repaired and reported ------------------------------


def test_a_judgement_file_with_lone_surrogates_and_nuls_says_what_was_changed(
    inputs: dict[str, Path],
) -> None:
    path = inputs["judgements"]
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["source"] = "half \ud83d an emoji and a \x00 NUL"
    lines[1] = json.dumps(record)  # ensure_ascii: "\ud83d" and "\u0000" escapes
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outcome = run("score", str(path), "--bootstrap", "0")
    assert outcome.code == 0, outcome.text
    assert f"{path.name}:2: text changed on the way in" in outcome.text
    assert "1 lone surrogate(s) replaced by U+FFFD and 1 NUL character(s) removed" in outcome.text


def test_a_nul_in_a_transcript_is_removed_from_the_study_and_reported(
    inputs: dict[str, Path],
) -> None:
    path = inputs["transcript"]
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"text":"', '"text":"a\\u0000b '), encoding="utf-8")
    built = run(
        "questionnaire", "build", "--bot", str(path), "--human", str(inputs["humans"]),
        "--x", "3", "--catch", "0", "--out", "built",
    )  # fmt: skip
    assert built.code == 0, built.text
    assert f"{path.name}:" in built.err and "NUL character(s) removed" in built.err
    study = Path("built/questionnaire.json").read_text(encoding="utf-8")
    assert "\\u0000" not in study and "ab " in study


def test_a_lone_surrogate_in_a_json_document_is_reported(inputs: dict[str, Path]) -> None:
    path = inputs["questionnaire"]
    text = path.read_text(encoding="utf-8")
    document = json.loads(text)
    document["title"] = "Which \ud800 one?"
    path.write_text(json.dumps(document), encoding="utf-8")
    outcome = run("questionnaire", "export", str(inputs["study"]), "--format", "csv")
    assert outcome.code == 0, outcome.text
    assert f"{path.name}:1: text changed on the way in: 1 lone surrogate(s)" in outcome.text


# -- 2. bidi controls and invisible characters leave no export --------------------------

PLANTED = "\u202e\u200b\ufeff\u2066\u200e"


def _hostile_questionnaire() -> Questionnaire:
    data = fixture_study().questionnaire.model_dump()

    def plant(value: object) -> object:
        if isinstance(value, str):
            return value.replace("replies", f"re{PLANTED}plies")
        if isinstance(value, list | tuple):
            return [plant(item) for item in value]
        if isinstance(value, dict):
            return {key: plant(item) for key, item in value.items()}
        return value

    planted = Questionnaire.model_validate(plant(data))
    shown = json.dumps(planted.model_dump(mode="json"), ensure_ascii=False)
    assert PLANTED in shown, "the fixture's chats say 'replies'"
    return planted


def _hidden_in(text: str) -> list[str]:
    """Hidden characters in an export, raw or escaped (JSON, HTML, CSS)."""
    found = [f"U+{ord(char):04X}" for char in set(text) & HIDDEN_CHARACTERS]
    escapes = r"\\u(?:202[a-eA-E]|200[b-fB-F]|206[0-9]|feff|FEFF)|&#x?(?:8238|202e|8203|200b)"
    return found + re.findall(escapes, text)


@pytest.mark.parametrize("tool", TOOLS)
def test_no_export_carries_a_bidi_control_or_invisible_character(tool: str) -> None:
    with pytest.warns(UserWarning, match="bidi-control or invisible character"):
        texts = export_texts(_hostile_questionnaire(), tool)
    for name, text in texts.items():
        assert not _hidden_in(text), (name, _hidden_in(text)[:5])
        assert "replies" in text or "replies" in json.dumps(text), name


def test_questionnaire_export_says_how_many_hidden_characters_it_left_out(
    inputs: dict[str, Path],
) -> None:
    path = inputs["questionnaire"]
    path.write_text(_hostile_questionnaire().model_dump_json(), encoding="utf-8")
    outcome = run("questionnaire", "export", str(inputs["study"]), "--format", "all")
    assert outcome.code == 0, outcome.text
    assert "bidi-control or invisible character(s)" in outcome.err
    for export in (inputs["study"] / "export").rglob("*.*"):
        assert not _hidden_in(export.read_text(encoding="utf-8")), export.name


# -- 4. questionnaire check and responses import on files that are not surveys ----------

DAMAGE = {
    "empty": b"",
    "all NUL": b"\x00" * 5000,
    "UTF-16 without BOM": "class\tname\ttext\n".encode("utf-16-le"),
}


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize("suffix", [".txt", ".json", ".qsf"])
def test_questionnaire_check_on_a_file_that_is_no_survey_is_an_error_line(
    tmp_path: Path, damage: str, suffix: str
) -> None:
    path = tmp_path / f"survey{suffix}"
    path.write_bytes(DAMAGE[damage])
    outcome = run("questionnaire", "check", str(path))
    one_line_error(outcome, path)
    assert not outcome.out
    assert len(outcome.err) < 400 and "\\x00" not in outcome.err


def test_questionnaire_check_on_a_garbled_limesurvey_file_is_an_error_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "survey.txt"
    path.write_text("PK\x03\x04 this is a zip, saved as .txt\nmore; garbage, here\n", "utf-8")
    outcome = run("questionnaire", "check", str(path))
    one_line_error(outcome, path, "not a LimeSurvey tab-separated file")
    assert not outcome.out


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize("kind", ["surveyjs", "csv"])
def test_responses_import_of_an_empty_or_nul_file_is_refused(
    inputs: dict[str, Path], damage: str, kind: str
) -> None:
    path = inputs[f"responses_{kind}"]
    path.write_bytes(DAMAGE[damage])
    outcome = run(
        "responses", "import", "--study", str(inputs["study"]), "--format", kind,
        str(path), "--out", "j.jsonl",
    )  # fmt: skip
    one_line_error(outcome, path)
    assert "judgement(s) written" not in outcome.text
    assert len(outcome.err) < 400 and "\\x00" not in outcome.err
    assert not Path("j.jsonl").exists()


# -- 5. a pipe that delivers a whole file is read ---------------------------------------


def _feed(fifo: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with fifo.open("wb") as pipe:  # blocks until the command opens its end
            pipe.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def test_score_reads_a_pipe_that_delivers_a_whole_file(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    fifo = tmp_path / "judgements.fifo"
    os.mkfifo(fifo)
    writer = _feed(fifo, inputs["judgements"].read_bytes())
    from_pipe = run("score", str(fifo), "--bootstrap", "0")
    writer.join()
    from_file = run("score", str(inputs["judgements"]), "--bootstrap", "0")
    assert from_pipe.code == 0, from_pipe.text
    assert from_pipe.out == from_file.out
