"""The HTML and Markdown report: tables of pass rates and tests, plus PNG figures.

Writes into one folder: ``report.html`` (figures embedded as base64, so the file stands
alone), ``report.md`` (figures linked as the PNG files next to it) and the PNGs. Every
value that comes from data (models, topics, demographic answers) is HTML-escaped in the
HTML and Markdown-escaped in the Markdown.
"""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from sdtt.analysis import plots
from sdtt.analysis.format import format_table, number, percent
from sdtt.analysis.metrics import DEFAULT_MARGIN, breakdown, expand_by, summarise
from sdtt.analysis.table import demographic_columns
from sdtt.analysis.tells import TellRow
from sdtt.files import write_text_atomic
from sdtt.questionnaires.layout import escape_markdown

REPORT_HTML = "report.html"
REPORT_MD = "report.md"
_PLAIN_NUMBER = re.compile(r"[-+]?[\d.,%\[\] <]*")


@dataclass
class Section:
    """A titled table (header + rows) with an optional note."""

    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Report:
    """What the report holds before it is written."""

    title: str
    sections: list[Section] = field(default_factory=list)
    figures: list[tuple[str, Path]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _curves(frame: pd.DataFrame, reps: int, margin: float) -> dict[str, pd.DataFrame]:
    models = frame["model"].astype(object).where(frame["model"].notna(), "(unknown model)")
    curves = {}
    for model, group in frame.groupby(models.astype(str), sort=True):
        rows = breakdown(group, "x", reps=reps, margin=margin)
        rows = rows.loc[rows["judgements"] > 0]
        if not rows.empty:
            curves[str(model)] = rows
    return curves


def build_report(
    frame: pd.DataFrame,
    out_dir: Path,
    *,
    title: str = "sdtt report",
    tells: list[TellRow] | None = None,
    reps: int = 1000,
    margin: float = DEFAULT_MARGIN,
) -> Report:
    """Compute every table and draw every figure into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    report = Report(title=title)
    overall = summarise(frame, reps=reps, margin=margin)
    header, rows = format_table(pd.DataFrame([overall.row()]), None)
    report.sections.append(
        Section(
            "Overall",
            header,
            rows,
            note=(
                "Pass rate = 1 - mean over pairs of the share of judges who found the bot "
                "(pair-averaged); pooled = 1 - all correct / all judgements. Wilson interval "
                "on the pooled rate; bootstrap interval resamples pairs and judges. Binomial "
                "p tests proportion correct = 0.5; TOST p tests equivalence to 0.5 within "
                f"+-{margin:g} (small = indistinguishable)."
            ),
        )
    )
    for name in (
        "model",
        "x",
        "judge_type",
        "judge_kind",
        "judge_model",
        "mode",
        "topic",
        "persona",
    ):
        if frame[name].notna().any():
            table = breakdown(frame, name, reps=reps, margin=margin)
            header, rows = format_table(table, name)
            report.sections.append(Section(f"By {name}", header, rows))
    for column in expand_by(frame, ["demographics"]) if demographic_columns(frame) else []:
        table = breakdown(frame, column, reps=reps, margin=margin)
        header, rows = format_table(table, column)
        report.sections.append(Section(f"By {column.removeprefix('demo.')}", header, rows))
    counts = overall.confusion
    report.sections.append(
        Section(
            "Verdicts by truth",
            ["truth", "said human", "said AI", "rate"],
            [
                [
                    "human",
                    str(counts.hh),
                    str(counts.mh),
                    f"p(H|H) = {percent(counts.rate('H', 'H'))}",
                ],
                [
                    "AI",
                    str(counts.hm),
                    str(counts.mm),
                    f"p(M|M) = {percent(counts.rate('M', 'M'))}",
                ],
            ],
            note=f"Imitation detectability (p(H|H) + p(M|M)) / 2 = {percent(counts.detectability)}"
            " (50% = perfect imitator).",
        )
    )
    if overall.exclusions:
        report.sections.append(
            Section(
                "Excluded judgements (reported, not used)",
                ["reason", "judgements"],
                [[reason, str(n)] for reason, n in overall.exclusions.items()],
            )
        )
    curves = _curves(frame, reps, margin)
    if curves:
        report.figures.append(
            ("Pass rate against turns", plots.pass_rate_plot(curves, out_dir / "pass-rate.png"))
        )
    report.figures.append(
        ("Verdicts by truth", plots.confusion_plot(counts, out_dir / "confusion.png"))
    )
    if tells:
        report.sections.append(
            Section(
                "Tells (bot minus human side B)",
                ["tell", "bot", "human", "bot - human"],
                [[t.label, number(t.bot), number(t.human), number(t.difference)] for t in tells],
            )
        )
        if any(not math.isnan(t.difference) for t in tells):
            report.figures.append(("Tells", plots.tells_plot(tells, out_dir / "tells.png")))
    return report


def render_html(report: Report) -> str:
    """The report as a standalone HTML page (figures embedded)."""
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{esc(report.title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;"
        "padding:3px 8px;text-align:right}th:first-child,td:first-child{text-align:left}"
        "img{max-width:100%;border:1px solid #eee}.note{color:#555;font-size:0.9em}</style>",
        f"</head><body><h1>{esc(report.title)}</h1>",
        f"<p class='note'>Written {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by sdtt.</p>",
    ]
    for note in report.notes:
        parts.append(f"<p class='note'>{esc(note)}</p>")
    for section in report.sections:
        parts.append(f"<h2>{esc(section.title)}</h2><table><thead><tr>")
        parts += [f"<th>{esc(cell)}</th>" for cell in section.header]
        parts.append("</tr></thead><tbody>")
        for row in section.rows:
            parts.append("<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>")
        parts.append("</tbody></table>")
        if section.note:
            parts.append(f"<p class='note'>{esc(section.note)}</p>")
    for caption, path in report.figures:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        parts.append(
            f"<figure><img alt='{esc(caption)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{esc(caption)}</figcaption></figure>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)


def render_markdown(report: Report) -> str:
    """The report as Markdown (figures linked as files next to it)."""

    def cell(text: str) -> str:
        if _PLAIN_NUMBER.fullmatch(text):
            return text
        return escape_markdown(text).replace("\n", " ")

    lines = [f"# {cell(report.title)}", ""]
    lines += [f"_{cell(note)}_\n" for note in report.notes]
    for section in report.sections:
        lines += [f"## {cell(section.title)}", ""]
        lines.append("| " + " | ".join(cell(h) for h in section.header) + " |")
        lines.append("|" + "---|" * len(section.header))
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in section.rows]
        lines.append("")
        if section.note:
            lines += [cell(section.note), ""]
    for caption, path in report.figures:
        lines += [f"![{cell(caption)}]({path.name})", ""]
    return "\n".join(lines)


def write_report(report: Report, out_dir: Path) -> list[Path]:
    """Write ``report.html`` and ``report.md`` into ``out_dir``; returns every file."""
    html_path = out_dir / REPORT_HTML
    md_path = out_dir / REPORT_MD
    write_text_atomic(html_path, render_html(report))
    write_text_atomic(md_path, render_markdown(report))
    return [html_path, md_path, *(path for _, path in report.figures)]
