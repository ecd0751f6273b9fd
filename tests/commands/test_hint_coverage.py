"""Every command sdtt suggests for pasting goes through the one no-wrap path.

tests/commands/test_paste_hints.py runs some hints end to end at 40 columns; this file
finds every hint in the source, so a new one cannot slip past the rule. A hint is a
string that names ``sdtt COMMAND`` followed by more (an argument, an option, a ``{}``).
Each is one of:

- printed by a console's ``print`` with strings only: every console is a
  :class:`~sdtt.commands.console.CliConsole` (checked below), which never wraps a string;
- part of an error (a ``raise``, an ``...Error(...)`` or a ``hint=``): ``sdtt.cli``
  prints an error as one soft-wrapped line through a ``CliConsole``;
- help text (docstrings, argparse's ``help``/``description``/``epilog``, the examples
  table), which ``--help`` lays out (tests/commands/test_help_examples.py);
- or, when it is built in one place and printed in another, listed in ``INDIRECT`` with
  where it is printed, and that path checked here.

A hint inside a ``Table``, ``Panel``, ``Text``, a status spinner or a rule would be
wrapped or cut: that fails.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sdtt.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]
SDTT = ROOT / "sdtt"
NAMES = "|".join(map(re.escape, COMMANDS))
HINT = re.compile(rf"\bsdtt (?:{NAMES})\b[ \t]+\S")
HELP_KEYWORDS = {"help", "description", "epilog", "placeholder", "title", "default", "command"}
WRAPPING = {"Table", "add_row", "add_column", "Panel", "Text", "status", "rule", "Markdown"}

INDIRECT = {
    ("sdtt/files.py", "what_file_is"): "the hint of an InputError (jsonl.py, "
    "questionnaires/readers/surveyjs.py): printed by sdtt.cli as one line",
    ("sdtt/questionnaires/build.py", "_simulated_warning"): "a warning of questionnaire "
    "build, printed by commands/questionnaire.py with console.print(str)",
    ("sdtt/questionnaires/turn_totals.py", "commands_for"): "the lines of "
    "Selection.missing_message, the message of an InputError",
    ("sdtt/study/runner.py", "_instructions"): "StepResult.next, printed one line at a "
    "time by commands/study.py with console.print(str)",
    ("sdtt/study/prereg.py", "prereg_text"): "the preregistration written to a file",
    ("sdtt/study/prereg.py", "stopping_rule"): "the preregistration written to a file",
    ("sdtt/generate/chain_spec.py", "<module>"): "PLAN_HELP, the end of chain-plan errors",
    ("sdtt/models/registry.py", "<module>"): "a provider's description: prose in the "
    "`sdtt models` table, naming a command, not a line to paste",
    ("sdtt/models/replay.py", "availability"): "the same, for the replay provider",
    ("sdtt/analysis/report.py", "human_side_section"): "a table's note in report.html",
    ("sdtt/single/machine_chats.py", "_transcript"): "a transcript's meta, in its file",
}


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            part.value if isinstance(part, ast.Constant) else "{}" for part in node.values
        )
    return None


def _called(call: ast.Call) -> str:
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else ""


def _strings_only(call: ast.Call) -> bool:
    """Whether a ``print`` call prints strings (no Rich renderable built in it)."""
    return not any(
        isinstance(node, ast.Call) and _called(node) in WRAPPING
        for argument in call.args
        for node in ast.walk(argument)
    )


def _how(node: ast.AST) -> str:
    """How a hint inside ``node`` is shown, when ``node`` decides it ('' if not)."""
    if isinstance(node, ast.Raise):
        return "error"
    if isinstance(node, ast.keyword):
        return "error" if node.arg == "hint" else "help" if node.arg in HELP_KEYWORDS else ""
    if not isinstance(node, ast.Call):
        return ""
    name = _called(node)
    if name in WRAPPING:
        return f"wrapped by {name}"
    if name.endswith("Error"):
        return "error"
    if name == "print":
        return "printed" if _strings_only(node) else "printed renderable"
    return "help" if name in {"add_argument", "add_parser", "ArgumentParser", "Command"} else ""


def hints() -> Iterator[tuple[str, str, int, str, str]]:
    """(file, enclosing function, line, how it is shown, text) of every hint."""
    for path in sorted(SDTT.rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            text = _text(node)
            if text is None or isinstance(parents.get(node), (ast.JoinedStr, ast.Expr)):
                continue  # a part of an f-string, or a docstring
            if not HINT.search(text):
                continue
            how, function = "", "<module>"
            parent = parents.get(node)
            while parent is not None:
                how = how or _how(parent)
                if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    function = parent.name
                    break
                parent = parents.get(parent)
            if relative.endswith("commands/examples.py") or relative.endswith("_parser.py"):
                how = how or "help"
            yield relative, function, node.lineno, how or "indirect", text


def test_every_console_sdtt_prints_through_is_a_cli_console() -> None:
    made = []
    for path in sorted(SDTT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _called(node) == "Console":
                made.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.ImportFrom) and node.module == "rich":
                assert "print" not in {alias.name for alias in node.names}, path
    assert not made, f"a plain rich Console wraps printed commands: {made}"


def test_every_hint_goes_through_the_no_wrap_path() -> None:
    found = list(hints())
    assert len(found) > 20  # the scan sees the hints (persona import's, generate's...)
    shown = {how for _, _, _, how, _ in found}
    assert {"printed", "error", "help", "indirect"} <= shown
    bad = [hint for hint in found if hint[3].startswith(("wrapped", "printed renderable"))]
    assert not bad, bad
    indirect = {(path, function) for path, function, _, how, _ in found if how == "indirect"}
    unlisted = indirect - INDIRECT.keys()
    assert not unlisted, f"hints built in one place and printed elsewhere: {unlisted}"
    assert not INDIRECT.keys() - indirect, "INDIRECT lists a hint that is gone"


def test_the_printed_hints_include_each_one_the_issue_named() -> None:
    printed = {text for _, _, _, how, text in hints() if how == "printed"}
    for hint in ("See one with: sdtt persona show", "Score them with: sdtt score", "sdtt drift"):
        assert any(hint in text for text in printed), hint


# The indirect hints' own paths, end to end at 40 columns.


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_an_error_hint_naming_a_command_is_one_line(
    narrow: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A SurveyJS survey given where its results go: the hint names the command to use.
    survey = narrow / "a survey file with a rather long name.json"
    survey.write_text('{\n  "title": "Chats",\n  "pages": []\n}\n', encoding="utf-8")
    code = main(["score", str(survey)])
    error = capsys.readouterr().err.strip()
    assert code == 2, error
    assert error.startswith("error:") and "\n" not in error
    assert HINT.search(error), error


def test_a_missing_persona_list_hint_is_one_line(
    narrow: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from sdtt.personas import store

    monkeypatch.setattr(store, "SHIPPED_DIR", narrow / "none")  # and ./personas is empty
    assert main(["persona", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Create some with 'sdtt persona import chitchat'." in lines
