"""Arguments several commands share."""

from __future__ import annotations

import argparse

BASE_URL_HELP = (
    "endpoint of an OpenAI- or Anthropic-compatible server for --model (vLLM, Ollama, "
    "llama.cpp server, LM Studio...); default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL"
)


API_KEY_ENV_HELP = (
    "environment variable holding the API key for --base-url (e.g. MY_SERVER_KEY). "
    "OPENAI_API_KEY / ANTHROPIC_API_KEY are sent only to api.openai.com / "
    "api.anthropic.com: another --base-url gets no key unless you name one here"
)


def add_base_url_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--base-url`` and ``--api-key-env`` (passed to the provider of ``--model``).

    Both are ``None`` when not given.
    """
    parser.add_argument("--base-url", default=None, help=BASE_URL_HELP)
    parser.add_argument("--api-key-env", metavar="NAME", default=None, help=API_KEY_ENV_HELP)
