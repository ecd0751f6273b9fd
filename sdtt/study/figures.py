"""The report of a study and its figures as data, recomputable from the raw records.

:func:`compute_report` builds the report (``sdtt report``'s tables and plots) from the
judgement files, the questionnaire and its answer key, adds the LLM cohorts' table (as
``sdtt align score``, from the rating task and the cohorts' ratings) and the cost
ledger's tables. ``figures.json`` beside the report holds every number it shows
(headline and tables, as text), so :mod:`sdtt.study.verify` can compute them again from a bundle's
records and name any that differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from sdtt.align.alignment_report import cohort_table
from sdtt.align.analysis import analyse
from sdtt.align.ratings import load_ratings
from sdtt.align.task import load_rating_key, load_rating_task
from sdtt.analysis.report import (
    CHARACTER_TITLE,
    Report,
    Section,
    build_report,
    write_report,
)
from sdtt.analysis.stopping import stopping_tables
from sdtt.analysis.table import judgement_table
from sdtt.analysis.tells import study_tells
from sdtt.analysis.tidy import tidy_results, write_tidy
from sdtt.files import write_text_atomic
from sdtt.judges.batched import LEDGER_SUFFIX as BATCH_LEDGER_SUFFIX
from sdtt.study.ledger import Ledger, Tally
from sdtt.study.spec import Study
from sdtt.study.steps import (
    ALIGN_FOLDER,
    JUDGEMENTS_FOLDER,
    QUESTIONNAIRE_FOLDER,
    REPORT_FOLDER,
    RESULTS_FOLDER,
    ratings_path,
)
from sdtt.tasks.judgements import load_judgements
from sdtt.tasks.questionnaire import load_key, load_questionnaire

FIGURES_FILE = "figures.json"


def judgement_files(out: Path) -> list[Path]:
    """The study's judgement files, in a stable order (a batch judge's job ledger,
    ``NAME.batches.jsonl``, left out)."""
    found = (out / JUDGEMENTS_FOLDER).glob("*.jsonl")
    return sorted(path for path in found if not path.name.endswith(BATCH_LEDGER_SUFFIX))


def cost_sections(ledger: Ledger) -> list[Section]:
    """The cost ledger as report tables: per stage, per condition."""

    def rows(tallies: dict[str, Tally]) -> list[list[str]]:
        found = [
            [
                name or "-",
                str(t.calls),
                str(t.usage.input_tokens),
                str(t.usage.output_tokens),
                f"{t.cost:.4f}" + (f" (+{t.unpriced} unpriced)" if t.unpriced else ""),
            ]
            for name, t in sorted(tallies.items())
        ]
        total = ledger.total()
        found.append(
            [
                "total",
                str(total.calls),
                str(total.usage.input_tokens),
                str(total.usage.output_tokens),
                f"{total.cost:.4f}",
            ]
        )
        return found

    header = ["calls", "input tokens", "output tokens", "cost (USD, estimate)"]
    note = "Every model call the study made, priced from the spec's [prices] or the price tables."
    if ledger.budget is not None:
        note += f" Budget: ${ledger.budget:.2f}."
    return [
        Section("Cost by stage", ["stage", *header], rows(ledger.tallies("stage")), note=note),
        Section("Cost by condition", ["condition", *header], rows(ledger.tallies("condition"))),
    ]


def compute_report(study: Study, ledger: Ledger, out_dir: Path) -> Report:
    """The study's report, computed from its records (figures drawn into ``out_dir``)."""
    analysis = study.spec.analysis
    judgements = load_judgements(judgement_files(study.out))
    folder = study.out / QUESTIONNAIRE_FOLDER
    questionnaire = load_questionnaire(folder)
    frame = judgement_table(judgements)
    key = load_key(folder, questionnaire)
    report = build_report(
        frame,
        out_dir,
        title=study.spec.study.title,
        tells=study_tells(questionnaire, key),
        reps=analysis.bootstrap,
        margin=analysis.margin,
        key=key,
    )
    if analysis.sequential:
        report.sections += stopping_sections(frame, margin=analysis.margin, alpha=analysis.alpha)
    report.sections += align_sections(study)
    report.sections += cost_sections(ledger)
    report.dated = False
    return report


