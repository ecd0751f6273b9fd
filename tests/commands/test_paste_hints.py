"""A command or path sdtt prints for pasting is never wrapped, even at 40 columns, and it
works when pasted."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from sdtt.cli import build_parser, main

FIXTURES = Path(__file__).resolve().parents[1] / "personas/importers/fixtures"


@pytest.fixture(autouse=True)
def _narrow(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.chdir(tmp_path)


def _command_after(marker: str, output: str) -> list[str]:
    lines = [line for line in output.splitlines() if marker in line]
    assert lines, output
    return shlex.split(lines[-1].split(marker, 1)[1].strip())


def test_persona_import_elsewhere_prints_a_show_command_that_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "my personas"
    export = FIXTURES / "discord/dm.json"
    assert (
        main(["persona", "import", "discord", str(export), "--me", "annsmith", "--out", str(out)])
        == 0
    )
    words = _command_after("See one with:", capsys.readouterr().out)
    assert words[:3] == ["sdtt", "persona", "show"]
    assert main(words[1:]) == 0  # pasted as printed: the persona is found
    assert "discord" in capsys.readouterr().out


def test_persona_import_into_personas_prints_its_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    export = FIXTURES / "discord/dm.json"
    assert main(["persona", "import", "discord", str(export), "--me", "annsmith"]) == 0
    words = _command_after("See one with:", capsys.readouterr().out)
    assert len(words) == 4 and "/" not in words[3]
    assert main(words[1:]) == 0


def test_generate_prints_the_whole_simulate_command_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "a rather long folder name for the pseudo dialogues"
    code = main(
        [
            "generate", "--persona", "chitchat-32b20fa3", "--model", "mock/chatty",
            "--turns", "2", "--turns-per-topic", "2", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    output = capsys.readouterr().out
    line = next(line for line in output.splitlines() if "sdtt simulate" in line)
    words = shlex.split(line.split("sdtt simulate", 1)[1])
    assert "--pseudo" in words and "--mode" in words
    pseudo = Path(words[words.index("--pseudo") + 1])
    assert pseudo.is_file()
    build_parser().parse_args(["simulate", *words])
    drift = _command_after("sdtt drift", output)
    assert Path(drift[0]).is_file()


def test_an_error_with_a_hint_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["persona", "show", "no-such-persona-anywhere"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("error:") and "\n" not in error


def test_judge_prints_the_score_command_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sdtt.tasks.questionnaire import save_study
    from tests.questionnaires.helpers import fixture_study

    built = fixture_study()
    study = tmp_path / "a study folder with a long name to wrap at forty columns"
    save_study(study, built.questionnaire, built.key)
    assert main(["judge", "--model", "mock/chatty", str(study)]) == 0
    words = _command_after("Score them with:", capsys.readouterr().out)
    assert words[:2] == ["sdtt", "score"] and Path(words[2]).is_file()


def test_the_cli_console_never_wraps_a_printed_line(capsys: pytest.CaptureFixture[str]) -> None:
    from sdtt.commands.console import CliConsole

    command = "sdtt simulate --persona p --model mock/chatty --mode burst --pseudo chain.jsonl"
    CliConsole(highlight=False, width=40).print(f"next: {command}")
    assert capsys.readouterr().out.strip() == f"next: {command}"
