"""The single-item commands end to end, offline: a mock model, fabricated human answers
and the SVM judge, as the README's worked examples run them."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sdtt.cli import main
from sdtt.single.response import read_responses
from tests.fakes.openai_fake import FakeOpenAIServer

PNG = b"\x89PNG\r\n\x1a\n"


def test_word_association_from_cues_to_the_svm_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["wordassoc", "cues"]) == 0
    cues = capsys.readouterr().out.split()
    assert len(cues) == 150
    Path("cues.txt").write_text("\n".join(cues[:40]) + "\n")
    assert (
        main(
            [
                "wordassoc",
                "generate",
                "--model",
                "mock/short",
                "--cues",
                "cues.txt",
                "-o",
                "machine.jsonl",
            ]
        )
        == 0
    )
    machine = read_responses("machine.jsonl")
    assert len(machine) == 40 and {r.agent for r in machine} == {"mock/short"}
    # Fabricated human answers: two per cue, words the mock never says.
    human_words = ["cat", "warmth", "yesterday", "ocean", "pillowcase", "grumpy"]
    rows = [
        f"{cue},{human_words[(i + k) % 6]},p{k}" for i, cue in enumerate(cues[:40]) for k in (0, 1)
    ]
    Path("human.csv").write_text("cue,association,participant\n" + "\n".join(rows) + "\n")
    assert (
        main(["wordassoc", "import", "human.csv", "--cues", "cues.txt", "-o", "human.jsonl"]) == 0
    )
    capsys.readouterr()
    assert (
        main(
            [
                "wordassoc",
                "svm",
                "machine.jsonl",
                "human.jsonl",
                "--folds",
                "5",
                "-o",
                "verdicts.jsonl",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "detectability" in out and "over 40" in out
    verdicts = [json.loads(line) for line in Path("verdicts.jsonl").read_text().splitlines()]
    usable = sum(r.usable for r in [*machine, *read_responses("human.jsonl")])
    assert len(verdicts) == usable
    assert (
        main(["wordassoc", "catch", "--count", "3", "--cues", "cues.txt", "-o", "catch.jsonl"]) == 0
    )
    catch = read_responses("catch.jsonl")
    assert all(r.catch and r.response == r.stimulus for r in catch)
    assert (
        main(["wordassoc", "svm", "machine.jsonl", "human.jsonl", "catch.jsonl", "--folds", "5"])
        == 0
    )
    assert f"Wrote {usable} verdicts" not in capsys.readouterr().out  # no --out: none written
    files = ["machine.jsonl", "human.jsonl", "catch.jsonl"]
    assert main(["wordassoc", "preview", *files, "-o", "items.html"]) == 0
    page = Path("items.html").read_text()
    assert page.count("<li") == usable + 3 and "mock/short" not in page and "catch" not in page


def test_an_existing_out_is_kept_unless_forced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("machine.jsonl").write_text("precious\n")
    Path("cues.txt").write_text("bread\n")
    args = [
        "wordassoc",
        "generate",
        "--model",
        "mock/short",
        "--cues",
        "cues.txt",
        "-o",
        "machine.jsonl",
    ]
    assert main(args) == 2
    assert "pass --force" in capsys.readouterr().err
    assert Path("machine.jsonl").read_text() == "precious\n"
    assert main([*args, "--force"]) == 0


def test_captions_from_images_to_the_preview(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("images").mkdir()
    for index in range(1, 5):
        (Path("images") / f"{index:04d}.png").write_bytes(PNG + bytes([index]))
    assert (
        main(
            [
                "captions",
                "generate",
                "--model",
                "mock/short",
                "--images",
                "images",
                "-o",
                "machine.jsonl",
            ]
        )
        == 0
    )
    assert [r.stimulus for r in read_responses("machine.jsonl")] == [
        "0001.png",
        "0002.png",
        "0003.png",
        "0004.png",
    ]
    Path("human.csv").write_text(
        "image,caption\n0001.png,a <b>bold</b> claim\n0002.png,two dogs play\n"
        "0003.png,someone cooks\n0004.png,a quiet street\n"
    )
    assert main(["captions", "import", "human.csv", "--images", "images", "-o", "human.jsonl"]) == 0
    assert (
        main(
            [
                "captions",
                "preview",
                "machine.jsonl",
                "human.jsonl",
                "--images",
                "images",
                "-o",
                "items.html",
            ]
        )
        == 0
    )
    page = Path("items.html").read_text()
    assert page.count("data:image/png;base64,") == 8
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold" not in page
    assert main(["captions", "svm", "machine.jsonl", "human.jsonl", "--folds", "2"]) == 0
    assert (
        main(
            [
                "captions",
                "generate",
                "--model",
                "local/gemma-3-270m",
                "--images",
                "images",
                "-o",
                "local.jsonl",
            ]
        )
        == 2
    )
    assert "cannot be shown images" in capsys.readouterr().err
    assert not Path("local.jsonl").exists()


def test_import_kreiman_writes_each_kind_of_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("word.json").write_text('{"bread": "butter", "river": "water"}')
    assert (
        main(
            [
                "import-kreiman",
                "responses",
                "word.json",
                "--task",
                "wordassoc",
                "--agent",
                "gpt2",
                "-o",
                "word.jsonl",
            ]
        )
        == 0
    )
    assert [r.response for r in read_responses("word.jsonl")] == ["butter", "water"]
    Path("gt.json").write_text(
        json.dumps(
            {
                "0001.jpg": [
                    {"response": "A cat.", "groundtruth": "human", "machine_groundtruth": ""}
                ]
            }
        )
    )
    assert (
        main(["import-kreiman", "groundtruth", "gt.json", "--task", "caption", "-o", "gt.jsonl"])
        == 0
    )
    Path("convs").mkdir()
    Path("convs/conv1_len3.html").write_text("<p> A: hi </p><p> B: hey </p><p> A: ok </p>")
    Path("labels.json").write_text('{"conv1_len3": "HAI"}')
    assert (
        main(
            [
                "import-kreiman",
                "conversations",
                "convs",
                "--labels",
                "labels.json",
                "-o",
                "transcripts.jsonl",
            ]
        )
        == 0
    )
    assert '"speakers"' in Path("transcripts.jsonl").read_text()
    trial = json.dumps(
        {
            "phase": "TEST",
            "conversationID": "conv1_len3.html",
            "Aclass": "HH",
            "rt": 900,
            "hit_len": 3,
            "topic": "2",
        }
    ).replace('"', '""')
    Path("trialdata.csv").write_text(f'w1,1,0,"{trial}"\n')
    Path("questiondata.csv").write_text("w1,age,20-25\n")
    assert (
        main(
            [
                "import-kreiman",
                "psiturk",
                "trialdata.csv",
                "--questions",
                "questiondata.csv",
                "-o",
                "trials.jsonl",
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in Path("trials.jsonl").read_text().splitlines()]
    assert [row["record"] for row in rows] == ["trial", "demographics"]
    assert rows[0]["said_a"] == "human" and rows[1]["age"] == "20-25"
    Path("verdicts.csv").write_text(
        "judge,conversation,exchange,speaker,verdict,reason\nj,conv1_len3,1,B,machine,odd\n"
    )
    assert (
        main(
            [
                "import-kreiman",
                "verdicts",
                "verdicts.csv",
                "--study",
                "k",
                "--labels",
                "labels.json",
                "-o",
                "traces.jsonl",
            ]
        )
        == 0
    )
    assert '"reason":"odd"' in Path("traces.jsonl").read_text().replace(" ", "")


def test_llm_judge_on_the_openai_fake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    Path("word.json").write_text('{"bread": "butter", "river": "water"}')
    main(
        [
            "import-kreiman",
            "responses",
            "word.json",
            "--task",
            "wordassoc",
            "--agent",
            "gpt2",
            "-o",
            "machine.jsonl",
        ]
    )
    Path("human.csv").write_text("cue,association\nbread,toast\nriver,boat\n")
    main(["wordassoc", "import", "human.csv", "-o", "human.jsonl"])

    def reply(body: Mapping[str, Any]) -> str:
        asked = body["messages"][-1]["content"]
        count = int(re.search(r"along with (\d+)", asked).group(1))  # type: ignore[union-attr]
        return "Summary of Classifications\n" + "- AI-generated\n" * count

    with FakeOpenAIServer(reply=reply) as server:
        assert (
            main(
                [
                    "wordassoc",
                    "llm-judge",
                    "machine.jsonl",
                    "human.jsonl",
                    "--model",
                    "openai/gpt-test",
                    "--base-url",
                    server.base_url,
                    "-o",
                    "llm.jsonl",
                ]
            )
            == 0
        )
        assert len(server.requests) == 2
    out = " ".join(capsys.readouterr().out.split())  # as printed, less Rich's line breaks
    assert "judged 4 of 4" in out and "p(H|H) 0.00" in out and "p(M|M) 1.00" in out
    assert len(Path("llm.jsonl").read_text().splitlines()) == 4
