"""Every model and persona name is checked before a command does any work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sdtt.cli import main
from sdtt.commands import LazyCommand


@pytest.fixture(autouse=True)
def _no_work(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def started(self: LazyCommand, args: Any, **options: Any) -> int:
        raise AssertionError(f"{self.module} started before its names were checked")

    monkeypatch.setattr(LazyCommand, "__call__", started)
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["demo", "--model", "mock/chaty", "--out", "d"], "mock/chaty"),
        (["simulate", "--model", "mock/chatty", "--interrogator", "mock/chaty"], "mock/chaty"),
        (
            ["generate", "--model", "mock/chatty", "--model", "mock/chaty", "--out", "g"],
            "mock/chaty",
        ),
        (["judge", "--model", "eliza/modern", "study"], "eliza/modern"),
        (["topics", "--model", "local/gemma-9b"], "local/gemma-9b"),
        (["simulate", "--model", "opnai/gpt-4o"], "opnai"),
        (
            ["simulate", "--persona", "chitchat-32b20fa4", "--model", "mock/chatty"],
            "chitchat-32b20fa4",
        ),
        (["generate", "--persona", "nobody", "--model", "mock/chatty", "--out", "g"], "nobody"),
        (["demo", "--persona", "nobody", "--model", "mock/chatty", "--out", "d"], "nobody"),
    ],
)
def test_a_mistyped_name_stops_the_command_before_it_starts(
    argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith("error:") and named in error
    assert list(tmp_path.iterdir()) == []  # no output folder, no lock


def test_good_names_reach_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AssertionError, match="started before"):
        main(["simulate", "--persona", "chitchat-32b20fa3", "--model", "mock/chatty"])
