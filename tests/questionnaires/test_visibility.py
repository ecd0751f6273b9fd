"""The exports hold exactly the fields questionnaires/README.md says judges can see.

Every text field of a questionnaire gets a marker of its own; each format is exported and
the markers found in it must be those the README table marks "shown" or "hidden".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sdtt.surveys.tool import ExportOptions
from sdtt.surveys.tools import TOOLS
from sdtt.tasks.questionnaire import Choice, Line, PairItem, Question, Questionnaire

README = Path(__file__).parents[2] / "questionnaires" / "README.md"
SECTION = "## What judges can and cannot see"

MARKERS = {
    "questionnaire id": "qzzques1",
    "title": "Zmtitle",
    "intro": "Zmintro",
    "end text": "Zmendtext",
    "demographic name": "Zmdemname",
    "demographic text": "Zmdemtext",
    "demographic option code": "Zdv1",
    "demographic option label": "Zmdemlabel",
    "pair id": "pzzpair1",
    "line time": "Zmtime",
    "line text": "Zmlinetext",
    "judgement text": "Zmjudgetext",
    "judgement option code": "Zjv1",
    "judgement option label": "Zmjudgelabel",
    "topic text": "Zmtopictext",
    "topic option code": "Ztv1",
    "topic option label": "Zmtopiclabel",
    "strategy text": "Zmstrategytext",
    "completion url": "https://zmcompletion.example/done",
    "pair group": "pzzgroup",
}


def _marked() -> Questionnaire:
    m = MARKERS
    line = Line(number=1, speaker="A", time=m["line time"], text=m["line text"])
    reply = Line(number=2, speaker="B", time=m["line time"], text=m["line text"])
    return Questionnaire(
        id=m["questionnaire id"],
        title=m["title"],
        intro=m["intro"],
        end_text=m["end text"],
        demographics=[
            Question(
                name=m["demographic name"],
                text=m["demographic text"],
                choices=[
                    Choice(value=m["demographic option code"], label=m["demographic option label"])
                ],
            )
        ],
        items=[
            PairItem(
                id=m["pair id"],
                chats=([line], [reply]),
                judgement=Question(
                    name=m["pair id"],
                    text=m["judgement text"],
                    choices=[
                        Choice(value=m["judgement option code"], label=m["judgement option label"])
                    ],
                ),
                topic=Question(
                    name=m["pair id"] + "topic",
                    text=m["topic text"],
                    choices=[Choice(value=m["topic option code"], label=m["topic option label"])],
                ),
                pair=m["pair group"],
            )
        ],
        strategy=Question(name="strategy", text=m["strategy text"], required=False),
        completion_url=m["completion url"],
    )


def _readme_table() -> dict[str, dict[str, str]]:
    """Field to format to mark, from the README section's table."""
    text = README.read_text(encoding="utf-8")
    assert SECTION in text, f"{README} lost its section {SECTION!r}"
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.split(SECTION, 1)[1].split("\n## ", 1)[0].splitlines()
        if line.startswith("|") and "---" not in line
    ]
    header, body = rows[0], rows[1:]
    return {row[0]: dict(zip(header[1:], row[1:], strict=True)) for row in body}


def test_the_table_covers_every_format_and_field() -> None:
    table = _readme_table()
    assert set(table) == set(MARKERS)
    for field, marks in table.items():
        assert set(marks) == set(TOOLS), field
        assert set(marks.values()) <= {"shown", "hidden", "-"}, field


@pytest.mark.parametrize("name", list(TOOLS))
def test_an_export_holds_exactly_the_fields_the_readme_lists(name: str) -> None:
    text = TOOLS[name].write(_marked(), ExportOptions())
    table = _readme_table()
    found = {field for field, marker in MARKERS.items() if marker in text}
    listed = {field for field, marks in table.items() if marks[name] != "-"}
    assert found - listed == set(), f"{name} emits fields the README does not list"
    assert listed - found == set(), f"the README lists fields {name} does not emit"


MARKED_FIELDS = {
    Questionnaire: {"id", "title", "intro", "end_text", "completion_url"},
    PairItem: {"id", "pair"},
    Line: {"time", "text"},
    Question: {"name", "text"},
    Choice: {"value", "label"},
}
"""Model fields the markers above cover (through the README rows)."""
OTHER_FIELDS = {
    Questionnaire: {
        "version",
        "demographics",
        "items",
        "strategy",
        "randomise_order",
        "capture_prolific",
        "forms",
    },
    PairItem: {"chats", "judgement", "topic", "user_a_person"},
    Line: {"number", "speaker"},
    Question: {"choices", "required", "multiline"},
    Choice: set(),
}
"""Containers, numbers and flags: described in the README's text below the table."""


def test_every_field_of_the_model_is_accounted_for() -> None:
    # A new field on the questionnaire must be added to the README table (and a marker
    # here) or to the fields described below it, before it can reach judges unnoticed.
    for model, marked in MARKED_FIELDS.items():
        assert set(model.model_fields) == marked | OTHER_FIELDS[model], model.__name__