def align_sections(study: Study) -> list[Section]:
    """With ``[cohorts.NAME]``: each LLM cohort's agreement among its participants (the
    cohort table of ``sdtt align score``)."""
    if not study.spec.cohorts:
        return []
    folder = study.out / ALIGN_FOLDER
    task = load_rating_task(folder)
    key = load_rating_key(folder, task)
    paths = [ratings_path(study, name) for name in study.spec.cohorts]
    ratings = load_ratings([path for path in paths if path.exists()])
    result = analyse(
        task,
        ratings,
        item_sides={item: entry.side for item, entry in key.items.items()},
        permutations=study.spec.align.permutations,
        seed=study.spec.align.seed,
    )
    table = cohort_table(result)
    return [Section(table.title, table.header, table.rows, note=table.note)]


def stopping_lines(study: Study) -> list[str]:
    """One line per judge group and condition: whether the stopping rule was met."""
    analysis = study.spec.analysis
    frame = judgement_table(load_judgements(judgement_files(study.out)))
    return [
        f"{table.title.removesuffix(': sequential judging')}, {row[0]}: {row[-1]}"
        for table in stopping_tables(frame, margin=analysis.margin, alpha=analysis.alpha)
        for row in table.rows
    ]


def character_lines(study: Study) -> list[str]:
    """One line per condition whose simulated chats had messages caught out of character,
    as the report's table counts them (none: every chat was clean, or none records it)."""
    path = study.out / REPORT_FOLDER / FIGURES_FILE
    if not path.exists():
        return []
    sections = json.loads(path.read_text(encoding="utf-8"))["sections"]
    lines = []
    for section in sections:
        if section["title"] != CHARACTER_TITLE:
            continue
        for condition, chats, affected, bot, asker, judged in section["rows"]:
            if affected != "0":
                lines.append(
                    f"{condition}: {bot} bot and {asker} interrogator message(s) caught out "
                    f"of character in {affected} of {chats} chat(s); {judged} judgement(s) "
                    "rest on those chats"
                )
    return lines


def stopping_sections(frame: pd.DataFrame, *, margin: float, alpha: float) -> list[Section]:
    """With ``[analysis] sequential``: whether each condition's stopping rule was met
    (the tables of ``sdtt score --sequential``)."""
    tables = stopping_tables(frame, margin=margin, alpha=alpha)
    note = (
        "Judgements in the order recorded. The sequence stays valid however often it is "
        "looked at: a condition whose rule is met needs no more judgements; one marked "
        "'not met' keeps recruiting (up to the spec's max_judgements)."
    )
    if not tables:
        return [Section("Sequential stopping rule", ["state"], [["no usable test judgements"]])]
    return [Section(t.title, t.header, t.rows, note=note) for t in tables]


def figures_of(report: Report) -> dict[str, Any]:
    """Every number a report shows, as the report shows it."""
    return {
        "headline": list(report.headline),
        "sections": [
            {"title": s.title, "header": list(s.header), "rows": [list(r) for r in s.rows]}
            for s in report.sections
        ],
    }


def write_study_report(study: Study, ledger: Ledger) -> list[Path]:
    """Write the report, its figures and ``figures.json`` under ``OUT/report``, and the
    results as data under ``OUT/results`` (:func:`write_results`)."""
    out_dir = study.out / REPORT_FOLDER
    report = compute_report(study, ledger, out_dir)
    files = write_report(report, out_dir)
    figures = out_dir / FIGURES_FILE
    write_text_atomic(figures, json.dumps(figures_of(report), indent=1, ensure_ascii=False) + "\n")
    return [*files, figures, *write_results(study, report)]


def write_results(study: Study, report: Report) -> list[Path]:
    """``OUT/results``: the pass-rate tables as tidy rows (``pass-rates.csv`` and
    ``.json``, as ``sdtt score --format``, broken down by ``[analysis] by``) and every
    table of the report, one row per cell (``report-tables.csv``: table, row, column,
    value as shown)."""
    analysis = study.spec.analysis
    frame = judgement_table(load_judgements(judgement_files(study.out)))
    by = [name for name in analysis.by if name in frame.columns]
    rows = tidy_results(frame, by=by, reps=analysis.bootstrap, margin=analysis.margin)
    folder = study.out / RESULTS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in ("csv", "json"):
        path = folder / f"pass-rates.{fmt}"
        write_text_atomic(path, write_tidy(rows, fmt))
        written.append(path)
    cells = [
        {"table": section.title, "row": number, "column": column, "value": value}
        for section in report.sections
        for number, row in enumerate(section.rows, start=1)
        for column, value in zip(section.header, row, strict=False)
    ]
    tables = folder / "report-tables.csv"
    frame_of_cells = pd.DataFrame(cells, columns=["table", "row", "column", "value"])
    write_text_atomic(tables, write_tidy(frame_of_cells, "csv"))
    return [*written, tables]
