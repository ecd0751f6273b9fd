"""``sdtt serve``: run a live Turing-test study in the browser for remote participants."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from sdtt.errors import ConfigError

ADMIN_TOKEN_ENV = "SDTT_ADMIN_TOKEN"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``sdtt serve``."""
    parser = subparsers.add_parser(
        "serve",
        help="run a live chat study in the browser (sdtt serve STUDY.toml)",
        description=(
            "Serve a study spec: participants open /s/<name>?PROLIFIC_PID=... (or ?pid=...), "
            "consent, wait in a lobby, chat with the persona bot or a person, and give a "
            "verdict. Everything is kept in the study's SQLite file as it happens. The admin "
            f"token is printed at start (or taken from ${ADMIN_TOKEN_ENV})."
        ),
    )
    parser.add_argument("study", type=Path, metavar="STUDY", help="study spec (.toml)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``sdtt serve`` from parsed arguments."""
    import trio

    from sdtt.serve.spec import read_study

    try:
        import hypercorn  # noqa: F401
        import starlette  # noqa: F401
    except ImportError:
        raise ConfigError(
            "sdtt serve needs the server packages: pip install 'sdtt[serve]'."
        ) from None
    study = read_study(args.study)
    if not 0 < args.port < 65536:
        raise ConfigError(f"--port must be between 1 and 65535, not {args.port}.")
    trio.run(_serve, study, args.host, args.port)
    return 0


async def _serve(study: object, host: str, port: int) -> None:
    import trio
    from hypercorn.config import Config
    from hypercorn.trio import serve

    from sdtt.serve.app import build_app
    from sdtt.serve.protocol import MAX_FRAME
    from sdtt.serve.server import StudyServer
    from sdtt.serve.spec import Study
    from sdtt.serve.store import SqliteStore

    assert isinstance(study, Study)
    server = StudyServer(
        study, SqliteStore(study.store_path), admin_token=os.environ.get(ADMIN_TOKEN_ENV)
    )
    server.check()
    config = Config()
    config.bind = [f"{host}:{port}"]
    config.websocket_max_message_size = MAX_FRAME * 4
    config.errorlog = None
    console = Console(highlight=False)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        await nursery.start(serve, build_app(server), config)
        base = f"http://{host}:{port}"
        console.print(f"Serving study '{escape(study.name)}' at {base}")
        console.print(f"  participant link: {base}/s/{study.name}?PROLIFIC_PID=...")
        console.print(f"  admin page:       {base}/admin/{study.name}  token: {server.admin_token}")
        console.print(f"  store:            {escape(str(study.store_path))}")
