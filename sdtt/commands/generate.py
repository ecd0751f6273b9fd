"""``sdtt generate``: write self-directed pseudo-dialogues for a grid or a plan of chains.

Each chain (persona x model x mode x seed x turns) writes ``<out>/<chain id>.jsonl``.
Chains run concurrently within each provider's concurrency limit; a chain's own calls
run one after another. Stop it at any moment and run the same command again: every
chain resumes where its file ends. With ``--batch`` the chains' next calls go to the
providers' batch APIs together, at half price but with hours of latency per step.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import trio
from rich.console import Console

from sdtt.commands.common import (
    TRANSCRIPTS_DIR,
    add_base_url_argument,
    add_concurrency_argument,
    add_out_argument,
    check_base_url,
    setting_default,
)
from sdtt.commands.generate_display import RichProgress, summary_table
from sdtt.errors import ConfigError
from sdtt.files import output_folder
from sdtt.generate.chain_spec import (
    CORPUS_TOPICS,
    Grid,
    PlanSettings,
    grid_specs,
    load_topic_list,
    read_plan,
)
from sdtt.generate.records import DEFAULT_TURNS_PER_TOPIC, MODES, ChainSpec
from sdtt.generate.runner import ChainProgress, RunOptions, RunReport, chain_path, run_chains
from sdtt.lock import output_lock
from sdtt.models.model import get_model
from sdtt.models.pool import ModelPool
from sdtt.models.registry import DEFAULT_MODEL, PROVIDERS, base_url_for
from sdtt.models.retry import long_run_policy
from sdtt.personas.store import DEFAULT_PERSONA, find_persona
from sdtt.questionnaires.topics import live_topic
from sdtt.redact import redact_url, shown

DEFAULT_OUT = TRANSCRIPTS_DIR / "pseudo"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt generate``."""
    parser = subparsers.add_parser(
        "generate",
        description=(
            "Let models write pseudo-dialogues between a persona and another human, topic "
            "after topic (the paper's Algorithm 1): every combination of --persona, "
            "--model, --mode, --seed and --turns is one chain, or give a plan file with "
            "--plan. Rerun the same command after an interruption to resume. Then run "
            "'sdtt simulate --pseudo FILE' for the live turns."
        ),
        epilog=(
            "Plan file (TOML): topics = 'chitchat'; turns_per_topic = 10; a [grid] table "
            "with personas, models, modes, seeds, turns lists; optional [settings] "
            "(style, temperature, max_tokens, history_turns, timeout) and [[chain]] "
            "entries (persona, model, mode, seed, turns, topics)."
        ),
    )
    parser.add_argument("--plan", type=Path, help="plan file (TOML or JSON) instead of a grid")
    grid = parser.add_argument_group("grid (each option may be repeated)")
    grid.add_argument(
        "--persona",
        action="append",
        help=f"persona name or file (default {DEFAULT_PERSONA})",
    )
    grid.add_argument("--model", action="append", help=f"provider/model (default {DEFAULT_MODEL})")
    grid.add_argument(
        "--mode",
        action="append",
        choices=MODES,
        help=f"burst or pingpong (default {_listed(setting_default(Grid, 'modes'))})",
    )
    grid.add_argument(
        "--seed",
        action="append",
        type=int,
        help=f"seed (default {_listed(setting_default(Grid, 'seeds'))})",
    )
    grid.add_argument(
        "--turns",
        action="append",
        type=int,
        help=f"pseudo turns per chain (default {_listed(setting_default(Grid, 'turns'))})",
    )
    grid.add_argument(
        "--topics",
        default=CORPUS_TOPICS,
        help=f"topic file, or a list name in ./topics (default {CORPUS_TOPICS})",
    )
    grid.add_argument(
        "--turns-per-topic",
        type=int,
        default=DEFAULT_TURNS_PER_TOPIC,
        help=f"turns written per topic (default {DEFAULT_TURNS_PER_TOPIC})",
    )
    settings = parser.add_argument_group("settings")
    settings.add_argument(
        "--style",
        choices=("auto", "whole", "lines"),
        default=setting_default(PlanSettings, "style"),
        help="whole: a topic's turns in one call (chat models); lines: one message per "
        "call (completion models); auto picks lines for local models (default "
        f"{setting_default(PlanSettings, 'style')})",
    )
    temperature = setting_default(PlanSettings, "temperature")
    settings.add_argument(
        "--temperature",
        type=float,
        default=temperature,
        help=f"sampling temperature (default {temperature:g})",
    )
    max_tokens = setting_default(PlanSettings, "max_tokens")
    settings.add_argument(
        "--max-tokens",
        type=int,
        default=max_tokens,
        help=f"token cap per call (default {max_tokens})",
    )
    history_turns = setting_default(PlanSettings, "history_turns")
    settings.add_argument(
        "--history-turns",
        type=int,
        default=history_turns,
        help=f"persona history turns (default {history_turns})",
    )
    run_group = parser.add_argument_group("running")
    add_out_argument(
        run_group, folder=True, help=f"folder for the chain files (default {DEFAULT_OUT})"
    )
    add_concurrency_argument(
        run_group, default=None, help="calls in flight per provider (default per provider)"
    )
    add_base_url_argument(run_group)
    run_group.add_argument(
        "--batch",
        action="store_true",
        help="send the calls through the batch API of the model's provider ("
        + ", ".join(f"{p.name}/" for p in PROVIDERS.values() if p.batch)
        + " models): half price, but each step may take hours",
    )
    run_group.add_argument(
        "--poll", type=float, default=60.0, help="seconds between batch status checks"
    )
    run_group.add_argument(
        "--dry-run", action="store_true", help="list the chains and their files, call nothing"
    )
    parser.set_defaults(func=run)


