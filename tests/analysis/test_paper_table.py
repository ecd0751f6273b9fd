"""The report's table in the shape of the SDTT paper's Table 1."""

from __future__ import annotations

from pathlib import Path

from sdtt.analysis.metrics import summarise
from sdtt.analysis.report import build_report, render_markdown
from sdtt.analysis.table import judgement_table
from sdtt.tasks.judgements import Judgement
from tests.analysis.helpers import judgement

TITLE = "Pass rates as in the SDTT paper's Table 1"


def cells() -> list[Judgement]:
    found = []
    for model in ("openai/gpt-4o", "eliza/classic"):
        for mode in ("burst", "pingpong"):
            for n, x in ((0, 3), (0, 10), (100, 10)):
                for judge in range(4):
                    right = (judge + n + x + len(model) + len(mode)) % 3 == 0
                    found.append(
                        judgement(
                            f"{model}-{mode}-{n}-{x}",
                            f"h{judge}",
                            right,
                            n=n,
                            x=x,
                            model=model,
                            mode=mode,
                        )
                    )
    return found


def test_the_report_has_the_papers_table_one(tmp_path: Path) -> None:
    records = cells()
    report = build_report(judgement_table(records), tmp_path, reps=20)
    (section,) = [s for s in report.sections if s.title.startswith(TITLE)]
    assert section.header == [
        "judges",
        "model",
        "turn 3: ping-pong",
        "turn 3: burst",
        "turn 10: ping-pong",
        "turn 10: burst",
        "turn 110: ping-pong",
        "turn 110: burst",
    ]
    rows = {(r[0], r[1]): dict(zip(section.header, r, strict=True)) for r in section.rows}
    assert set(rows) == {
        ("Human judges", "openai/gpt-4o"),
        ("Human judges", "eliza/classic (baseline)"),
    }
    # Each cell is the pass rate of that condition alone, with its judgements and pairs.
    for (_, label), row in rows.items():
        model = label.removesuffix(" (baseline)")
        for n, x, turns in ((0, 3, 3), (0, 10, 10), (100, 10, 110)):
            for mode, shown in (("pingpong", "ping-pong"), ("burst", "burst")):
                part = [
                    r
                    for r in records
                    if r.shown.bot
                    and r.shown.bot.model == model
                    and r.shown.bot
                    and r.shown.bot.mode == mode
                    and r.pseudo_turns == n
                    and r.x_turns == x
                ]
                rate = summarise(judgement_table(part), reps=0).pass_rate
                assert row[f"turn {turns}: {shown}"] == f"{100 * rate:.1f}% (n 4 / 1)"
    assert TITLE in render_markdown(report)


def test_a_condition_the_study_lacks_is_a_dash(tmp_path: Path) -> None:
    records = [
        r for r in cells() if (r.shown.bot and r.shown.bot.mode == "burst") or r.x_turns == 3
    ]
    (section,) = [
        s
        for s in build_report(judgement_table(records), tmp_path, reps=0).sections
        if s.title.startswith(TITLE)
    ]
    row = dict(zip(section.header, section.rows[0], strict=True))
    assert row["turn 10: ping-pong"] == "-" and row["turn 10: burst"] != "-"
    assert row["turn 3: ping-pong"].endswith("(n 4 / 1)")


def test_a_condition_whose_judgements_were_all_left_out_says_so(tmp_path: Path) -> None:
    records = cells()
    records = [
        r.model_copy(update={"excluded": True, "exclusion_reason": "tie"})
        if r.x_turns == 3 and r.shown.bot and r.shown.bot.mode == "burst"
        else r
        for r in records
    ]
    report = build_report(judgement_table(records), tmp_path, reps=0)
    (section,) = [s for s in report.sections if s.title.startswith(TITLE)]
    row = dict(zip(section.header, section.rows[0], strict=True))
    assert row["turn 3: burst"] == "- (n 0)"
    # In Markdown the numbers read as written, not escaped ("20\\.0%").
    table = render_markdown(report).split(TITLE)[1].split("\n## ")[0]
    assert "(n 4 / 1)" in table and "\\." not in table
