"""Tables and figures of an alignment analysis: terminal rows, PNGs and an HTML page.

The HTML is a Jinja2 template with autoescaping on, so every text (cohort names, model
names, judge ids) is escaped; figures are embedded as data URLs.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from sdtt.align.analysis import HUMAN, AlignmentResult
from sdtt.align.verdicts import Estimate, VerdictAgreement
from sdtt.analysis.plots import pyplot
from sdtt.files import replacing, write_text_atomic
from sdtt.redact import plot_label

REPORT_HTML = "alignment.html"


def number(value: float, digits: int = 2) -> str:
    """A value for a table; an em dash when there is none."""
    return "\u2014" if math.isnan(value) else f"{value:.{digits}f}"


def p_value(value: float) -> str:
    """A p-value for a table."""
    if math.isnan(value):
        return "\u2014"
    return f"{value:.3f}" if value >= 0.001 else "<0.001"


def interval(estimate: Estimate) -> str:
    """``value [low, high]``."""
    return f"{number(estimate.value)} [{number(estimate.low)}, {number(estimate.high)}]"


@dataclass
class Table:
    """A titled table of display strings."""

    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""


def cohort_table(result: AlignmentResult) -> Table:
    """Each cohort's size and how much its participants agree with one another."""
    rows = [
        [
            c.name,
            str(len(c.participants)),
            str(c.ratings),
            number(c.pairwise_median),
            number(c.icc_single),
            number(c.icc_average),
            f"{number(c.ceiling.lower)} - {number(c.ceiling.upper)}",
        ]
        for c in result.cohorts
    ]
    return Table(
        "Cohorts: inter-individual agreement",
        [
            "cohort",
            "participants",
            "ratings",
            "median pairwise rho",
            "ICC(2,1)",
            "ICC(2,k)",
            "noise ceiling",
        ],
        rows,
        "pairwise rho: Spearman of two participants' dissimilarity matrices; ICC: two-way, "
        "absolute agreement (Shrout & Fleiss), over pairs every participant rated; noise "
        "ceiling: bounds on the mean Spearman rho of a model matrix with each participant's "
        "(Nili et al. 2014: each participant against the mean rank-transformed matrix of the "
        "others, lower, or of all, upper).",
    )


def comparison_table(result: AlignmentResult) -> Table:
    """Each LLM cohort's group and individual alignment with the humans."""
    human = result.cohort(HUMAN)
    ceiling = human.ceiling if human is not None else None
    pairwise = human.pairwise_median if human is not None else math.nan
    rows = []
    for c in result.comparisons:
        rows.append(
            [
                c.cohort,
                number(c.rho),
                p_value(c.p),
                p_value(c.p_bonferroni),
                number(c.to_humans),
                ceiling.place(c.to_humans) if ceiling else "\u2014",
                number(c.individual_mean),
                number(pairwise),
            ]
        )
    low = number(ceiling.lower) if ceiling else "\u2014"
    high = number(ceiling.upper) if ceiling else "\u2014"
    return Table(
        "Alignment with the humans",
        [
            "cohort",
            "group x human group rho",
            "p",
            "p (Bonferroni)",
            "group x each human, mean rho",
            "against the noise ceiling",
            "each participant x each human, mean rho",
            "human-human median rho",
        ],
        rows,
        "group x human group: Spearman of the cohort's mean matrix with the humans' mean "
        f"matrix; p: share of {result.permutations} item-label permutations aligning at least "
        f"as well; Bonferroni over {len(result.comparisons)} comparison(s). group x each "
        "human: the cohort's mean matrix against each human's matrix, averaged; this is what "
        f"the human noise ceiling ({low} - {high}, Nili et al. 2014) bounds, so 'against the "
        "noise ceiling' says whether it lies below, within or above those bounds, and where "
        "in the band. A group-to-group rho is higher than either "
        "(averaging removes individual noise) and is not comparable with the ceiling.",
    )


