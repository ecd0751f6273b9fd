"""The HTML and Markdown report: tables of pass rates and tests, plus PNG figures.

Writes into one folder: ``report.html`` (figures embedded as base64, so the file stands
alone), ``report.md`` (figures linked as the PNG files next to it) and the PNGs. Every
value that comes from data (models, topics, demographic answers) is HTML-escaped in the
HTML and Markdown-escaped in the Markdown.
"""

from __future__ import annotations

import base64
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from sdtt.analysis import plots
from sdtt.analysis.defaults import DEFAULT_BOOTSTRAP, DEFAULT_MARGIN
from sdtt.analysis.format import (
    INTERVAL_NOTE,
    format_table,
    interval,
    interval_name,
    number,
    percent,
)
from sdtt.analysis.metrics import (
    NONE,
    Confusion,
    breakdown,
    condition_tables,
    group_keys,
    judge_groups,
    summarise,
)
from sdtt.analysis.paper_table import paper_table
from sdtt.analysis.table import demographic_columns, exclusion_tally
from sdtt.analysis.tells import TellRow, condition_of, condition_warnings
from sdtt.analysis.within import breakdown_tables, within_parts
from sdtt.files import write_text_atomic
from sdtt.personas.character import OUT_OF_CHARACTER
from sdtt.questionnaires.pairing import HUMAN_SIDES, human_side, same_topic
from sdtt.tasks.layout import escape_markdown
from sdtt.tasks.questionnaire import AnswerKey

REPORT_HTML = "report.html"
REPORT_MD = "report.md"
_PLAIN_NUMBER = re.compile(r"[-+]?[\d.,%\[\] <]*( \(n \d+( / \d+)?\))?")
"""A cell of numbers (a rate with its n) that Markdown shows as written, unescaped."""


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
    lead: list[tuple[str, Path]] = field(default_factory=list)
    """Figures shown first, before any table (the pass rate against turns)."""
    headline: list[str] = field(default_factory=list)
    """One line per condition and judge group, shown under the lead figures."""
    dated: bool = True
    """Whether the HTML page says when it was written (a study's report does not: two
    runs of one study write the same bytes)."""


Curves = dict[str, dict[str, pd.DataFrame]]
"""Judge group -> curve (model, and mode when several) -> its points."""


def _curves(frame: pd.DataFrame, column: str, reps: int, margin: float) -> Curves:
    """Pass rate by ``column``, one curve per model (and mode, when several), one panel
    per judge group: human and LLM judges are never mixed in one point."""
    frame = frame.loc[(frame["pair_kind"] == "test") & frame[column].notna()]
    models = frame["model"].astype(object).where(frame["model"].notna(), "(unknown model)")
    several_modes = frame["mode"].nunique(dropna=False) > 1
    modes = frame["mode"].astype(object).where(frame["mode"].notna(), "(no mode)")
    keys = models.astype(str)
    if several_modes:
        keys = keys + ", " + modes.astype(str)
    if column != "x" and (frame.groupby(column)["x"].nunique() > 1).any():
        # Several X at one turn index (the last 3 and last 10 of one chat): one curve each.
        keys = keys + ", X=" + group_keys(frame["x"])
    if column != "n" and (frame.groupby(column)["n"].nunique() > 1).any():
        # Several N at one turn index (N=0 live turns 8-10, N=7 live turns 1-3): apart too.
        keys = keys + ", N=" + group_keys(frame["n"])
    groups = judge_groups(frame)
    curves: Curves = {}
    for (group, name), part in frame.groupby([groups, keys], sort=True):
        rows = breakdown(part, column, reps=reps, margin=margin)
        rows = rows.loc[(rows["judgements"] > 0) & (rows[column] != NONE)]
        if not rows.empty:
            curves.setdefault(str(group), {})[str(name)] = rows
    return dict(sorted(curves.items(), key=lambda item: (item[0] != "Human judges", item[0])))