def _listed(values: list[object]) -> str:
    return ", ".join(str(value) for value in values)


def chain_specs(args: argparse.Namespace) -> tuple[list[ChainSpec], Path]:
    """The chains the arguments ask for, and the output folder."""
    if args.plan is not None:
        grid_given = any(
            getattr(args, name) for name in ("persona", "model", "mode", "seed", "turns")
        )
        if grid_given:
            raise ConfigError(
                "Give either --plan or grid options (--persona, --model, ...), not both."
            )
        plan = read_plan(args.plan)
        specs = plan.specs(base=args.plan.parent)
        out = args.out or (Path(plan.out) if plan.out else DEFAULT_OUT)
        return specs, out
    settings = PlanSettings(
        style=args.style,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        history_turns=args.history_turns,
    )
    specs = grid_specs(
        personas=args.persona or [DEFAULT_PERSONA],
        models=args.model or [DEFAULT_MODEL],
        modes=args.mode or setting_default(Grid, "modes"),
        seeds=args.seed or setting_default(Grid, "seeds"),
        turns=args.turns or setting_default(Grid, "turns"),
        topics=load_topic_list(args.topics),
        turns_per_topic=args.turns_per_topic,
        settings=settings,
    )
    return specs, args.out or DEFAULT_OUT


def _interrupted(group: BaseExceptionGroup[BaseException]) -> bool:
    return group.subgroup(KeyboardInterrupt) is not None


def run(args: argparse.Namespace) -> int:
    """Run the chains, show progress, print a summary; exit 1 if a chain failed."""
    console = Console(highlight=False)
    specs, out = chain_specs(args)
    if args.concurrency is not None and args.concurrency < 1:
        raise ConfigError(f"--concurrency must be at least 1, not {args.concurrency}.")
    if args.dry_run:
        for spec in specs:
            console.print(f"{shown(str(chain_path(out, spec)))}  ({spec.total_turns} turns)")
        console.print(f"{len(specs)} chain(s); nothing was called (--dry-run).")
        return 0
    output_folder(out)
    check_base_url(args.base_url, {spec.model for spec in specs})
    model_for = ModelPool(
        lambda name: get_model(
            name,
            retry=long_run_policy(),
            max_concurrency=args.concurrency,
            base_url=base_url_for(name, args.base_url),
            api_key_env=args.api_key_env,
        )
    )

    console.print(
        f"[bold]sdtt generate[/]: {len(specs)} chain(s), "
        f"{sum(spec.total_turns for spec in specs)} turns, into {shown(str(out))}/"
    )

    async def main() -> RunReport:
        try:
            with RichProgress(console, batch=args.batch) as display:
                if args.batch:
                    from sdtt.generate.batch_api import run_chains_batched

                    return await run_chains_batched(
                        specs,
                        out,
                        personas=find_persona,
                        models=model_for,
                        display=display,
                        poll_interval=args.poll,
                    )
                return await run_chains(
                    specs,
                    out,
                    personas=find_persona,
                    models=model_for,
                    display=display,
                    options=RunOptions(),
                )
        finally:
            await model_for.aclose()

    try:
        with output_lock(out, folder=True):
            report = trio.run(main)
    except BaseExceptionGroup as group:
        if _interrupted(group):
            raise KeyboardInterrupt from None
        raise
    console.print(summary_table(report.chains, batch=args.batch))
    console.print(f"chain files in {shown(str(out))}/ (one per chain, named by its id)")
    _print_failures(console, report.failed)
    finished = [chain for chain in report.chains if chain.status == "done" and chain.spec]
    if finished:
        first = finished[0]
        assert first.spec is not None
        key = f"--api-key-env {shlex.quote(args.api_key_env)} " if args.api_key_env else ""
        # The same server, or the suggested command would go to the provider's own API;
        # any password in its URL stays hidden (the user types it back).
        server = f"--base-url {shlex.quote(redact_url(args.base_url))} " if args.base_url else ""
        console.print(
            "Next, the live turns on top of a pseudo-dialogue, e.g.:\n"
            f"  sdtt simulate --persona {shown(first.spec.persona)} "
            f"--model {shown(first.spec.model)} {shown(server + key)}--mode {first.spec.mode} "
            f"--pseudo {shown(str(first.path))} --turns 10 "
            f"--topic {shown(shlex.quote(live_topic(first.spec.seed)))}\n"
            f"and the style drift: sdtt drift {shown(str(first.path))}"
        )
    return 1 if report.failed else 0


def _print_failures(console: Console, failed: list[ChainProgress]) -> None:
    if not failed:
        return
    console.print(f"[bold red]{len(failed)} chain(s) failed[/] (rerun the command to resume):")
    for chain in failed:
        console.print(f"  {shown(chain.label)}: {shown(chain.error or 'unknown error')}")
