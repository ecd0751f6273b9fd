"""A spec a new user writes with the offline mocks: it runs where the mocks can do the
work, and otherwise says what in the spec to change (a rerun of a scripted model fails
the same way, so "rerun" is no advice)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.errors import SdttError
from sdtt.questionnaires.leaks import meta_terms
from sdtt.study.runner import StudyRunner
from sdtt.study.spec import read_spec
from tests.study.helpers import drive

SPEC = """\
[study]
name = "newuser"
out = "out"

[design]
personas = ["chitchat-32b20fa3"]
models = ["mock/chatty", "mock/short"]
modes = ["burst", "pingpong"]
turns = [[0, 2], [20, 2]]
topics = ["Can computers fall in love?"]
{pseudo}
[judges.mock]
model = "mock/chatty"
"""


def _run(folder: Path, pseudo: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "study.toml"
    spec.write_text(SPEC.format(pseudo=pseudo), encoding="utf-8")
    result = StudyRunner(read_spec(spec), drive=drive).run()
    assert result.finished


def test_a_chain_a_scripted_model_cannot_write_says_what_to_change(tmp_path: Path) -> None:
    with pytest.raises(SdttError) as caught:
        _run(tmp_path)
    message = str(caught.value)
    assert "mock-short" in message
    assert "Rerun" not in message
    assert 'set [pseudo] model = "mock/chatty"' in message
    assert "lower N in design.turns (now 20" in message
    # The same spec fails the same way: the advice to change it stands.
    with pytest.raises(SdttError) as again:
        _run(tmp_path)
    assert str(again.value) == message


def test_the_spec_runs_once_a_mock_that_writes_chats_writes_the_chains(tmp_path: Path) -> None:
    # mock/short still holds the N = 0 and N = 20 chats, burst and ping-pong; its name is
    # a word the questionnaire's intro uses ("short"), which is no model name to hide.
    _run(tmp_path, '[pseudo]\nmodel = "mock/chatty"\n')
    assert len(list((tmp_path / "out/chats").glob("cell-*/*.events.jsonl"))) == 8
    assert (tmp_path / "out/report/report.md").exists()


def test_a_real_model_name_is_still_hidden_whole_and_without_its_provider() -> None:
    assert meta_terms({"model": "openai/gpt-4o-mini"}) == ["openai/gpt-4o-mini", "gpt-4o-mini"]
    assert meta_terms({"model": "mock/short"}) == ["mock/short"]
