"""Every bot conversation records N (pseudo turns in its prompt) and its live turns."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.cli import main
from sdtt.dialogue.store import read_transcripts, write_transcripts
from sdtt.generate.chainfile import count_pseudo_turns
from sdtt.ui.chat_setup import build_live_chat
from tests.questionnaires.helpers import conversation

PERSONA = "chitchat-32b20fa3"


def pseudo_file(tmp_path: Path, turns: int = 4) -> Path:
    """A hand-written pseudo-dialogue (a transcript file) of ``turns`` burst turns."""
    path = tmp_path / "pseudo.jsonl"
    write_transcripts(path, [conversation("pseudo", "anything", turns, tag="p")])
    return path


def test_simulate_records_pseudo_and_live_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["simulate", "--persona", PERSONA, "--model", "mock/chatty", "--virtual-clock"]
    args += ["--quiet", "--turns", "2", "--out", str(tmp_path / "chats")]
    assert main([*args, "--pseudo", str(pseudo_file(tmp_path))]) == 0
    assert main(args) == 0
    found = [
        read_transcripts(p)[0].condition
        for p in sorted((tmp_path / "chats").glob("*.jsonl"))
        if not p.name.endswith(".events.jsonl")
    ]
    assert sorted((c.pseudo_turns, c.live_turns) for c in found if c) == [(0, 2), (4, 2)]


def test_a_live_chat_records_pseudo_and_live_turns(tmp_path: Path) -> None:
    live = build_live_chat(
        persona=PERSONA, model="mock/chatty", pseudo=pseudo_file(tmp_path, 5), turns=3
    )
    assert (live.condition.pseudo_turns, live.condition.live_turns) == (5, 3)
    assert live.condition.turn_index == 8
    assert build_live_chat(persona=PERSONA, model="mock/chatty").condition.pseudo_turns == 0


def test_a_chain_file_counts_its_written_turns(tmp_path: Path) -> None:
    args = ["generate", "--persona", PERSONA, "--model", "mock/chatty", "--turns", "6"]
    assert main([*args, "--turns-per-topic", "3", "--out", str(tmp_path)]) == 0
    (chain,) = tmp_path.glob("*.jsonl")
    assert count_pseudo_turns(chain) == 6
