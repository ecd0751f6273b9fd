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
    DEFAULT_POLL,
    check_base_url,
    setting_default,
)
from sdtt.commands.console import CliConsole
from sdtt.commands.generate_display import RichProgress, summary_table
from sdtt.commands.generate_parser import DEFAULT_OUT
from sdtt.errors import ConfigError, InputError
from sdtt.files import output_folder
from sdtt.generate.chain import ChainSpec
from sdtt.generate.chain_spec import (
    Grid,
    PlanSettings,
    grid_specs,
    load_topic_list,
    read_plan,
)
from sdtt.generate.runner import ChainProgress, RunOptions, RunReport, chain_path, run_chains
from sdtt.lock import output_lock
from sdtt.models.model import get_model
from sdtt.models.pool import ModelPool
from sdtt.models.registry import DEFAULT_MODEL, base_url_for
from sdtt.models.retry import long_run_policy
from sdtt.personas.store import DEFAULT_PERSONA, find_persona
from sdtt.questionnaires.pairing_topics import live_topic
from sdtt.redact import redact_url, shown


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
    console = CliConsole(highlight=False)
    specs, out = chain_specs(args)
    if args.concurrency is not None and args.concurrency < 1:
        raise ConfigError(f"--concurrency must be at least 1, not {args.concurrency}.")
    if args.poll is not None and not args.batch:
        # Ignoring it would let a user believe the run is batched.
        raise InputError(
            "--poll only applies with --batch.", hint="Add --batch, or leave out --poll."
        )
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
                        poll_interval=DEFAULT_POLL if args.poll is None else args.poll,
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
            f"  sdtt simulate --persona {shown(shlex.quote(first.spec.persona))} "
            f"--model {shown(shlex.quote(first.spec.model))} {shown(server + key)}"
            f"--mode {first.spec.mode} --pseudo {shown(shlex.quote(str(first.path)))} "
            f"--turns 10 --topic {shown(shlex.quote(live_topic(first.spec.seed)))}\n"
            f"and the style drift: sdtt drift {shown(shlex.quote(str(first.path)))}"
        )
    return 1 if report.failed else 0


def _print_failures(console: Console, failed: list[ChainProgress]) -> None:
    if not failed:
        return
    console.print(f"[bold red]{len(failed)} chain(s) failed[/] (rerun the command to resume):")
    for chain in failed:
        console.print(f"  {shown(chain.label)}: {shown(chain.error or 'unknown error')}")