def category_table(result: AlignmentResult) -> Table:
    """Alignment with the human group within one category of items and across two."""
    rows = [
        [
            c.cohort,
            number(c.within_rho),
            number(c.between_rho),
            number(c.within_w, 0),
            p_value(c.within_p),
        ]
        for c in result.comparisons
    ]
    note = (
        "Categories: the rating key's sides (bot, human). within: Spearman of the group "
        "matrices over item pairs of one category (bot-bot, human-human); between: over "
        "bot-human pairs. W, p: two-sided Wilcoxon signed-rank test of the cohort's "
        "participants' within- against their between-category alignment with the human "
        "group, paired by participant (W = the smaller signed-rank sum, as scipy reports it)."
    )
    if not math.isnan(result.category_p):
        note += (
            f" Across the {len(result.comparisons)} LLM cohorts (Ogg et al.'s comparison, "
            "signed-rank, paired by cohort): "
            f"W = {number(result.category_w, 1)}, p = {p_value(result.category_p)}."
        )
    return Table(
        "Within- and between-category alignment with the human group",
        ["cohort", "within rho", "between rho", "W", "p"],
        rows,
        note,
    )


def individual_table(result: AlignmentResult) -> Table:
    """Every LLM participant against every human, summarised per cohort, read against
    how far apart the humans are from one another."""
    human = result.cohort(HUMAN)
    spread = [v for v in (human.pairwise if human else []) if not math.isnan(v)]
    low, high = (min(spread), max(spread)) if spread else (math.nan, math.nan)
    cohorts = {c.name: c for c in result.cohorts}
    rows = []
    for c in result.comparisons:
        values = c.individual
        rated = ~np.isnan(values)
        if not rated.any() or human is None:
            rows.append([c.cohort, "0", "\u2014", "\u2014", "\u2014", "\u2014"])
            continue
        best = np.unravel_index(np.nanargmax(values), values.shape)
        kept = values[rated]
        inside = float(np.mean((kept >= low) & (kept <= high))) if spread else math.nan
        rows.append(
            [
                c.cohort,
                str(int(rated.sum())),
                number(float(np.median(kept))),
                f"{number(float(values[best]))} ({cohorts[c.cohort].participants[best[0]]} x "
                f"{human.participants[best[1]]})",
                "\u2014" if math.isnan(inside) else f"{100 * inside:.0f}%",
                f"{number(low)} - {number(high)}",
            ]
        )
    return Table(
        "Individual level: each LLM participant against each human",
        [
            "cohort",
            "pairs of participants",
            "median rho",
            "best rho (LLM x human)",
            "within human-human range",
            "human-human range",
        ],
        rows,
        "Spearman rho of one LLM participant's matrix with one human's; the human-human "
        "range is the lowest and highest rho between two humans. The figure shows every "
        "value.",
    )


def verdict_table(found: VerdictAgreement) -> Table:
    """Each LLM judge's Turing verdicts against the human judges'."""
    rows = [[j.judge, str(j.pairs), interval(j.kappa), interval(j.fooled_r)] for j in found.judges]
    return Table(
        "Turing verdicts: LLM judges against human judges",
        [
            "LLM judge",
            "pairs",
            "Cohen's kappa [95%]",
            "r of per-pair fooled rates [95%]",
        ],
        rows,
        "Human-human mean pairwise Cohen's kappa (the ceiling, the same statistic): "
        f"{interval(found.human_kappa)}, {found.humans} human judge(s), {found.pairs} "
        "pair(s). An LLM judge's kappa is Cohen's kappa of its verdicts with one human's on "
        "the pairs both judged, averaged over the humans; the ceiling is Cohen's kappa of "
        "two humans on the pairs both judged, averaged over every two humans. Intervals: "
        "percentile bootstrap over pairs.",
    )


def _matrices_figure(result: AlignmentResult, path: Path) -> Path:
    plt = pyplot()
    order = sorted(
        range(len(result.items)), key=lambda i: result.item_sides.get(result.items[i], "")
    )
    labels = [result.item_sides.get(result.items[i], "?")[:1].upper() for i in order]
    count = len(result.cohorts)
    fig, axes = plt.subplots(1, count, figsize=(3.6 * count, 3.6), squeeze=False)
    for ax, cohort in zip(axes[0], result.cohorts, strict=True):
        shown = cohort.group[np.ix_(order, order)]
        image = ax.imshow(shown, vmin=0, vmax=1, cmap="viridis")
        ax.set_title(plot_label(cohort.name), fontsize=8)
        ax.set_xticks(range(len(labels)), labels, fontsize=6)
        ax.set_yticks(range(len(labels)), labels, fontsize=6)
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="dissimilarity")
    with replacing(path) as partial:
        fig.savefig(partial, dpi=120, bbox_inches="tight", format="png")
    plt.close(fig)
    return path


