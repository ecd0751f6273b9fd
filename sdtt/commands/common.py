"""Arguments several commands share."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sdtt.errors import ConfigError
from sdtt.files import TRANSCRIPTS_DIR as TRANSCRIPTS_DIR  # the commands take it from here
from sdtt.models.registry import PROVIDERS, split_name

BASE_URL_HELP = (
    "endpoint of an OpenAI- or Anthropic-compatible server for every openai/ or "
    "anthropic/ model of the command (vLLM, Ollama, llama.cpp server, LM Studio...); "
    "default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL"
)


"""Where chats and pseudo-dialogues are written unless ``--out`` says otherwise."""


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


def setting_default(model: type[BaseModel], name: str) -> Any:
    """The default of field ``name`` of a settings model: flags take their defaults from
    the model, so a default is written once."""
    return model.model_fields[name].get_default(call_default_factory=True)


def add_out_argument(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    *,
    folder: bool,
    help: str,
    default: Any = None,
    required: bool = False,
) -> None:
    """Add ``--out``/``-o``: a folder (``DIR``) or a file (``FILE``), which ``help`` must
    say first ("folder ..." or "file ...") so no one has to guess."""
    parser.add_argument(
        "--out",
        "-o",
        type=Path,
        default=default,
        required=required,
        metavar="DIR" if folder else "FILE",
        help=help,
    )


def add_concurrency_argument(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, default: int | None, help: str
) -> None:
    """Add ``--concurrency`` (``args.concurrency``), also accepted as ``--max-concurrency``
    (its older name on ``sdtt generate``, kept out of the help)."""
    parser.add_argument("--concurrency", type=int, default=default, metavar="N", help=help)
    parser.add_argument(
        "--max-concurrency", type=int, dest="concurrency", default=default, help=argparse.SUPPRESS
    )
