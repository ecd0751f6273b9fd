"""Printable questionnaires: a standalone HTML page and a Markdown file.

For paper studies, lab sessions, piloting with colleagues, or pasting into a tool sdtt
has no exporter for. Same content and order as the other exports; options carry their
codes so answers written down can be typed into the long CSV import
(:mod:`sdtt.surveys.long_csv`). No answers come back from these files.
"""

from __future__ import annotations

from markupsafe import Markup

from sdtt.surveys.tool import SurveyTool
from sdtt.tasks.layout import (
    CHAT_TITLES,
    SPEAKER_LABELS,
    escape_markdown,
    pair_html,
    paragraphs_html,
)
from sdtt.tasks.questionnaire import Question, Questionnaire

HTML_FILENAME = "questionnaire.html"
MARKDOWN_FILENAME = "questionnaire.md"

_CSS = (
    "body{font-family:Georgia,'Times New Roman',serif;max-width:52em;margin:2em auto;"
    "padding:0 1em;color:#111}"
    "section.pair{break-inside:avoid-page;page-break-inside:avoid;margin:0 0 2.5em 0;"
    "border-top:1px solid #999;padding-top:1em}"
    ".question{font-weight:bold;margin:1em 0 .3em 0}"
    "ul.options{list-style:none;padding-left:1em;margin:0}"
    "ul.options li::before{content:'\\2610  '}"
    ".answer-lines{border-bottom:1px solid #999;height:1.6em}"
    "@media print{body{margin:0}}"
)


def export_html(questionnaire: Questionnaire) -> str:
    """A standalone, printable HTML page."""
    from sdtt.templates import render

    return render(
        "printable.html",
        questionnaire=questionnaire,
        css=Markup(_CSS),
        intro=Markup(paragraphs_html(questionnaire.intro)),
        end=Markup(paragraphs_html(questionnaire.end_text)),
        pairs=[Markup(pair_html(item)) for item in questionnaire.items],
    )


def _question_markdown(question: Question) -> list[str]:
    out = [f"**{escape_markdown(question.text)}**", ""]
    if question.choices is not None:
        out += [f"- [ ] {escape_markdown(c.label)} ({c.value})" for c in question.choices]
    else:
        out.append("_Answer:_ " + "\\_" * 40)
    out.append("")
    return out


def export_markdown(questionnaire: Questionnaire) -> str:
    """The questionnaire as Markdown (User B's lines in bold)."""
    out = [f"# {escape_markdown(questionnaire.title)}", ""]
    out += [escape_markdown(" ".join(p.split())) + "\n" for p in questionnaire.intro.split("\n\n")]
    if questionnaire.demographics:
        out += ["## About you", ""]
        for question in questionnaire.demographics:
            out += _question_markdown(question)
    total = len(questionnaire.items)
    for number, item in enumerate(questionnaire.items, start=1):
        out += [f"## Pair {number} of {total} (id {item.id})", ""]
        for title, lines in zip(CHAT_TITLES, item.chats, strict=True):
            out += [f"### {title}", ""]
            for line in lines:
                time = f"[{escape_markdown(line.time)}] " if line.time else ""
                speaker = SPEAKER_LABELS[line.speaker]
                text = f"{line.number}\\. {speaker}: {time}{escape_markdown(line.text)}"
                out.append((f"**{text}**" if line.speaker == "B" else text) + "  ")
            out.append("")
        out += _question_markdown(item.judgement)
        if item.topic is not None:
            out += _question_markdown(item.topic)
    if questionnaire.strategy is not None:
        out += ["## Last question", "", *_question_markdown(questionnaire.strategy)]
    out.append(escape_markdown(" ".join(questionnaire.end_text.split())))
    return "\n".join(out).rstrip() + "\n"


ENTRIES = (
    SurveyTool(
        "html",
        "printable HTML page",
        HTML_FILENAME,
        lambda questionnaire, options: export_html(questionnaire),
    ),
    SurveyTool(
        "markdown",
        "printable Markdown",
        MARKDOWN_FILENAME,
        lambda questionnaire, options: export_markdown(questionnaire),
    ),
)
"""The printable page and Markdown as :mod:`sdtt.surveys.tools` lists them."""