def _map_figure(result: AlignmentResult, path: Path) -> Path:
    """Participants in two dimensions: classical MDS of 1 - alignment, and t-SNE of their
    flattened matrices (Ogg et al.'s map)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.5))
    names = [c.name for c in result.cohorts]
    maps = (
        (result.map_coords, "MDS (distance = 1 - alignment)", "MDS"),
        (result.tsne_coords, "t-SNE (PCA start, perplexity 30 or (n - 1) / 3)", "t-SNE"),
    )
    for ax, (coords, title, axis) in zip(axes, maps, strict=True):
        for name in names:
            rows = [i for i, (cohort, _) in enumerate(result.map_labels) if cohort == name]
            if len(coords) == len(result.map_labels):
                ax.scatter(coords[rows, 0], coords[rows, 1], label=plot_label(name), s=24)
        ax.set_xlabel(f"{axis} 1")
        ax.set_ylabel(f"{axis} 2")
        ax.set_title(title, fontsize=9)
    axes[0].legend(fontsize=7, loc="best")
    with replacing(path) as partial:
        fig.savefig(partial, dpi=120, bbox_inches="tight", format="png")
    plt.close(fig)
    return path


def _individual_figure(result: AlignmentResult, path: Path) -> Path:
    """Every LLM participant (rows, by cohort) against every human (columns)."""
    plt = pyplot()
    human = result.cohort(HUMAN)
    stacked = np.vstack([c.individual for c in result.comparisons])
    labels = [
        plot_label(f"{c.cohort} #{n + 1}")
        for c in result.comparisons
        for n in range(c.individual.shape[0])
    ]
    fig, ax = plt.subplots(
        figsize=(max(4.0, 0.3 * stacked.shape[1] + 3), max(3.0, 0.18 * len(labels) + 1.5))
    )
    image = ax.imshow(stacked, vmin=-1, vmax=1, cmap="RdBu_r", aspect="auto")
    ax.set_yticks(range(len(labels)), labels, fontsize=5)
    columns = [plot_label(participant) for participant in human.participants] if human else []
    ax.set_xticks(range(len(columns)), columns, rotation=90, fontsize=5)
    ax.set_xlabel("human participant")
    fig.colorbar(image, ax=ax, label="Spearman rho")
    with replacing(path) as partial:
        fig.savefig(partial, dpi=120, bbox_inches="tight", format="png")
    plt.close(fig)
    return path


def _spread_figure(result: AlignmentResult, path: Path) -> Path:
    """Participant-to-participant alignment within each cohort, and of each LLM cohort's
    participants with each human: do models vary as people do?"""
    plt = pyplot()
    groups: list[tuple[str, list[float]]] = [
        (c.name, [v for v in c.pairwise if not math.isnan(v)]) for c in result.cohorts
    ]
    groups += [
        (f"{c.cohort} x human", [float(v) for v in c.individual.ravel() if not math.isnan(v)])
        for c in result.comparisons
    ]
    groups = [(name, values) for name, values in groups if values]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(groups) + 2), 3.8))
    if groups:
        ax.boxplot([values for _, values in groups])
        ax.set_xticks(
            range(1, len(groups) + 1),
            [plot_label(n) for n, _ in groups],
            rotation=20,
            ha="right",
            fontsize=7,
        )
    ax.set_ylabel("Spearman rho between two participants")
    ax.axhline(0, color="black", linewidth=0.6)
    with replacing(path) as partial:
        fig.savefig(partial, dpi=120, bbox_inches="tight", format="png")
    plt.close(fig)
    return path


def _bars_figure(result: AlignmentResult, path: Path) -> Path:
    """The figure the noise ceiling bounds (group x each human) as bars inside the band;
    the group-to-group rho as a separate marker, labelled as not bounded by it."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(result.comparisons) + 2), 3.8))
    names = [c.cohort for c in result.comparisons]
    ax.bar(
        range(len(names)),
        [c.to_humans for c in result.comparisons],
        color="#4c72b0",
        label="group x each human (mean)",
    )
    ax.scatter(
        range(len(names)),
        [c.individual_mean for c in result.comparisons],
        color="#dd8452",
        zorder=3,
        label="each participant x each human (mean)",
    )
    ax.scatter(
        range(len(names)),
        [c.rho for c in result.comparisons],
        color="black",
        marker="x",
        zorder=3,
        label="group x human group (not bounded by the ceiling)",
    )
    human = result.cohort(HUMAN)
    if human is not None and not math.isnan(human.ceiling.lower):
        ax.axhspan(
            human.ceiling.lower,
            human.ceiling.upper,
            color="#999",
            alpha=0.3,
            label="human noise ceiling (of group x each human)",
        )
    ax.set_xticks(
        range(len(names)), [plot_label(n) for n in names], rotation=20, ha="right", fontsize=7
    )
    ax.set_ylabel("Spearman rho with humans")
    ax.axhline(0, color="black", linewidth=0.6)
    # Below the axes, where it cannot hide a bar, a marker or the band.
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.25), frameon=False)
    with replacing(path) as partial:
        fig.savefig(partial, dpi=120, bbox_inches="tight", format="png")
    plt.close(fig)
    return path


