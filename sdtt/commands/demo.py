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
from pathlib import Path

import trio
from rich.console import Console
from rich.panel import Panel

from sdtt.commands.common import add_base_url_argument, check_base_url
from sdtt.commands.demo_stages import (
    DEMO_HISTORY_TURNS,
    DemoRun,
    fitting_history_turns,
    run_final_stages,
    stage_burst_reply,
    stage_pseudo_dialogue,
    stage_questionnaire,
    stage_simulated_chat,
)
from sdtt.engine.simulate import run_on_virtual_clock
from sdtt.files import output_folder
from sdtt.lock import output_lock
from sdtt.models.registry import DEFAULT_MODEL
from sdtt.personas.store import DEFAULT_PERSONA, find_persona

DEFAULT_CONTEXT_TOKENS = 8192


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt demo``."""
    parser = subparsers.add_parser(
        "demo",
        help="run the whole pipeline on an example persona (offline by default)",
        description=(
            "Run a whole Self-Directed Turing Test on one persona: the persona bot answers "
            "an opening burst; the model writes a short pseudo-dialogue; a simulated "
            "interrogator chats with the bot (virtual clock); the chat is paired with a "
            "real human chat in a questionnaire (SurveyJS and HTML); an LLM judge answers "
            "it; the pass rate is printed and a report written. Every stage uses the "
            "embedded local model unless --model names another (e.g. openai/gpt-4o, "
            "anthropic/claude-sonnet-4-5, mock/chatty)."
        ),
    )
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"provider/model to use (default {DEFAULT_MODEL})"
    )
    parser.add_argument(
        "--persona",
        default=DEFAULT_PERSONA,
        help=f"persona name or file (default {DEFAULT_PERSONA}; see 'sdtt persona list')",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("transcripts"),
        help="folder for the files the demo writes (default ./transcripts)",
    )
    add_base_url_argument(parser)
    parser.add_argument(
        "--seed",
        type=int,
        default=7,
        help="random seed (default 7); the same seed resumes the files of an earlier run",
    )
    parser.add_argument(
        "--context-tokens",
        type=int,
        default=DEFAULT_CONTEXT_TOKENS,
        help="the model's context window; the persona history is cut to fit it "
        f"(default {DEFAULT_CONTEXT_TOKENS})",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo from parsed arguments."""
    check_base_url(args.base_url, [args.model])
    console = Console(highlight=False)
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
            f"persona [bold]{persona.name}[/] ({persona.info.source}, {persona.info.license})\n"
            f"model   [bold]{args.model}[/]\nout     {args.out}/",
            title="sdtt demo",
        )
    )
    demo.history_turns = fitting_history_turns(persona, args.context_tokens)
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
        console.print(f"  {path}")
    return 0
