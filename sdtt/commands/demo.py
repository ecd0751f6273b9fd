"""``sdtt demo``: the whole pipeline, as far as it exists, on one persona and one model.

Runs offline on the embedded local model by default. Each stage prints what it did and
writes its files under ``--out``; later stages build on the earlier ones.

The files of one persona, model and seed share a name (``demo-<persona>-<model>-s<seed>``),
so running the same command again resumes: the burst reply and a finished chat are reused
and the pseudo-dialogue goes on from its last record. A new ``--seed`` starts afresh.
Calls are capped (``DEMO_MAX_TOKENS``) and the persona history is shortened, with a note,
when the prompts would not fit ``--context-tokens``: small local servers have 8k or less.
"""

from __future__ import annotations

import argparse

import trio
from rich.panel import Panel

from sdtt.commands.common import check_base_url
from sdtt.commands.console import CliConsole
from sdtt.commands.demo_beliefs import stage_belief_traces
from sdtt.commands.demo_stages import (
    DEMO_HISTORY_TURNS,
    DEMO_REPS,
    DemoRun,
    demo_history_turns,
    stage_burst_reply,
    stage_llm_judge,
    stage_pass_rates,
    stage_pseudo_dialogue,
    stage_questionnaire,
    stage_report,
    stage_simulated_chat,
)
from sdtt.engine.simulate import run_on_virtual_clock
from sdtt.files import output_folder
from sdtt.lock import output_lock
from sdtt.personas.store import find_persona
from sdtt.redact import shown


def run_final_stages(demo: DemoRun) -> None:
    """Stages 5 to 8."""
    judgements = stage_llm_judge(demo)
    stage_pass_rates(demo, judgements)
    stage_report(demo, judgements)
    stage_belief_traces(demo, reps=DEMO_REPS)


def run(args: argparse.Namespace) -> int:
    """Run the demo from parsed arguments."""
    check_base_url(args.base_url, [args.model])
    console = CliConsole(highlight=False)
    persona = find_persona(args.persona)
    output_folder(args.out)
    demo = DemoRun(
        persona=persona,
        model_name=args.model,
        out=args.out,
        seed=args.seed,
        console=console,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
    )
    console.print(
        Panel.fit(
            f"persona [bold]{shown(persona.name)}[/] "
            f"({shown(persona.info.source)}, {shown(persona.info.license)})\n"
            f"model   [bold]{shown(args.model)}[/]\nout     {shown(str(args.out))}/",
            title="sdtt demo",
        )
    )
    demo.history_turns = demo_history_turns(persona, args.context_tokens)
    if demo.history_turns < DEMO_HISTORY_TURNS:
        console.print(
            f"[yellow]note:[/] the persona history is cut from {DEMO_HISTORY_TURNS} to "
            f"{demo.history_turns} turns so the prompts fit a context of "
            f"{args.context_tokens} tokens (--context-tokens)"
        )
    with output_lock(args.out, folder=True):
        trio.run(stage_burst_reply, demo)
        trio.run(stage_pseudo_dialogue, demo)
        run_on_virtual_clock(stage_simulated_chat, demo)
        stage_questionnaire(demo)
        run_final_stages(demo)
    console.print()
    console.print("[bold]Files written[/]")
    for path in demo.files:
        # soft_wrap: each path whole on its line, to copy, however narrow the output.
        console.print(f"  {shown(str(path))}", soft_wrap=True)
    return 0
