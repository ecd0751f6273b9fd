"""``sdtt persona list|show|import`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.personas.corpus import Corpus
from sdtt.personas.store import DEFAULT_PERSONA, SHIPPED_DIR, load_persona, save_persona
from tests.personas.synthetic import chat, persona, raw_conversation


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "personas").mkdir()
    return tmp_path


def assert_one_paragraph_error(err: str, *parts: str) -> None:
    assert "Traceback" not in err
    text = err.strip()
    assert text.startswith("error: ")
    assert "\n\n" not in text
    for part in parts:
        assert part in " ".join(text.split())


def test_show_on_a_malformed_file_exits_2_with_one_paragraph(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = save_persona(persona(), Path("personas/ada.jsonl"))
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace('"side":"user"', '"side":"user",')
    path.write_text("\n".join(lines) + "\n")
    assert main(["persona", "show", "ada"]) == 2
    captured = capsys.readouterr()
    assert_one_paragraph_error(captured.err, "personas/ada.jsonl:3: is not valid JSON")
    assert captured.out == ""


def test_show_on_a_persona_without_messages_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    path = save_persona(persona(), Path("personas/ada.jsonl"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in records if r["type"] != "message"))
    assert main(["persona", "show", "personas/ada.jsonl"]) == 2
    assert_one_paragraph_error(
        capsys.readouterr().err, "personas/ada.jsonl: has no messages by the persona"
    )


def test_show_prints_statistics_of_a_shipped_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["persona", "show", DEFAULT_PERSONA, "--last", "2"]) == 0
    out = capsys.readouterr().out
    for expected in ("chitchat-dataset", "MIT", "words per message", "burst sizes", "Timing"):
        assert expected in out
    assert "6 conversations, 147 turns, 473 messages" in out


def test_list_shows_local_and_shipped_personas_and_survives_a_broken_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    save_persona(persona("ada"), Path("personas/ada.jsonl"))
    Path("personas/broken.jsonl").write_text("[]\n")
    assert main(["persona", "list"]) == 0
    out = capsys.readouterr().out
    assert "ada" in out and DEFAULT_PERSONA in out and "unreadable" in out
    assert "broken.jsonl:1: holds a JSON list" in " ".join(out.split())


A, B, C = "aaaaaaaa-1", "bbbbbbbb-2", "cccccccc-3"


@pytest.fixture
def small_corpus(monkeypatch: pytest.MonkeyPatch) -> Corpus:
    corpus = Corpus.from_raw(
        {
            "c1": raw_conversation(chat(A, B, 6), start=0),
            "c2": raw_conversation(chat(B, C, 6), start=1000),
            "c3": raw_conversation(chat(C, A, 2), start=2000),
            "solo": raw_conversation([(C, f"alone {i}") for i in range(40)], start=3000),
        },
        version="0.9.0",
    )
    monkeypatch.setattr("sdtt.personas.importers.chitchat.load_corpus", lambda: corpus)
    return corpus


def test_import_picks_the_busiest_senders_and_writes_loadable_files(
    small_corpus: Corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["persona", "import", "chitchat", "--count", "2", "--min-messages", "5"]) == 0
    written = sorted(path.name for path in Path("personas").iterdir())
    # Messages: B 12 + 6, C 12 + 2, A 6 + 4 (the single-speaker chat does not count).
    assert written == ["chitchat-bbbbbbbb.jsonl", "chitchat-cccccccc.jsonl"]
    b = load_persona("personas/chitchat-bbbbbbbb.jsonl")
    assert [c.id for c in b.conversations] == ["c1", "c2"]
    assert b.info.timing is not None
    assert b.info.source == "chitchat-dataset 0.9.0"
    assert "chitchat-bbbbbbbb" in capsys.readouterr().out


def test_import_refuses_to_overwrite_without_force(
    small_corpus: Corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["persona", "import", "chitchat", "--sender", "cccc", "--out", "out"]
    assert main(args) == 0
    assert main(args) == 2
    assert_one_paragraph_error(capsys.readouterr().err, "would overwrite", "--force")
    assert main([*args, "--force", "--history-turns", "2"]) == 0
    assert [c.id for c in load_persona("out/chitchat-cccccccc.jsonl").conversations] == ["c3"]


def test_import_with_too_high_a_threshold_says_so(
    small_corpus: Corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["persona", "import", "chitchat", "--min-messages", "1000"]) == 2
    assert_one_paragraph_error(capsys.readouterr().err, "no sender", "--min-messages")


def test_rebuilding_the_examples_from_the_real_corpus_gives_the_same_histories(
    tmp_path: Path,
) -> None:
    examples = sorted(SHIPPED_DIR.glob("chitchat-*.jsonl"))
    assert len(examples) == 3
    senders = [load_persona(path).info.extra["sender"] for path in examples]
    args = ["persona", "import", "chitchat", "--out", str(tmp_path / "rebuilt")]
    for sender in senders:
        args += ["--sender", sender]
    assert main(args) == 0
    for path in examples:
        original = load_persona(path)
        rebuilt = load_persona(tmp_path / "rebuilt" / path.name)
        assert rebuilt.conversations == original.conversations
        ignored = {"created", "timing"}
        assert rebuilt.info.model_dump(exclude=ignored) == original.info.model_dump(exclude=ignored)


def test_import_from_the_corpus_says_how_far_it_is(
    small_corpus: Corpus, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["persona", "import", "chitchat", "--count", "2", "--min-messages", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    steps = [line for line in lines if "loading" in line or line.startswith("persona ")]
    assert steps == [
        "chitchat corpus: loading...",
        "persona 1 of 2: sender bbbbbbbb-2",
        "persona 2 of 2: sender cccccccc-3",
    ]
