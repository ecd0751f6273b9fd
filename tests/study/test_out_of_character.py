"""A study whose models once echo their own instructions: the messages are caught, never
sent, and counted per condition in the chat's record and in the study's report."""

from __future__ import annotations

import json
from pathlib import Path

from sdtt.cli import main
from sdtt.dialogue.store import read_transcripts
from sdtt.engine.events import ModelCallFinished, read_event_log
from sdtt.models.base import GenerateConfig, ModelAPI, Prompt
from sdtt.models.mock import chatty_script
from sdtt.models.registry import create_api
from sdtt.study.figures import character_lines
from sdtt.study.runner import StudyRunner
from sdtt.study.spec import read_spec
from tests.study.helpers import drive, write_spec

BOT_ECHO = "You are a real person chatting by text message."
INTERROGATOR_ECHO = "You are a person texting with someone you have not met before."


class EchoOnce:
    """mock/chatty providers; the study's first bot call and first interrogator call
    answer with a line of that side's instructions (as small base models did)."""

    def __init__(self) -> None:
        self.echoed: set[str] = set()

    def __call__(self, name: str) -> ModelAPI:
        script = chatty_script()

        def reply(prompt: Prompt, config: GenerateConfig) -> object:
            for echo in (BOT_ECHO, INTERROGATOR_ECHO):
                if echo.rstrip(".") in prompt.instructions and echo not in self.echoed:
                    self.echoed.add(echo)
                    return f"Response: hey\nResponse: {echo}"
            return script(prompt, config)

        return create_api(name, replies=reply)


def _report_rows(out: Path) -> list[list[str]]:
    figures = json.loads((out / "report" / "figures.json").read_text("utf-8"))
    [section] = [
        s for s in figures["sections"] if s["title"].startswith("Messages caught out of character")
    ]
    assert section["header"][1:] == [
        "chats",
        "chats with one",
        "bot messages",
        "interrogator messages",
        "judgements on those chats",
    ]
    return [list(row) for row in section["rows"]]


def test_an_echo_of_the_instructions_is_counted_per_condition_in_the_report(
    tmp_path: Path,
) -> None:
    spec = write_spec(tmp_path)
    models = EchoOnce()
    assert StudyRunner(read_spec(spec), drive=drive, api_factory=models).run().finished
    assert models.echoed == {BOT_ECHO, INTERROGATOR_ECHO}
    out = tmp_path / "out"
    chats = sorted((out / "chats").glob("*/*.jsonl"))
    transcripts = {
        path.parent.name: read_transcripts(path)[0]
        for path in chats
        if not path.name.endswith(".events.jsonl")
    }
    # The first chat held both echoes; neither was sent.
    first, second = (transcripts[name] for name in sorted(transcripts))
    assert first.meta["out_of_character"] == {"bot": 1, "interrogator": 1}
    assert second.meta["out_of_character"] == {"bot": 0, "interrogator": 0}
    for transcript in transcripts.values():
        assert not any("You are" in message.text for message in transcript.messages)
    # The bot's event log says which call it was.
    logs = sorted(p for p in chats if p.name.endswith(".events.jsonl"))
    calls = [
        event
        for event in read_event_log(logs[0]).events
        if isinstance(event, ModelCallFinished) and event.out_of_character
    ]
    assert [(call.call, call.out_of_character, call.ok) for call in calls] == [(1, 1, True)]

    rows = _report_rows(out)
    assert len(rows) == 2
    with_echo = next(row for row in rows if row[3] == "1")
    assert with_echo[1:5] == ["1", "1", "1", "1"]
    assert int(with_echo[5]) > 0  # the LLM judge's judgements of that chat's pairs
    [clean] = [row for row in rows if row is not with_echo]
    assert clean[1:] == ["1", "0", "0", "0", "0"]
    assert "Messages caught out of character" in (out / "report" / "report.md").read_text("utf-8")
    # ... and sdtt study run says so when it finishes.
    [line] = character_lines(read_spec(spec))
    assert line.startswith(with_echo[0])
    assert "1 bot and 1 interrogator message(s) caught out of character in 1 of 1 chat(s)" in line

    # sdtt report, given the study's questionnaire, shows the same table.
    again = tmp_path / "again"
    judgements = out / "judgements" / "llm.jsonl"
    args = ["report", str(judgements), "--study", str(out / "questionnaire"), "--out", str(again)]
    assert main([*args, "--bootstrap", "0"]) == 0
    shown = (again / "report.md").read_text("utf-8")
    table = shown.split("Messages caught out of character", 1)[1]
    assert "| 1 | 1 | 1 | 1 |" in " ".join(table.split())
