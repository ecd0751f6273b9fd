"""Each command's ``--help`` ends with examples that paste and parse as printed."""

from __future__ import annotations

import shlex

import pytest

from sdtt.cli import COMMANDS, build_parser, main
from sdtt.commands.examples import EXAMPLES

ALL = [(prog, line) for prog, lines in EXAMPLES.items() for line in lines]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_help_ends_with_examples(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    with pytest.raises(SystemExit):
        main([name, "--help"])
    help_text = capsys.readouterr().out
    assert "Examples:" in help_text
    examples = help_text.split("Examples:", 1)[1].strip().splitlines()
    for line in examples:
        # At 40 columns a long example stays on one line, so it pastes whole.
        assert line.strip() in EXAMPLES[f"sdtt {name}"], line


@pytest.mark.parametrize(("prog", "line"), ALL, ids=[line for _, line in ALL])
def test_every_example_parses(prog: str, line: str) -> None:
    words = shlex.split(line)
    assert words[0] == "sdtt"
    assert line.startswith(prog.split(" ", 1)[0] + " " + prog.split(" ")[1]), (prog, line)
    build_parser().parse_args(words[1:])  # an unknown option or value exits here


def test_every_example_belongs_to_a_real_parser() -> None:
    from importlib.util import module_from_spec, spec_from_file_location
    from pathlib import Path

    hook_path = Path(__file__).resolve().parents[2] / "docs/hooks/cli_reference.py"
    spec = spec_from_file_location("cli_reference", hook_path)
    assert spec and spec.loader
    hook = module_from_spec(spec)
    spec.loader.exec_module(hook)
    progs = {parser.prog for parser in hook.walk(build_parser())}
    assert set(EXAMPLES) <= progs, set(EXAMPLES) - progs
