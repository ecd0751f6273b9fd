"""The importers as a library: typed options in, persona and report out, no argparse."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import sdtt.personas.importers as importers
from sdtt.cli import main
from sdtt.errors import InputError
from sdtt.personas.corpus import Corpus
from sdtt.personas.importers import (
    ChitchatOptions,
    Columns,
    ImportOptions,
    ImportResult,
    import_chat,
    import_chitchat,
    import_csv,
    import_discord,
    import_jsonl,
    import_messenger,
    import_slack,
    import_telegram,
    import_whatsapp,
)
from tests.personas.synthetic import chat, raw_conversation

from .helpers import FIXTURES, find, run_import, texts, zip_folder

ROOT = Path(__file__).parents[3]


def same_history(result: ImportResult, *argv: object, fmt: str) -> None:
    """The library call gives the persona the command line gives for ``argv``."""
    by_flags = run_import(fmt, *argv).persona
    assert result.persona.conversations == by_flags.conversations
    assert result.persona.name == by_flags.name


def consistent_report(result: ImportResult) -> None:
    report, persona = result.report, result.persona
    assert report.persona == persona.name
    assert report.conversations == len(persona.conversations)
    assert report.persona_messages == len(texts(persona, "response"))
    assert report.partner_messages == len(texts(persona, "user"))


def test_whatsapp() -> None:
    path = FIXTURES / "whatsapp" / "ambiguous_dmy.txt"
    result = import_whatsapp(
        path, ImportOptions(me="Ann Smith", scrub=False, date_format="MM/DD/YY")
    )
    assert result.report.warnings == []  # the order was given, not guessed
    assert result.report.detected == {}
    assert result.report.scrub is None and result.scrub_mapping == {}
    consistent_report(result)
    same_history(
        result, path, "--me", "Ann Smith", "--no-scrub", "--date-format", "MM/DD/YY", fmt="whatsapp"
    )
    guessed = import_whatsapp(path, ImportOptions(me="Ann Smith"))
    assert "--date-format" in guessed.report.warnings[0]
    assert guessed.report.detected == {"date order": "day/month/year"}
    assert guessed.persona.info.scrubbed and guessed.report.scrub is not None


def test_telegram() -> None:
    path = FIXTURES / "telegram" / "full_export.json"
    result = import_telegram(path, ImportOptions(me="Ann Smith", chat="cleo park", scrub=False))
    assert texts(result.persona) == ["hi", "hello"]
    consistent_report(result)
    with pytest.raises(InputError, match="--chat"):
        import_telegram(path, ImportOptions(me="Ann Smith"))


def test_discord() -> None:
    path = FIXTURES / "discord" / "dm.json"
    options = ImportOptions(me="Ann Smith", scrub=False, timezone=ZoneInfo("Europe/Berlin"))
    result = import_discord(path, options)
    first = find(result.persona, "yes! mail me at ann.smith@example.com")
    assert first.time.isoformat() == "2024-04-13T11:05:40+02:00"
    assert result.report.dropped == {"system": 2, "bot": 1, "media": 1}
    consistent_report(result)


def test_slack(tmp_path: Path) -> None:
    archive = zip_folder(FIXTURES / "slack" / "export", tmp_path / "workspace.zip")
    result = import_slack(archive, ImportOptions(me="annie", channel="#ann-bob", scrub=False))
    assert "ok Bob, will do <3" in texts(result.persona, "response")
    consistent_report(result)
    same_history(
        result, archive, "--me", "annie", "--channel", "#ann-bob", "--no-scrub", fmt="slack"
    )


def test_messenger() -> None:
    folder = FIXTURES / "messenger" / "inbox" / "bobjones_12345"
    result = import_messenger(folder, ImportOptions(me="Zoë Müller", keep_media=True))
    assert result.report.scrub is not None
    assert "Zoë" not in " ".join(texts(result.persona))
    assert "[media]" in texts(result.persona)
    consistent_report(result)
    same_history(result, folder, "--me", "Zoë Müller", "--keep-media", fmt="messenger")


def test_csv() -> None:
    path = FIXTURES / "tabular" / "chat.csv"
    options = ImportOptions(
        me="Ann Smith",
        merge_others=True,
        scrub=False,
        columns=Columns(sender="author", text="body", time="ts", conversation="chat"),
    )
    result = import_csv(path, options)
    assert [len(c.messages) for c in result.persona.conversations] == [4, 2]
    assert result.report.detected == {"delimiter": ";"}
    consistent_report(result)


def test_jsonl() -> None:
    path = FIXTURES / "tabular" / "chat.jsonl"
    options = ImportOptions(
        me="Ann Smith",
        scrub=False,
        columns=Columns(sender="author.name", text="body", time="ts"),
        time_format="epoch_ms",
    )
    result = import_jsonl(path, options)
    assert find(result.persona, "follow @annsmith99").time == datetime(
        2024, 4, 13, 9, 26, tzinfo=UTC
    )
    consistent_report(result)


def test_import_chat_by_format_name() -> None:
    path = FIXTURES / "whatsapp" / "android_eu.txt"
    options = ImportOptions(me="Ann Smith", name="ann")
    assert import_chat("whatsapp", path, options).persona.conversations == (
        import_whatsapp(path, options).persona.conversations
    )
    with pytest.raises(InputError, match="not a chat-export format"):
        import_chat("chitchat", path, options)


def test_chitchat(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, c = "aaaaaaaa-1", "bbbbbbbb-2", "cccccccc-3"
    corpus = Corpus.from_raw(
        {
            "c1": raw_conversation(chat(a, b, 6), start=0),
            "c2": raw_conversation(chat(b, c, 6), start=1000),
        },
        version="0.9.0",
    )
    monkeypatch.setattr("sdtt.personas.importers.chitchat.load_corpus", lambda: corpus)
    result = import_chitchat(ChitchatOptions(count=1, min_messages=5))
    assert [persona.name for persona in result.personas] == ["chitchat-bbbbbbbb"]
    assert result.cleaning.kept == 2


def test_report_text_is_what_the_command_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = FIXTURES / "whatsapp" / "ambiguous_dmy.txt"
    report = import_whatsapp(path, ImportOptions(me="Ann Smith", name="ann")).report
    assert main(["persona", "import", "whatsapp", str(path), "--me", "Ann Smith", "--name", "ann",
                 "--out", str(tmp_path)]) == 0  # fmt: skip
    printed = capsys.readouterr().err
    assert " ".join(printed.split()) == " ".join(str(report).split())  # the console wraps


def test_public_api_is_documented() -> None:
    for name in importers.__all__:
        value = getattr(importers, name)
        if callable(value):
            assert value.__doc__, name


SOURCES = sorted((ROOT / "sdtt" / "personas").rglob("*.py"))


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_personas_never_import_argparse_or_a_console(source: Path) -> None:
    """Only the commands layer parses the command line or prints."""
    imported: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
            imported |= {f"{node.module}.{alias.name}" for alias in node.names}
    assert not {"argparse", "rich.console", "rich.console.Console"} & imported
    if "importers" in source.parts:  # the importers neither format nor print anything
        assert not any(name == "rich" or name.startswith("rich.") for name in imported)


def test_readme_library_snippet_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The snippet of the docs' "Using sdtt as a library" (once a README section).
    section = (ROOT / "docs/how-to/library.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    monkeypatch.chdir(ROOT)
    snippet = code.group(1).replace("/tmp/p/ann.jsonl", str(tmp_path / "ann.jsonl"))
    exec(compile(snippet, "docs/how-to/library.md", "exec"), {})
    out = capsys.readouterr().out
    assert "persona whatsapp-" in out and "scrubbed:" in out
    assert (tmp_path / "ann.jsonl").exists()
    last = out.strip().splitlines()[-1]
    assert ast.literal_eval(last)  # the bot's messages


def _edited_json(source: Path, target: Path, change: Callable[[Any], None]) -> Path:
    document = json.loads(source.read_text(encoding="utf-8"))
    change(document)
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


@pytest.mark.parametrize(
    ("source", "importer", "change", "message"),
    [
        (
            FIXTURES / "telegram" / "result.json",
            import_telegram,
            lambda d: d["messages"][1].update({"from": 5}),
            "field 'messages[1].from': should be text, not a number.",
        ),
        (
            FIXTURES / "discord" / "dm.json",
            import_discord,
            lambda d: d["messages"][0]["author"].update(nickname=["x"]),
            "field 'messages[0].author.nickname': should be text, not a list.",
        ),
        (
            FIXTURES / "messenger" / "e2ee_export.json",
            import_messenger,
            lambda d: d["messages"][0].update(timestamp="noon"),
            "field 'messages[0].timestamp': should be milliseconds since 1970 (a number).",
        ),
        (
            FIXTURES / "messenger" / "e2ee_export.json",
            import_messenger,
            lambda d: d.update(participants=[{"name": 7}]),
            "field 'participants[0].name': should be text, not a number.",
        ),
    ],
)
def test_shape_errors_name_the_file_and_field_path_in_one_line(
    tmp_path: Path,
    source: Path,
    importer: Callable[[Path, ImportOptions], ImportResult],
    change: Callable[[Any], None],
    message: str,
) -> None:
    target = _edited_json(source, tmp_path / source.name, change)
    with pytest.raises(InputError) as caught:
        importer(target, ImportOptions(me="Ann Smith"))
    text = str(caught.value)
    assert text.startswith(f"{target} {message}")
    assert text.endswith("Is this the right export format?") and "\n" not in text
