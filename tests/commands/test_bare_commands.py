"""A command made of actions, given without one, shows its help and exits with 2."""

from __future__ import annotations

import argparse

import pytest

from sdtt.cli import build_parser, main


def commands_with_actions() -> list[list[str]]:
    """Every command path (``["persona"]``, ``["persona", "import"]``) whose parser takes
    an action or a format as its next word."""
    found = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                if path:
                    found.append(path)
                for name, sub in action.choices.items():
                    sub.format_help()  # a deferred parser fills itself in when first used
                    walk(sub, [*path, name])

    walk(build_parser(), [])
    return found


COMMANDS = commands_with_actions()


def test_the_walk_finds_the_commands_made_of_actions() -> None:
    assert {"persona", "align", "single", "study", "prolific"} <= {path[0] for path in COMMANDS}
    assert ["persona", "import"] in COMMANDS


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(path) for path in COMMANDS])
def test_a_command_without_its_action_shows_its_help_and_exits_2(
    path: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(path) == 2
    out = capsys.readouterr().out
    assert out.startswith("usage: sdtt " + " ".join(path))
    parser = build_parser()
    for word in path:
        parser = next(
            action.choices[word]
            for action in parser._actions
            if isinstance(action, argparse._SubParsersAction)
        )
        parser.format_help()
    names = next(
        action.choices
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    assert all(name in out for name in names), "the help lists every action"
