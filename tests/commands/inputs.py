"""Valid input files of every kind a command reads, and a runner that captures a command.

The hostile-input tests and the fuzz test start from these files and damage them.
"""

from __future__ import annotations

import os
import shutil
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from unittest import mock

from sdtt.cli import main
from sdtt.dialogue.store import write_transcripts
from sdtt.questionnaires.answers import import_responses
from sdtt.tasks.judgements import write_judgements
from sdtt.tasks.questionnaire import save_study
from tests.questionnaires.helpers import bots, fixture_study, humans

PERSONA = Path(__file__).parents[2] / "sdtt" / "data" / "personas" / "chitchat-32b20fa3.jsonl"
QUESTIONNAIRE_FIXTURES = Path(__file__).parents[1] / "questionnaires" / "fixtures"
EXPORT_FIXTURES = Path(__file__).parents[1] / "personas" / "importers" / "fixtures"
CHAT_EXPORTS = {
    "whatsapp": "whatsapp/android_eu.txt",
    "telegram": "telegram/full_export.json",
    "discord": "discord/dm.json",
    "csv": "tabular/chat.csv",
    "jsonl": "tabular/chat.jsonl",
}
RESPONSE_FILES = {
    "surveyjs": "surveyjs-results.json",
    "qualtrics": "qualtrics-responses.csv",
    "jspsych": "jspsych-data.csv",
    "limesurvey": "limesurvey-responses.csv",
    "csv": "generic-answers.csv",
}
PLAN_TOML = """\
topics = "chitchat"
turns_per_topic = 2

[grid]
personas = ["chitchat-32b20fa3"]
models = ["mock/chatty"]
modes = ["burst"]
seeds = [0]
turns = [2]
"""
SPEC_TOML = """\
name = "pilot"
seed = 3
x_turns = [3]
catch_pairs = 0
"""


@dataclass(frozen=True)
class Outcome:
    """What a command did: exit code and everything it printed."""

    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        """stdout and stderr, with line breaks as spaces."""
        return " ".join((self.out + "\n" + self.err).split())


def run(*argv: str) -> Outcome:
    """Run ``sdtt ARGV`` in-process; a traceback fails the calling test."""
    out, err = StringIO(), StringIO()
    # Wide enough that Rich never wraps a message (it breaks long paths anywhere).
    wide = mock.patch.dict(os.environ, {"COLUMNS": "2000"})
    with wide, redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return Outcome(code, out.getvalue(), err.getvalue())


def write_inputs(folder: Path) -> dict[str, Path]:
    """One valid file of each kind under ``folder``, by kind."""
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    files["persona"] = folder / "persona.jsonl"
    shutil.copyfile(PERSONA, files["persona"])
    files["transcript"] = folder / "bots.jsonl"
    write_transcripts(files["transcript"], bots())
    files["humans"] = folder / "humans.jsonl"
    write_transcripts(files["humans"], humans())
    study = fixture_study()
    files["study"] = folder / "study"
    save_study(files["study"], study.questionnaire, study.key)
    files["questionnaire"] = files["study"] / "questionnaire.json"
    files["answer_key"] = files["study"] / "answer-key.json"
    for name, file in RESPONSE_FILES.items():
        files[f"responses_{name}"] = folder / file
        shutil.copyfile(QUESTIONNAIRE_FIXTURES / file, files[f"responses_{name}"])
    for name, file in CHAT_EXPORTS.items():
        files[f"export_{name}"] = folder / f"export-{name}{Path(file).suffix}"
        shutil.copyfile(EXPORT_FIXTURES / file, files[f"export_{name}"])
    result = import_responses([files["responses_csv"]], "csv", study.questionnaire, study.key)
    files["judgements"] = folder / "judgements.jsonl"
    write_judgements(files["judgements"], result.judgements)
    files["plan_toml"] = folder / "plan.toml"
    files["plan_toml"].write_text(PLAN_TOML, encoding="utf-8")
    files["spec_toml"] = folder / "spec.toml"
    files["spec_toml"].write_text(SPEC_TOML, encoding="utf-8")
    files["script"] = folder / "script.txt"
    files["script"].write_text("hey\n\nhow are you\n", encoding="utf-8")
    files["topics"] = folder / "topics.txt"
    files["topics"].write_text("pets\ncooking\n", encoding="utf-8")
    generated = run(
        "generate",
        "--persona",
        str(files["persona"]),
        "--model",
        "mock/chatty",
        "--turns",
        "2",
        "--turns-per-topic",
        "1",
        "--topics",
        str(files["topics"]),
        "--out",
        str(folder / "pseudo"),
    )
    assert generated.code == 0, generated.text
    (files["chain"],) = (folder / "pseudo").glob("*.jsonl")
    return files
