"""The parser of ``sdtt generate``; the command runs in :mod:`sdtt.commands.generate`."""

from __future__ import annotations

import argparse
from pathlib import Path

from sdtt.commands import lazy_command
from sdtt.commands.common import (
    DEFAULT_POLL,
    TRANSCRIPTS_DIR,
    add_base_url_argument,
    add_concurrency_argument,
    add_out_argument,
    add_setting,
    setting_default,
)
from sdtt.dialogue.condition import CHAT_MODES
from sdtt.generate.chain import DEFAULT_TURNS_PER_TOPIC
from sdtt.generate.chain_spec import (
    CORPUS_TOPICS,
    Grid,
    PlanSettings,
)
from sdtt.models.registry import DEFAULT_MODEL, PROVIDERS
from sdtt.personas.store import DEFAULT_PERSONA

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
        choices=CHAT_MODES,
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
    add_setting(settings, "--temperature", PlanSettings, "sampling temperature")
    add_setting(settings, "--max-tokens", PlanSettings, "token cap per call")
    add_setting(settings, "--history-turns", PlanSettings, "persona history turns")
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
        "--poll",
        type=float,
        help=f"with --batch: seconds between batch status checks (default {DEFAULT_POLL:g})",
    )
    run_group.add_argument(
        "--dry-run", action="store_true", help="list the chains and their files, call nothing"
    )
    parser.set_defaults(func=lazy_command("sdtt.commands.generate"))


def _listed(values: list[object]) -> str:
    return ", ".join(str(value) for value in values)
