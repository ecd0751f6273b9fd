"""The last stages of ``sdtt demo``: an LLM judge, the pass-rate table and the report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import trio
from rich.markup import escape

from sdtt.analysis.format import number, percent
from sdtt.analysis.metrics import summarise
from sdtt.analysis.report import build_report, write_report
from sdtt.analysis.table import judgement_table
from sdtt.analysis.tells import compare, study_sides
from sdtt.judges.llm import run_llm_judge
from sdtt.models.registry import get_model
from sdtt.questionnaires.judgements import Judgement, write_judgements
from sdtt.questionnaires.questionnaire import load_key, load_questionnaire

if TYPE_CHECKING:
    from sdtt.commands.demo import DemoRun

DEMO_REPS = 200
"""Bootstrap replicates in the demo: a handful of judgements needs no more."""


def study_folder(demo: DemoRun) -> Path:
    """Where the questionnaire stage wrote the study."""
    return demo.out / f"{demo.stem}-questionnaire"


def stage_llm_judge(demo: DemoRun) -> list[Judgement]:
    """Stage 5: the demo's model judges the questionnaire (both orders of every pair)."""
    console = demo.console
    console.rule("5. LLM judge: which chat is the AI? (both orders of every pair)")
    folder = study_folder(demo)
    if not (folder / "answer-key.json").exists():
        console.print("[yellow]no questionnaire was built, so there is nothing to judge[/]")
        return []
    questionnaire = load_questionnaire(folder)
    key = load_key(folder, questionnaire)

    async def judge() -> list[Judgement]:
        async with get_model(
            demo.model_name, base_url=demo.base_url, api_key_env=demo.api_key_env
        ) as model:
            return await run_llm_judge(model, questionnaire, key, kind="paired")

    with console.status(f"{demo.model_name} is judging the pairs..."):
        judgements = trio.run(judge)
    path = folder / "judgements.jsonl"
    write_judgements(path, judgements)
    for judgement in judgements:
        order = judgement.condition.get("order", "")
        if judgement.excluded:
            verdict = f"[yellow]{escape(judgement.exclusion_reason or '')}[/]"
        else:
            verdict = "[green]found the AI[/]" if judgement.correct else "[red]fooled[/]"
        console.print(
            f"  pair {judgement.pair_id} ({judgement.pair_kind}, {order} order): "
            f"answered {judgement.choice or '-'} -> {verdict}"
        )
    demo.files.append(path)
    return judgements


def stage_pass_rates(demo: DemoRun, judgements: list[Judgement]) -> None:
    """Stage 6: the X-Turn Pass Rate table of the LLM judgements."""
    console = demo.console
    console.rule("6. Pass rate")
    if not judgements:
        return
    from sdtt.commands.score import print_summary

    frame = judgement_table(judgements)
    summary = summarise(frame, reps=DEMO_REPS, seed=demo.seed)
    print_summary(console, "LLM judge, test pairs", pd.DataFrame([summary.row()]), None)
    console.print(
        f"[dim]pass rate {percent(summary.pass_rate)} over {summary.judgements} usable "
        f"judgement(s); position bias {number(summary.position_bias)} (share naming "
        "chat 1); "
        "with one test pair these numbers only show the machinery[/]"
    )


def stage_report(demo: DemoRun, judgements: list[Judgement]) -> None:
    """Stage 7: the HTML and Markdown report with figures."""
    console = demo.console
    console.rule("7. Report")
    if not judgements:
        return
    folder = study_folder(demo)
    questionnaire = load_questionnaire(folder)
    tells = compare(*study_sides(questionnaire, load_key(folder, questionnaire)))
    out = demo.out / f"{demo.stem}-report"
    with console.status("drawing figures..."):
        report = build_report(
            judgement_table(judgements),
            out,
            title=f"sdtt demo: {demo.persona.name} on {demo.model_name}",
            tells=tells,
            reps=DEMO_REPS,
        )
        files = write_report(report, out)
    console.print(f"open {escape(str(files[0]))} in a browser")
    demo.files.extend(files)


def run_final_stages(demo: DemoRun) -> None:
    """Stages 5 to 8."""
    from sdtt.commands.demo_beliefs import stage_belief_traces

    judgements = stage_llm_judge(demo)
    stage_pass_rates(demo, judgements)
    stage_report(demo, judgements)
    stage_belief_traces(demo, reps=DEMO_REPS)
