"""Arguments several commands share."""

from __future__ import annotations

import argparse

BASE_URL_HELP = (
    "endpoint of an OpenAI- or Anthropic-compatible server for --model (vLLM, Ollama, "
    "llama.cpp server, LM Studio...); default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL"
)


def add_base_url_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--base-url`` (passed to the provider of ``--model``; ``None`` when not given)."""
    parser.add_argument("--base-url", default=None, help=BASE_URL_HELP)