def _turn_figures(
    report: Report, frame: pd.DataFrame, out_dir: Path, reps: int, margin: float
) -> None:
    """The main figure (pass rate against total turns N+X, log axis) and, for chunked
    studies, the length curve (pass rate against the first k turns shown)."""
    chunks = frame["view"] == "chunk"
    main = frame.loc[~chunks] if (~chunks).any() else frame
    if main["turns"].notna().any():
        curves = _curves(main, "turns", reps, margin)
        xlabel, log = "total turns N + X (pseudo-dialogue + live)", True
        column = "turns"
    else:
        # Older judgements record no N: fall back to the live turns shown.
        curves = _curves(main, "x", reps, margin)
        xlabel, log, column = "X (live turns shown; N not recorded)", False, "x"
    if curves:
        report.sections.append(_points("Pass rate against turns: the points", curves, column))
        report.lead.append(
            (
                "Pass rate against turns",
                plots.pass_rate_plot(
                    curves,
                    out_dir / "pass-rate.png",
                    column=column,
                    xlabel=xlabel,
                    title="Pass rate against turns",
                    log=log,
                ),
            )
        )
    if chunks.any():
        curves = _curves(frame.loc[chunks], "x", reps, margin)
        if curves:
            report.sections.append(_points("Length curve: the points", curves, "x"))
            report.figures.append(
                (
                    "Length curve",
                    plots.pass_rate_plot(
                        curves,
                        out_dir / "length-curve.png",
                        column="x",
                        xlabel="first k turns of the same chats",
                        title="Length curve: pass rate against chat length",
                    ),
                )
            )


