"""Rating tasks (``sdtt align``) for the survey tools that can field them.

A rating task shows two chat excerpts a screen and asks for one point on a scale, so a
tool needs only an HTML view and a single-choice question. Each function here writes
one tool's files from the task (never its key), chat text escaped wherever the tool
renders HTML; :attr:`sdtt.questionnaires.tools.SurveyTool.rating` points at them. With
forms (a balanced incomplete design), SurveyJS gets one survey per form and the jsPsych
page picks its form from ``?form=N`` (or at random); the CSV lists every form.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from markupsafe import Markup

from sdtt.questionnaires.exporters.jspsych import script_safe, vendored
from sdtt.questionnaires.exporters.surveyjs import shuffled_panels_survey
from sdtt.questionnaires.layout import escape_html, paragraphs_html, plain_label
from sdtt.questionnaires.rating_task import PAGE_SUFFIX, RatingTask, pair_view_html, scale_labels
from sdtt.spreadsheet import safe_cell

CSV_COLUMNS = ("form", "pair_id", "element", "position", "line", "speaker", "text", "options")


def surveyjs_definition(task: RatingTask, pair_ids: list[str]) -> dict[str, Any]:
    """A SurveyJS survey rating ``pair_ids``: one panel (one screen) per pair."""
    choices = [{"value": value, "text": plain_label(label)} for value, label in scale_labels(task)]
    panels = []
    for pair_id in pair_ids:
        pair = task.pair(pair_id)
        panels.append(
            {
                "type": "panel",
                "name": pair.id + PAGE_SUFFIX,
                "questionOrder": "initial",
                "elements": [
                    {"type": "html", "name": pair.id + "view", "html": pair_view_html(task, pair)},
                    {
                        "type": "radiogroup",
                        "name": pair.id,
                        "title": plain_label(task.question),
                        "choices": choices,
                        "isRequired": True,
                    },
                ],
            }
        )
    return shuffled_panels_survey(
        title=task.title, intro=task.intro, end_text=task.end_text, page="pairs", panels=panels
    )


SCRIPT_FILES = ("jspsych.min.js", "plugin-html-button-response.min.js")
"""The jsPsych files the rating page inlines."""


def jspsych_page(task: RatingTask) -> str:
    """One self-contained jsPsych page (jsPsych and its button plugin inlined)."""
    labels = scale_labels(task)
    data = {
        "id": task.id,
        "title_html": escape_html(task.title),
        "intro_html": paragraphs_html(task.intro),
        "end_html": paragraphs_html(task.end_text),
        "question_html": escape_html(task.question),
        "labels": [escape_html(label) for _, label in labels],
        "values": [value for value, _ in labels],
        "pairs": [{"id": p.id, "view": pair_view_html(task, p)} for p in task.pairs],
        "forms": task.forms,
    }
    from sdtt.templates import render

    return render(
        "rating_jspsych.html",
        title=task.title,
        vendor_css=Markup(vendored("jspsych.css")),
        scripts=[Markup(script_safe(vendored(name))) for name in SCRIPT_FILES],
        task=data,
    )


def csv_table(task: RatingTask) -> str:
    """The long CSV: the instructions, then per form and pair its lines and question.

    Answers come back as ``judge_id,question,answer[,seconds]`` with the pair id as
    question and the rating as answer.
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerow({"element": "title", "text": safe_cell(task.title)})
    writer.writerow({"element": "instructions", "text": safe_cell(task.intro)})
    options = "|".join(f"{value}={label}" for value, label in scale_labels(task))
    forms = task.forms or [[p.id for p in task.pairs]]
    for number, form in enumerate(forms, start=1):
        for pair_id in form:
            pair = task.pair(pair_id)
            for position, item_id in enumerate((pair.first, pair.second), start=1):
                for line in task.item(item_id).lines:
                    writer.writerow(
                        {
                            "form": str(number),
                            "pair_id": pair.id,
                            "element": "chat_line",
                            "position": str(position),
                            "line": str(line.number),
                            "speaker": line.speaker,
                            "text": safe_cell(line.text),
                        }
                    )
            writer.writerow(
                {
                    "form": str(number),
                    "pair_id": pair.id,
                    "element": "rating",
                    "text": safe_cell(task.question),
                    "options": safe_cell(options),
                }
            )
    writer.writerow({"element": "end", "text": safe_cell(task.end_text)})
    return out.getvalue()


def surveyjs_files(task: RatingTask) -> dict[str, str]:
    """The SurveyJS surveys: one, or one per form."""
    forms = task.forms or [[p.id for p in task.pairs]]
    files: dict[str, str] = {}
    for number, form in enumerate(forms, start=1):
        name = "rating-surveyjs.json" if len(forms) == 1 else f"rating-surveyjs-form-{number}.json"
        files[name] = (
            json.dumps(surveyjs_definition(task, form), indent=2, ensure_ascii=False) + "\n"
        )
    return files


def jspsych_files(task: RatingTask) -> dict[str, str]:
    """The jsPsych page."""
    return {"rating-jspsych.html": jspsych_page(task)}


def csv_files(task: RatingTask) -> dict[str, str]:
    """The long CSV."""
    return {"rating-task.csv": csv_table(task)}
