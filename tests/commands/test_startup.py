"""The command line starts fast: building its parser loads none of the heavy libraries.

The speed itself is measured by ``benchmarks/cli_startup.py``; these tests hold the
invariant that keeps it fast, and check the shortcuts lose no command or help text.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from sdtt.cli import COMMANDS, build_parser, main

HEAVY = ("pandas", "scipy", "matplotlib", "numpy", "openai", "anthropic", "textual")


def _loaded_after(code: str) -> list[str]:
    # A fresh interpreter: this test process has long imported everything.
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    modules = set(json.loads(result.stdout.splitlines()[-1]))
    return [name for name in HEAVY if name in modules]


def _commands_action(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return dict(_commands_action(parser).choices)


def test_building_the_whole_parser_imports_no_heavy_library() -> None:
    assert _loaded_after("import sdtt.cli\nsdtt.cli.build_parser().format_help()") == []


def test_help_and_a_light_command_import_no_heavy_library() -> None:
    code = (
        "import contextlib, io, sdtt.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    for argv in (['--help'], ['--version'], ['persona', 'list'], ['score', '-h']):\n"
        "        try:\n"
        "            sdtt.cli.main(argv)\n"
        "        except SystemExit:\n"
        "            pass"
    )
    assert _loaded_after(code) == []


def test_a_chat_export_format_help_imports_no_heavy_library() -> None:
    # The streamed import sorts messages out of time order with numpy, only when it runs.
    code = (
        "import contextlib, io, sdtt.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    for fmt in ('whatsapp', 'telegram'):\n"
        "        try:\n"
        "            sdtt.cli.main(['persona', 'import', fmt, '--help'])\n"
        "        except SystemExit:\n"
        "            pass"
    )
    assert _loaded_after(code) == []


def test_top_level_help_and_version_import_no_command_module() -> None:
    code = (
        "import contextlib, io, sdtt.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    for argv in (['--help'], ['--version']):\n"
        "        try:\n"
        "            sdtt.cli.main(argv)\n"
        "        except SystemExit:\n"
        "            pass\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", "import json, sys\n" + code],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert [name for name in loaded if name.startswith("sdtt.commands.")] == []


HELP_BOUND = 182
"""Modules a command's ``--help`` may import beyond ``sdtt.cli`` (a parser module with
its option helpers and defaults: pydantic and the persona store, not trio or pandas)."""


def _loaded_by(argv: list[str]) -> list[str]:
    # The modules ``sdtt ARGV`` imports beyond sdtt.cli itself, in a fresh interpreter.
    script = (
        "import contextlib, io, json, sys\n"
        "import sdtt.cli\n"
        "before = set(sys.modules)\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        sdtt.cli.main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(result.stdout.splitlines()[-1])
    return loaded


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_commands_help_imports_its_parser_not_its_code(command: str) -> None:
    loaded = _loaded_by([command, "--help"])
    parser = f"sdtt.commands.{command.replace('-', '_')}_parser"
    assert parser in loaded
    # Option helpers shared by several parsers (session_flags: chat and simulate;
    # single_flags: wordassoc, captions and import-kreiman; examples: every help's
    # Examples section).
    shared = {
        "sdtt.commands",
        "sdtt.commands.common",
        "sdtt.commands.examples",
        "sdtt.commands.session_flags",
        "sdtt.commands.single_flags",
    }
    code = [m for m in loaded if m.startswith("sdtt.commands") and m not in shared]
    # Another command's parser may lend its options (report uses score's).
    assert [m for m in code if not m.endswith("_parser")] == []
    assert not {"trio", "pandas", "textual", "hypercorn", "starlette"} & set(loaded)
    assert len(loaded) <= HELP_BOUND


def test_help_lists_every_command_with_its_explanation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    full = build_parser()
    assert sorted(_subparsers(full)) == sorted(COMMANDS)
    for action in _commands_action(full)._choices_actions:
        assert action.help == COMMANDS[action.dest].help
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    # The quick help (no command module imported) reads exactly as the full parser's.
    assert shown == full.format_help()
    for name, command in COMMANDS.items():
        assert name in shown
        assert " ".join(command.help.split()[:3]) in " ".join(shown.split())


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_alone_parses_and_helps_as_in_the_full_parser(command: str) -> None:
    full = _subparsers(build_parser())[command]
    alone = _subparsers(build_parser([command]))[command]
    assert alone.format_help() == full.format_help()


def test_persona_import_options_appear_when_the_format_is_used(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["persona", "import", "whatsapp", "--help"])
    assert "--me NAME" in capsys.readouterr().out
    main(["persona", "import"])
    assert "whatsapp" in capsys.readouterr().out


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("sdtt ")
