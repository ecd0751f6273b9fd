"""The Examples section at the end of each command's ``--help``.

One table, :data:`EXAMPLES`, keyed by a parser's ``prog`` (``"sdtt persona import"``);
:class:`~sdtt.commands.DeferredParser` adds the section when it is first used, and
:class:`HelpFormatter` prints its lines as written, so a command can be pasted from the
help. ``tests/commands/test_help_examples.py`` parses every example with the real parser.
"""

from __future__ import annotations

import argparse

HEADING = "Examples:"

EXAMPLES: dict[str, tuple[str, ...]] = {
    "sdtt demo": (
        "sdtt demo --model mock/chatty",
        "sdtt demo --model openai/gpt-4o-mini --persona chitchat-20753511 --out runs/demo1",
    ),
    "sdtt persona": ("sdtt persona list", "sdtt persona show chitchat-32b20fa3"),
    "sdtt persona show": ("sdtt persona show chitchat-32b20fa3 --last 10",),
    "sdtt persona import": (
        "sdtt persona import whatsapp chat.txt --me 'Ann Smith' --out personas",
        "sdtt persona import chitchat --count 3",
    ),
    "sdtt persona import whatsapp": (
        "sdtt persona import whatsapp chat.txt --me 'Ann Smith' --date-format DD/MM/YY",
    ),
    "sdtt persona import chitchat": ("sdtt persona import chitchat --sender 32b20fa3",),
    "sdtt models": ("sdtt models",),
    "sdtt simulate": (
        "sdtt simulate --persona chitchat-32b20fa3 --model mock/chatty --turns 5 --virtual-clock",
        "sdtt simulate --model openai/gpt-4o --interrogator anthropic/claude-haiku-4-5 --turns 10",
    ),
    "sdtt topics": ("sdtt topics --model mock/chatty -n 10",),
    "sdtt generate": (
        "sdtt generate --persona chitchat-32b20fa3 --model mock/chatty --turns 20",
        "sdtt generate --model openai/gpt-4o-mini --mode burst --mode pingpong --turns 100",
    ),
    "sdtt drift": ("sdtt drift transcripts/pseudo/chain.jsonl",),
    "sdtt questionnaire": (
        "sdtt questionnaire build --bot chat.jsonl --human corpus --x 3 --out runs/study",
        "sdtt questionnaire export runs/study --format all",
    ),
    "sdtt responses": (
        "sdtt responses import --study runs/study --format surveyjs results.json "
        "--out runs/study/judgements.jsonl",
    ),
    "sdtt questionnaire build": (
        "sdtt questionnaire build --bot chat.jsonl --human corpus --x 3 --out runs/study",
    ),
    "sdtt questionnaire export": ("sdtt questionnaire export runs/study --format all",),
    "sdtt questionnaire check": ("sdtt questionnaire check runs/study/export/qualtrics.qsf",),
    "sdtt responses import": (
        "sdtt responses import --study runs/study --format qualtrics results.csv "
        "--out runs/study/judgements.jsonl",
    ),
    "sdtt chat": (
        "sdtt chat --persona chitchat-32b20fa3 --model mock/chatty --turns 3",
        "sdtt chat",
    ),
    "sdtt judge-ui": ("sdtt judge-ui runs/study --judge p01",),
    "sdtt serve": (
        "sdtt serve examples/serve-study.toml --port 8000",
        "sdtt serve export examples/serve-study.toml --out runs/pilot",
    ),
    "sdtt judge": (
        "sdtt judge --model mock/chatty runs/study",
        "sdtt judge --model openai/gpt-4o-mini --batch runs/study",
    ),
    "sdtt score": (
        "sdtt score runs/study/judgements.jsonl --by turns",
        "sdtt score runs/study/judgements.jsonl --sequential --margin 0.1",
    ),
    "sdtt report": (
        "sdtt report runs/study/judgements.jsonl --study runs/study --out runs/report",
    ),
    "sdtt plan": ("sdtt plan --pass-rate 0.4", "sdtt plan --equivalence --margin 0.1"),
    "sdtt study": ("sdtt study run examples/turns_study.toml",),
    "sdtt export": ("sdtt export parquet examples/turns_study.toml --out runs/turns-data",),
    "sdtt prolific": (
        "sdtt prolific create study.toml --url https://chat.example.org",
        "sdtt prolific status study.toml",
        "sdtt prolific review study.toml --apply",
        "sdtt prolific bonus study.toml runs/pilot/points.csv --pay",
    ),
    "sdtt prolific review": (
        "sdtt prolific review study.toml",
        "sdtt prolific review study.toml --apply",
    ),
    "sdtt study run": ("sdtt study run examples/turns_study.toml",),
    "sdtt study status": ("sdtt study status examples/turns_study.toml",),
    "sdtt study bundle": (
        "sdtt study bundle examples/turns_study.toml -o runs/turns-bundle.tar.gz",
    ),
    "sdtt study verify": ("sdtt study verify runs/turns-bundle.tar.gz",),
    "sdtt study prereg": ("sdtt study prereg examples/turns_study.toml",),
    "sdtt align": ("sdtt align build align.toml --out runs/align",),
    "sdtt detectors": ("sdtt detectors export runs/study",),
    "sdtt single": ("sdtt single build conversations.jsonl --cuts 3,6,12,24 -o runs/single",),
    "sdtt wordassoc": ("sdtt wordassoc generate --model mock/short -o runs/wa/machine.jsonl",),
    "sdtt captions": (
        "sdtt captions generate --model mock/short --images photos -o runs/cap/machine.jsonl",
    ),
    "sdtt import-kreiman": (
        "sdtt import-kreiman conversations convs --labels correct_answers.json -o t.jsonl",
    ),
}
"""Commands a user can paste, by the ``prog`` of the parser whose help shows them."""


def examples_epilog(prog: str, epilog: str | None) -> str | None:
    """``epilog`` followed by the Examples section of ``prog``, if it has one."""
    lines = EXAMPLES.get(prog)
    if not lines or (epilog and HEADING in epilog):
        return epilog
    section = HEADING + "\n" + "\n".join(f"  {line}" for line in lines)
    return f"{epilog}\n\n{section}" if epilog else section


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, but the Examples section keeps its lines as written: a
    command is never wrapped (pasting a wrapped one would run half of it)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        prose, heading, section = text.partition(HEADING)
        filled = super()._fill_text(prose, width, indent) if prose.strip() else ""
        if not heading:
            return filled
        raw = indent + heading + section.rstrip("\n")
        return f"{filled}\n\n{raw}" if filled else raw
