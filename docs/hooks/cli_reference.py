"""MkDocs hook: the command-line reference page, written from ``sdtt``'s own parsers.

Every command, sub-command and option in ``reference/cli.md`` comes from the argparse
parsers of :func:`sdtt.cli.build_parser` at build time, so the page cannot drift from what
``sdtt COMMAND --help`` says.
"""

from __future__ import annotations

import argparse
import html
from collections.abc import Iterator
from typing import Any

PAGE = "reference/cli.md"


def walk(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and every parser below it, depth first, each filled in."""
    complete = getattr(parser, "complete", None)
    if complete is not None:
        complete()
    yield parser
    seen: set[int] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                if id(child) not in seen:
                    seen.add(id(child))
                    yield from walk(child)


def _text(value: str) -> str:
    return html.escape(" ".join(value.split()), quote=False).replace("*", r"\*")


def _cell(value: str) -> str:
    return _text(value).replace("|", r"\|")


def _option(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return f"`{names}`"
    metavar = action.metavar or action.dest.upper()
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    return f"`{names} {metavar}`"


def render_parser(parser: argparse.ArgumentParser) -> str:
    """One parser's section: description, usage, options and examples."""
    formatter = parser._get_formatter()
    lines = [f"## `{parser.prog}`", ""]
    if parser.description:
        lines += [_text(parser.description), ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                rows.append((f"`{choice.dest}`", formatter._expand_help(choice)))
            continue
        rows.append((_option(action), formatter._expand_help(action) if action.help else ""))
    if rows:
        lines += ["| argument | what it does |", "| --- | --- |"]
        lines += [f"| {name} | {_cell(help_text)} |" for name, help_text in rows]
        lines.append("")
    if parser.epilog:
        lines += ["```text", parser.epilog.strip("\n"), "```", ""]
    return "\n".join(lines)


def render() -> str:
    """The whole page."""
    from sdtt.cli import build_parser

    sections = [render_parser(parser) for parser in walk(build_parser())]
    head = (
        "# Command-line reference\n\n"
        "Generated from the parsers of `sdtt` when this site was built: it lists every "
        "command and option exactly as `sdtt COMMAND --help` does.\n\n"
    )
    return head + "\n".join(sections)


def on_files(files: Any, config: Any) -> Any:
    """Add the generated page to the site."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=render()))
    return files
