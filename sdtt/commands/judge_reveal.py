"""``sdtt judge --reveal``: an LLM judge's belief after every turn, as belief traces."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import trio

from sdtt.beliefs.traces import BeliefTrace, read_traces
from sdtt.commands.batch_settings import batch_settings
from sdtt.commands.console import CliConsole
from sdtt.commands.failures_last import FailuresLast
from sdtt.commands.judge_parser import DEFAULT_TRACES
from sdtt.errors import InputError
from sdtt.files import output_file
from sdtt.jsonl import JsonlWriter
from sdtt.judges.batched import judge_model, stats_text
from sdtt.judges.reveal import is_model_error, run_reveal_judge, settled_trace_keys
from sdtt.lock import output_lock
from sdtt.models.model import get_model
from sdtt.models.registry import provider_of
from sdtt.redact import shown
from sdtt.tasks.questionnaire import load_key, load_questionnaire


def run_reveal(args: argparse.Namespace) -> int:
    """Reveal a study's pairs to an LLM judge, appending its traces as they come."""
    if args.judge != "paired":
        raise InputError("--reveal shows both chats of a pair; use it with --judge paired.")
    provider = provider_of(args.model)
    if args.logprobs and not (provider is not None and provider.logprobs):
        raise InputError(
            f"{args.model} gives no token log-probabilities.",
            field="--logprobs",
            hint="Leave out --logprobs to record stated beliefs only.",
        )
    console = CliConsole(highlight=False)
    questionnaire = load_questionnaire(args.study)
    key = load_key(args.study, questionnaire)
    out: Path = output_file(args.out or args.study / DEFAULT_TRACES)
    batch = batch_settings(args, out, console)
    existed = out.exists()
    with output_lock(out):
        earlier = read_traces(out) if existed else []

        async def main() -> list[BeliefTrace]:
            model = get_model(args.model, base_url=args.base_url, api_key_env=args.api_key_env)
            async with model, judge_model(model, batch) as (judge, every):
                # With --batch, every pair's turn-k question goes in one job.
                return await run_reveal_judge(
                    judge,
                    questionnaire,
                    key,
                    run=args.run,
                    attempts=args.attempts,
                    concurrency=every or args.concurrency,
                    logprobs=args.logprobs,
                    settled=settled_trace_keys(earlier),
                    on_trace=answers.record,
                )

        judging = console.status(f"{shown(args.model)} is judging turn by turn...")
        with JsonlWriter(out) as writer, judging:
            answers = FailuresLast[BeliefTrace](writer, is_model_error)
            trio.run(main)
            if not answers.every_failed:
                answers.write_held()
        made = answers.made
        if answers.every_failed:
            return answers.nothing_written(out, existed=existed)
    kept = len(settled_trace_keys(earlier))
    missing = sum(p.belief is None for t in made for p in t.points)
    console.print(f"{len(made)} belief trace(s) by {shown(args.model)} -> {shown(str(out))}")
    if kept:
        console.print(f"  resumed: {kept} trace(s) from an earlier run kept, not asked again")
    if missing:
        console.print(f"  [yellow]missing:[/] {missing} belief(s) unreadable or not given")
    if batch is not None:
        console.print(f"  {stats_text(batch.stats)}")
    console.print(f"Score them with: sdtt score {shown(shlex.quote(str(out)))}")
    return 0
