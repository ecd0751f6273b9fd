"""Arguments several commands share."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from sdtt.errors import ConfigError
from sdtt.models.registry import PROVIDERS, split_name

BASE_URL_HELP = (
    "endpoint of an OpenAI- or Anthropic-compatible server for every openai/ or "
    "anthropic/ model of the command (vLLM, Ollama, llama.cpp server, LM Studio...); "
    "default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL"
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


def check_base_url(base_url: str | None, models: Iterable[str]) -> None:
    """A :class:`ConfigError` when ``--base-url`` was given but none of ``models`` (the
    command's model names) talks to a server, so the address would go nowhere."""
    names = list(models)
    if base_url is None or any(split_name(name)[0].takes_base_url for name in names):
        return
    servers = ", ".join(f"{p.name}/" for p in PROVIDERS.values() if p.takes_base_url)
    raise ConfigError(
        f"--base-url is for {servers} models, and none of this command's models "
        f"({', '.join(names)}) is one. Leave --base-url out, or name a model served there, "
        "e.g. openai/MODEL."
    )
