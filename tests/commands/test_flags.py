"""Every command's flags follow one convention and take their defaults from the settings.

Walks the parser of every subcommand (``persona import`` formats included), so a flag
added later is checked too.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from sdtt.cli import build_parser, main
from sdtt.commands import DeferredParser
from sdtt.commands.common import TRANSCRIPTS_DIR
from sdtt.engine.session import SessionSettings
from sdtt.generate.chain_spec import PlanSettings

SETTINGS: dict[str, type[BaseModel]] = {
    "simulate": SessionSettings,
    "chat": SessionSettings,
    "generate": PlanSettings,
}
"""Commands whose flags named like a field of a settings model must share its default."""


def _parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    pending: list[tuple[str, argparse.ArgumentParser]] = [("sdtt", build_parser())]
    while pending:
        name, parser = pending.pop()
        if isinstance(parser, DeferredParser):
            parser.complete()
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending += [(f"{name} {sub}", child) for sub, child in action.choices.items()]


def _options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if action.option_strings and not isinstance(action, argparse._HelpAction):
            yield action


PARSERS = dict(_parsers())


def test_the_walk_reaches_every_command() -> None:
    assert {"sdtt simulate", "sdtt persona import whatsapp", "sdtt questionnaire export"} <= set(
        PARSERS
    )


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_option_and_argument_is_explained(name: str) -> None:
    for action in PARSERS[name]._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        hidden = action.help == argparse.SUPPRESS
        hidden_alias = hidden and any(
            other is not action and other.dest == action.dest for other in PARSERS[name]._actions
        )
        assert action.help and (not hidden or hidden_alias), (
            f"{name} {'/'.join(action.option_strings) or action.dest} has no help"
        )


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_out_is_o_and_says_folder_or_file(name: str) -> None:
    for action in _options(PARSERS[name]):
        if "--out" not in action.option_strings:
            continue
        assert "-o" in action.option_strings, f"{name} --out has no -o"
        kind = {"DIR": "folder", "FILE": "file"}[str(action.metavar)]
        assert str(action.help).startswith(kind), f"{name} --out help must start with {kind}"


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_concurrency_is_one_flag_with_the_old_name_hidden(name: str) -> None:
    for action in _options(PARSERS[name]):
        if "--max-concurrency" in action.option_strings:
            assert action.help == argparse.SUPPRESS
            assert action.dest == "concurrency"
            assert any("--concurrency" in a.option_strings for a in _options(PARSERS[name]))


@pytest.mark.parametrize("command", sorted(SETTINGS))
def test_defaults_agree_with_the_settings_model(command: str) -> None:
    model = SETTINGS[command]
    checked = 0
    for action in _options(PARSERS[f"sdtt {command}"]):
        if action.dest in model.model_fields:
            default = model.model_fields[action.dest].get_default(call_default_factory=True)
            assert action.default == default, f"{command} --{action.dest}"
            checked += 1
    assert checked >= 4


def test_old_max_concurrency_flag_still_works() -> None:
    parser = build_parser()
    old = parser.parse_args(["generate", "--max-concurrency", "3"])
    new = parser.parse_args(["generate", "--concurrency", "3"])
    assert old.concurrency == new.concurrency == 3
    assert parser.parse_args(["judge", "STUDY", "--max-concurrency", "2"]).concurrency == 2


def test_short_o_writes_where_out_would(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["simulate", "-o", "elsewhere"])
    assert str(args.out) == "elsewhere"
    assert build_parser().parse_args(["simulate"]).out == TRANSCRIPTS_DIR
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    assert "--mode {burst,pingpong}" in capsys.readouterr().out