@dataclass
class AlignmentReport:
    """What the page shows."""

    title: str
    tables: list[Table] = field(default_factory=list)
    figures: list[tuple[str, Path]] = field(default_factory=list)


def build_alignment_report(
    result: AlignmentResult,
    out: Path,
    *,
    verdicts: VerdictAgreement | None = None,
    title: str = "Judge alignment",
) -> AlignmentReport:
    """Tables and figures (PNGs written into ``out``)."""
    report = AlignmentReport(title, [cohort_table(result)])
    if result.comparisons:
        report.tables += [
            comparison_table(result),
            category_table(result),
            individual_table(result),
        ]
    if verdicts is not None:
        report.tables.append(verdict_table(verdicts))
    if result.cohorts:
        report.figures.append(
            (
                "Group dissimilarity matrices (items: B = bot, H = human)",
                _matrices_figure(result, out / "alignment-matrices.png"),
            )
        )
        report.figures.append(
            (
                "All participants mapped by MDS and by t-SNE",
                _map_figure(result, out / "alignment-mds.png"),
            )
        )
        report.figures.append(
            (
                "Inter-individual alignment: within each cohort, and LLM participants x humans",
                _spread_figure(result, out / "alignment-spread.png"),
            )
        )
    if result.comparisons:
        report.figures.append(
            (
                "Alignment with each human, against the human noise ceiling",
                _bars_figure(result, out / "alignment-bars.png"),
            )
        )
        report.figures.append(
            (
                "Individual level: each LLM participant (rows) against each human",
                _individual_figure(result, out / "alignment-individuals.png"),
            )
        )
    return report


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{ report.title }}</title>
<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;
padding:3px 8px;text-align:right}th:first-child,td:first-child{text-align:left}
img{max-width:100%;border:1px solid #eee}.note{color:#555;font-size:0.9em}</style>
</head><body><h1>{{ report.title }}</h1>
<p class="note">Written {{ written }} UTC by sdtt.</p>
{% for table in report.tables %}<h2>{{ table.title }}</h2>
<table><thead><tr>{% for cell in table.header %}<th>{{ cell }}</th>{% endfor %}</tr></thead>
<tbody>{% for row in table.rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table>
{% if table.note %}<p class="note">{{ table.note }}</p>{% endif %}
{% endfor %}{% for caption, data in figures %}<figure><img alt="{{ caption }}"
src="data:image/png;base64,{{ data }}"><figcaption>{{ caption }}</figcaption></figure>
{% endfor %}</body></html>
"""


def render_html(report: AlignmentReport) -> str:
    """The report as one standalone page."""
    from jinja2 import Environment

    template = Environment(autoescape=True).from_string(_TEMPLATE)
    figures = [
        (caption, base64.b64encode(path.read_bytes()).decode("ascii"))
        for caption, path in report.figures
    ]
    written = f"{datetime.now(UTC):%Y-%m-%d %H:%M}"
    return template.render(report=report, figures=figures, written=written)


def write_alignment_report(report: AlignmentReport, out: Path) -> list[Path]:
    """Write ``alignment.html`` into ``out``; returns it and the figures."""
    write_text_atomic(out / REPORT_HTML, render_html(report))
    return [out / REPORT_HTML, *(path for _, path in report.figures)]