def build_report(
    frame: pd.DataFrame,
    out_dir: Path,
    *,
    title: str = "sdtt report",
    tells: Mapping[str, list[TellRow]] | None = None,
    reps: int = DEFAULT_BOOTSTRAP,
    margin: float = DEFAULT_MARGIN,
    pool: bool = False,
    key: AnswerKey | None = None,
    step: Callable[[str], None] | None = None,
) -> Report:
    """Compute every table and draw every figure into ``out_dir``.

    ``step(what)`` is told as each part starts (for a progress line: a large study's
    intervals and figures take a while).

    The report leads with one row per condition (model x mode x total turns), human and
    LLM judges in separate tables; a figure pooled over everything only with ``pool``.
    With the study's answer ``key``, a table says which kind of human side each
    condition's pairs had (:func:`human_side_section`).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    say = step or (lambda what: None)
    report = Report(title=title)
    explained = (
        f"{INTERVAL_NOTE} Binomial p tests proportion correct = 0.5; TOST p tests "
        f"equivalence to 0.5 within +-{margin:g} (small = indistinguishable). Turn = total "
        "turn index N + X (pseudo-dialogue turns + the last live turn shown). Catch pairs "
        "never count. Every table keeps one judge group and one bot model: human judges "
        "apart from LLM judges, and each LLM judge run (judge id) apart from the others, so "
        "a judge run twice never counts twice for a pair; only --pool adds pooled tables, "
        "titled so."
    )
    say(f"pass rates and intervals by condition ({reps} bootstrap samples)")
    conditions = condition_tables(frame, reps=reps, margin=margin)
    header, cells = paper_table(conditions)
    if cells:
        report.sections.append(
            Section(
                "Pass rates as in the SDTT paper's Table 1 (model x total turns x mode, per "
                "judge group)",
                header,
                cells,
                note="Each cell: the X-Turn Pass Rate (pair-averaged) of one condition, with "
                "n usable judgements / pairs; its interval and tests are in the condition "
                "tables below. '-': no such condition in this study; '- (n 0)': every judgement of "
                "it was left out (see 'Left out of pass rates').",
            )
        )
    for index, (section_title, table) in enumerate(conditions):
        header, cells = format_table(table, "condition")
        report.sections.append(
            Section(section_title, header, cells, note=explained if index == 0 else "")
        )
        report.headline += headline_lines(section_title, table)
    if key is not None:
        sides = human_side_section(key)
        if sides is not None:
            report.sections.append(sides)
        character = character_section(key, frame)
        if character is not None:
            report.sections.append(character)
    overall = summarise(frame, reps=reps, margin=margin)
    if pool:
        header, rows = format_table(pd.DataFrame([overall.row()]), None)
        report.sections.append(
            Section(
                "All judgements, pooled (--pool)",
                header,
                rows,
                note="Pools every judge type, judge and bot model, on request.",
            )
        )
    columns = [*BREAKDOWN_COLUMNS, *demographic_columns(frame)]
    for column in columns:
        say(f"pass rates by {column}")
        tables = breakdown_tables(frame, column, reps=reps, margin=margin, pool=pool, min_values=2)
        for title, table in tables:
            header, rows = format_table(table, column)
            report.sections.append(Section(title, header, rows))
    panels = {
        label: summarise(part, reps=0, margin=margin).confusion
        for label, part in within_parts(frame)
    }
    if pool or not panels:
        panels["all judges and bots, pooled"] = overall.confusion
    for label, counts in panels.items():
        report.sections.append(_verdicts(f"Verdicts by truth, {label}", counts))
    tally = exclusion_tally(frame)
    if tally.excluded or tally.catch:
        rows = [[reason, str(n)] for reason, n in sorted(tally.excluded.items())]
        rows.append(["catch pairs (quality checks, never counted)", str(tally.catch)])
        report.sections.append(
            Section("Left out of pass rates", ["reason", "judgements"], rows, note=tally.line())
        )
    say("figures: pass rate by turn")
    _turn_figures(report, frame, out_dir, reps, margin)
    if not report.headline:
        report.headline = ["No test-pair judgements to score."]
    report.figures.append(
        ("Verdicts by truth", plots.confusion_plot(panels, out_dir / "confusion.png"))
    )
    if tells:
        say("tells")
        _tell_sections(report, tells, out_dir)
    return report


def human_side_section(key: AnswerKey) -> Section | None:
    """Which kind of human side each condition's test pairs had: the imitated person's
    own held-out chats, other people's (the corpus) or a transcript file's."""
    counts: dict[str, Counter[str]] = {}
    off_topic: Counter[str] = Counter()
    for truth in key.items.values():
        if truth.kind != "test" or truth.is_mirror:
            continue
        condition = condition_of(truth)
        counts.setdefault(condition, Counter())[human_side(truth.human)] += 1
        if not same_topic(truth.bot.topic, truth.human.topic):
            off_topic[condition] += 1
    if not counts:
        return None
    rows = [
        [
            condition,
            "; ".join(f"{HUMAN_SIDES[kind]}: {n} pairs" for kind, n in sorted(found.items()))
            + (
                f" ({off_topic[condition]} not on the bot chat's topic)"
                if off_topic[condition]
                else ""
            ),
        ]
        for condition, found in sorted(counts.items())
    ]
    return Section(
        "Human side of the pairs, per condition",
        ["condition", "human side"],
        rows,
        note="What each bot chat was compared with. The imitated person's own chats are "
        "held out of every prompt (sdtt persona hold-out); other people's chats compare "
        "the bot with strangers, not with the person it imitates.",
    )


CHARACTER_TITLE = "Messages caught out of character, per condition"


def character_section(key: AnswerKey, frame: pd.DataFrame) -> Section | None:
    """Per condition, how many messages of its simulated chats broke character (repeated
    the side's instructions or said it is an AI) and were left unsent, by side, and how
    many usable judgements rest on the chats that had one; None when no chat records it
    (human-held chats, transcripts written before it was counted)."""
    chats: dict[str, dict[str, tuple[int, int]]] = {}
    affected: dict[str, set[str]] = {}
    for pair, truth in key.items.items():
        caught = truth.bot.meta.get(OUT_OF_CHARACTER) if truth.kind == "test" else None
        if not isinstance(caught, dict):
            continue
        condition = condition_of(truth)
        counts = (int(caught.get("bot", 0)), int(caught.get("interrogator", 0)))
        chats.setdefault(condition, {})[truth.bot.id] = counts
        if any(counts):
            affected.setdefault(condition, set()).add(pair)
    if not chats:
        return None
    usable = frame.loc[(frame["pair_kind"] == "test") & ~frame["excluded"], "pair_id"]
    rows = []
    for condition, found in sorted(chats.items()):
        pairs = affected.get(condition, set())
        rows.append(
            [
                condition,
                str(len(found)),
                str(sum(1 for counts in found.values() if any(counts))),
                str(sum(bot for bot, _ in found.values())),
                str(sum(asker for _, asker in found.values())),
                str(int(usable.isin(pairs).sum())),
            ]
        )
    return Section(
        CHARACTER_TITLE,
        [
            "condition",
            "chats",
            "chats with one",
            "bot messages",
            "interrogator messages",
            "judgements on those chats",
        ],
        rows,
        note="Simulated chats: a message that repeated its side's instructions or said it "
        "is an AI was never sent and its reply was asked again (a side that kept doing it "
        "sent nothing that turn). Judgements on chats with none rest on clean chats; those "
        "on the others rest on chats whose model broke character at least once.",
    )


def _tell_sections(report: Report, tells: Mapping[str, list[TellRow]], out_dir: Path) -> None:
    """The tells of both sides, one row per condition and tell with side B's values and
    side A's beside them (a program playing User A can give the bot away as surely as the
    bot), its warnings and figure."""
    rows = []
    for condition, found in tells.items():
        by_side = {(t.side, t.name): t for t in found}
        for name in dict.fromkeys(t.name for t in found):
            cells = [condition, next(t.label for t in found if t.name == name)]
            for side in ("B", "A"):
                t = by_side.get((side, name))
                cells += (
                    ["-", "-", "-"]
                    if t is None
                    else [number(t.bot), number(t.human), number(t.difference)]
                )
            rows.append(cells)
    report.sections.append(
        Section(
            "Tells (bot chats minus human chats, per condition; side B = User B, side A = "
            "User A beside it)",
            [
                "condition",
                "tell",
                "B: bot",
                "B: human",
                "B: bot - human",
                "A: bot",
                "A: human",
                "A: bot - human",
            ],
            rows,
            note="Side A is User A: where a program plays User A in the bot's chats "
            "(conditions labelled 'simulated User A'), its side can give the bot away.",
        )
    )
    warnings = condition_warnings(tells)
    if warnings:
        report.sections.append(
            Section("Warning: tells outside the words", ["warning"], [[w] for w in warnings])
        )
    if any(not math.isnan(t.difference) for rows in tells.values() for t in rows):
        report.figures.append(("Tells", plots.tells_plot(tells, out_dir / "tells.png")))


BREAKDOWN_COLUMNS = ("turns", "n", "x", "view", "mode", "topic", "persona")
"""What the report breaks each judge group and bot model down by."""


def headline_lines(title: str, rows: pd.DataFrame) -> list[str]:
    """One line per condition of a condition table: its pass rate, that rate's interval
    named by the method the row used, and how many judgements of how many pairs it
    stands on."""
    judges = title.removesuffix(", one row per condition")
    return [
        f"{row['condition']}, {judges}: pass rate {percent(row['pass_rate'])} "
        f"(95% CI {interval(row['boot_low'], row['boot_high'])}, "
        f"{interval_name(row['interval_method'], row['effective_n'])}), "
        f"{int(row['judgements'])} judgement(s) of {int(row['pairs'])} pair(s)"
        for row in rows.to_dict("records")
    ]


def _points(title: str, curves: Curves, column: str) -> Section:
    """The data of a curve figure as a table (readable without the picture)."""
    rows = [
        [
            f"{name} ({group.replace('Human judges', 'human judges')})",
            str(row[column]),
            str(int(row["judgements"])),
            percent(row["pass_rate"]),
            interval(row["boot_low"], row["boot_high"]),
            interval_name(row["interval_method"], row["effective_n"]),
        ]
        for group, panel in curves.items()
        for name, table in panel.items()
        for row in table.to_dict("records")
    ]
    label = "total turns" if column == "turns" else "turns shown"
    return Section(title, ["curve", label, "used", "pass rate", "95% CI", "CI method"], rows)


def _verdicts(title: str, counts: Confusion) -> Section:
    return Section(
        title,
        ["truth", "said human", "said AI", "rate"],
        [
            ["human", str(counts.hh), str(counts.mh), f"p(H|H) = {percent(counts.rate('H', 'H'))}"],
            ["AI", str(counts.hm), str(counts.mm), f"p(M|M) = {percent(counts.rate('M', 'M'))}"],
        ],
        note=f"Imitation detectability (p(H|H) + p(M|M)) / 2 = {percent(counts.detectability)}"
        " (50% = perfect imitator).",
    )


def render_html(report: Report) -> str:
    """The report as a standalone HTML page (figures embedded)."""
    from sdtt.templates import render

    def embedded(figures: list[tuple[str, Path]]) -> list[tuple[str, str]]:
        return [
            (caption, base64.b64encode(path.read_bytes()).decode("ascii"))
            for caption, path in figures
        ]

    page = render(
        "report.html",
        report=report,
        lead=embedded(report.lead),
        figures=embedded(report.figures),
        written=f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC" if report.dated else "",
    )
    return page.rstrip("\n")


def render_markdown(report: Report) -> str:
    """The report as Markdown (figures linked as files next to it)."""

    def cell(text: str) -> str:
        if _PLAIN_NUMBER.fullmatch(text):
            return text
        return escape_markdown(text).replace("\n", " ")

    lines = [f"# {cell(report.title)}", ""]
    lines += [f"_{cell(note)}_\n" for note in report.notes]
    for caption, path in report.lead:
        lines += [f"![{cell(caption)}]({path.name})", ""]
    lines += [f"- {cell(line)}" for line in report.headline]
    lines += [""] if report.headline else []
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
    return [html_path, md_path, *(path for _, path in [*report.lead, *report.figures])]
