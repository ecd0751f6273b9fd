"""Arguments several commands share."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sdtt.errors import ConfigError
from sdtt.files import TRANSCRIPTS_DIR as TRANSCRIPTS_DIR  # the commands take it from here
from sdtt.models.registry import PROVIDERS, Provider, split_name

EXIT_NOTHING_USABLE = 1
"""Exit status of a run whose model calls all failed, so it made nothing usable."""


def _servers() -> list[Provider]:
    """The providers whose server ``--base-url`` can change, in registry order."""
    return [provider for provider in PROVIDERS.values() if provider.takes_base_url]


def base_url_help() -> str:
    """The help of ``--base-url``: the providers it applies to and their variables."""
    servers = _servers()
    names = " or ".join(f"{provider.name}/" for provider in servers)
    variables = " / ".join(f"${p.base_url_env}" for p in servers if p.base_url_env)
    return (
        f"endpoint of a compatible server for every {names} model of the command (vLLM, "
        f"Ollama, llama.cpp server, LM Studio...); default {variables}"
    )


def where_keys_go() -> str:
    """``OPENAI_API_KEY is sent only to api.openai.com, ANTHROPIC_API_KEY only to
    api.anthropic.com``: each keyed provider of the registry, its variable and hosts."""
    parts = [
        f"{provider.key_env} {'is sent ' if not number else ''}only to "
        + ", ".join(sorted(provider.own_hosts))
        for number, provider in enumerate(p for p in PROVIDERS.values() if p.key_env)
    ]
    return ", ".join(parts)


def api_key_env_help() -> str:
    """The help of ``--api-key-env``."""
    return (
        "environment variable holding the API key for --base-url (e.g. MY_SERVER_KEY). "
        f"{where_keys_go()}: another --base-url gets no key unless you name one here"
    )


def add_base_url_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--base-url`` and ``--api-key-env`` (passed to the provider of ``--model``).

    Both are ``None`` when not given.
    """
    parser.add_argument("--base-url", default=None, help=base_url_help())
    parser.add_argument("--api-key-env", metavar="NAME", default=None, help=api_key_env_help())


def check_base_url(base_url: str | None, models: Iterable[str]) -> None:
    """A :class:`ConfigError` when ``--base-url`` was given but none of ``models`` (the
    command's model names) talks to a server, so the address would go nowhere."""
    names = list(models)
    if base_url is None or any(split_name(name)[0].takes_base_url for name in names):
        return
    servers = _servers()
    raise ConfigError(
        f"--base-url is for {', '.join(f'{p.name}/' for p in servers)} models, and none of "
        f"this command's models ({', '.join(names)}) is one. Leave --base-url out, or name "
        f"a model served there, e.g. {servers[0].name}/MODEL."
    )


def setting_default(model: type[BaseModel], name: str) -> Any:
    """The default of field ``name`` of a settings model: flags take their defaults from
    the model, so a default is written once."""
    return model.model_fields[name].get_default(call_default_factory=True)


def add_setting(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    flag: str,
    model: type[BaseModel],
    help: str,
) -> None:
    """Add ``flag`` for the number field of the same name of a settings model, with the
    model's default (so it is written once) and its type, and "(default ...)" after
    ``help``."""
    default = setting_default(model, flag.removeprefix("--").replace("-", "_"))
    kind = type(default)
    shown = f"{default:g}" if kind is float else str(default)
    parser.add_argument(flag, type=kind, default=default, help=f"{help} (default {shown})")


def add_actions(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    dest: str,
    metavar: str = "ACTION",
    parser_class: type[argparse.ArgumentParser] | None = None,
    **options: Any,
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """Add command ``name`` made of actions (``sdtt persona list``, ``sdtt align build``)
    and return the subparsers its actions go in; ``options`` go to ``add_parser``.

    The command given without an action prints its help, listing the actions, and exits
    with 2, the exit status of every other usage error."""
    parser = subparsers.add_parser(name, **options)
    kwargs: dict[str, Any] = {"dest": dest, "metavar": metavar}
    if parser_class is not None:
        kwargs["parser_class"] = parser_class
    actions = parser.add_subparsers(**kwargs)
    parser.set_defaults(func=lambda _args: usage_help(parser))
    return actions


def usage_help(parser: argparse.ArgumentParser) -> int:
    """Print the help of a command given without its action (or format); exit status 2."""
    parser.print_help()
    return 2


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


DEFAULT_POLL = 60.0
DEFAULT_BATCH_RETRIES = 2


def add_batch_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--batch``, ``--poll`` and ``--batch-retries`` (the LLM judges' batch mode).

    ``--poll`` and ``--batch-retries`` default to None, so that giving either without
    ``--batch`` can be refused (:func:`sdtt.commands.batch_settings.batch_settings`
    fills in :data:`DEFAULT_POLL` and :data:`DEFAULT_BATCH_RETRIES`)."""
    able = ", ".join(f"{p.name}/" for p in PROVIDERS.values() if p.batch)
    parser.add_argument(
        "--batch",
        action="store_true",
        help=f"send the calls through the batch API of the model's provider ({able} "
        "models): half price, but each round of calls may take hours; a killed run "
        "picks its jobs up again when rerun",
    )
    parser.add_argument(
        "--poll",
        type=float,
        help=f"with --batch: seconds between job status checks (default {DEFAULT_POLL:g})",
    )
    parser.add_argument(
        "--batch-retries",
        type=int,
        metavar="N",
        help="with --batch: new jobs a request that came back without an answer (an error, "
        "a job that expired or was cancelled) is sent in, before it is recorded as a "
        f"model error (default {DEFAULT_BATCH_RETRIES})",
    )


MODEL_ARGUMENTS = ("model", "interrogator")
"""Attributes of parsed arguments that hold model names (a name or a list of names)."""
PERSONA_ARGUMENTS = ("persona",)
"""Attributes of parsed arguments that hold persona names or files."""


def check_names(args: argparse.Namespace) -> None:
    """Check every model and persona a command was given before it does any work.

    A mistyped model name was caught 17 s into ``sdtt simulate`` and a mistyped persona
    4 s in, after the models and corpus had loaded: here they are one error line at once.
    """
    for name in _given(args, MODEL_ARGUMENTS):
        from sdtt.models.registry import check_model

        check_model(name)
    personas = _given(args, PERSONA_ARGUMENTS)
    if personas and getattr(args, "command", None) != "persona":
        from sdtt.personas.store import locate_persona

        for persona in personas:
            locate_persona(persona)


def _given(args: argparse.Namespace, names: Iterable[str]) -> list[str]:
    found: list[str] = []
    for name in names:
        value = getattr(args, name, None)
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found += [item for item in value if isinstance(item, str)]
    return found
