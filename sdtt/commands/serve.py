"""``sdtt serve``: run a live Turing-test study in the browser for remote participants."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from sdtt.commands.console import CliConsole
from sdtt.commands.serve_parser import ADMIN_TOKEN_ENV
from sdtt.errors import ConfigError, SdttError
from sdtt.redact import shown

if TYPE_CHECKING:
    from hypercorn.config import Config

OWN_KEY_ENV = "SDTT_OWN_KEY"


def run(args: argparse.Namespace) -> int:
    """Run ``sdtt serve`` from parsed arguments."""
    import trio

    from sdtt.serve import read_study

    try:
        import hypercorn  # noqa: F401
        import starlette  # noqa: F401
    except ImportError:
        raise ConfigError(
            "sdtt serve needs the server packages: pip install 'sdtt[serve]'."
        ) from None
    words = list(args.words)
    if words[0] == "export":
        if len(words) != 2 or args.out is None:
            raise ConfigError("use: sdtt serve export STUDY.toml --out DIR")
        return _export(read_study(words[1]), args.out, scrub=args.scrub)
    if len(words) != 1:
        raise ConfigError("use: sdtt serve STUDY.toml (or sdtt serve export STUDY.toml --out DIR)")
    study = read_study(words[0])
    from sdtt.serve import moderation_key

    moderation_key(study)  # a [moderation] key variable not set: say so before starting
    if not 0 < args.port < 65536:
        raise ConfigError(f"--port must be between 1 and 65535, not {args.port}.")
    speed = study.spec.chat.speed
    # The engine and the lobby read only trio's clock, so a faster clock speeds up every
    # delay and timeout alike (for trying a study out; 1 for real participants).
    clock = None
    if speed != 1:
        from trio.testing import MockClock

        clock = MockClock(rate=speed)
    _check_port(args.host, args.port)
    with _serving(study), logging_errors(error_log(study)):
        trio.run(_serve, study, args.host, args.port, clock=clock)
    return 0


@contextlib.contextmanager
def logging_errors(path: Path) -> Iterator[None]:
    """Write the server's own errors (the ``sdtt.serve`` log: a commit the database
    refused, say) to ``path``, the errors log Hypercorn writes too, with their
    tracebacks; an error that ends the server goes there as well as to the terminal."""
    import logging

    log = logging.getLogger("sdtt.serve")
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("[%(asctime)s] [%(levelname)s] %(message)s"))
    log.addHandler(handler)
    try:
        yield
    except SdttError:
        raise  # (bad input: one line on the terminal, as every command says it)
    except Exception:
        log.exception("the server stopped on an error")
        raise
    finally:
        log.removeHandler(handler)
        handler.close()


def _check_port(host: str, port: int) -> None:
    """One clear line when the port is taken (Hypercorn's own was a long traceback)."""
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Hypercorn binds
        try:
            probe.bind((host, port))
        except OSError as error:
            raise ConfigError(
                f"cannot listen on {host}:{port} ({error.strerror}): another program uses "
                "that port; stop it or give another --port."
            ) from None


@contextlib.contextmanager
def _serving(study: object) -> Iterator[None]:
    """Hold the study's SQLite file for as long as this server runs: a second server on
    it would end every live room of the first as cut short by a restart. (A PostgreSQL
    study is meant for several server processes.)"""
    from sdtt.errors import OutputInUseError
    from sdtt.lock import describe_holder, lock_file, output_lock
    from sdtt.serve import Study

    assert isinstance(study, Study)
    if study.spec.storage.url:
        yield
        return
    path = study.store_path
    try:
        with output_lock(path):
            yield
    except OutputInUseError:
        raise ConfigError(
            f"study '{study.name}' ({path}) is already being served by "
            f"{describe_holder(lock_file(path, folder=False))}; stop that server first."
        ) from None


def _export(study: object, out: Path, *, scrub: bool = False) -> int:
    from sdtt.files import output_folder
    from sdtt.serve import Study, export_study, open_store

    assert isinstance(study, Study)
    if not study.spec.storage.url and not study.store_path.exists():
        raise ConfigError(f"no store for study '{study.name}' at {study.store_path} yet.")
    output_folder(out)
    store = open_store(study)
    try:
        summary = export_study(study, store, out, scrub=scrub)
    finally:
        store.close()
    console = CliConsole(highlight=False)
    console.print(
        f"Exported {summary.chats} chat(s), {summary.event_logs} event log(s), "
        f"{summary.judgements} judgement(s) and {summary.beliefs} belief reading(s) "
        f"({summary.traces} belief trace(s)) to {shown(str(out))}"
    )
    if summary.scrubbed is not None:
        console.print(
            f"  scrubbed: {summary.scrubbed} participant text(s) changed; "
            "event logs left out (they repeat the conversation)"
        )
    if summary.points_path is not None:
        console.print(f"  points per participant (for bonuses): {shown(str(summary.points_path))}")
    inputs = shown(shlex.quote(str(summary.judgements_path)))
    if summary.traces:
        inputs += " " + shown(shlex.quote(str(out / "beliefs.jsonl")))
    console.print(f"  score them: sdtt score {inputs} --by turns")
    return 0


async def _serve(study: object, host: str, port: int) -> None:
    import trio
    from hypercorn.trio import serve

    from sdtt.serve import (
        Study,
        StudyServer,
        build_app,
        collect_periodically,
        describe_store,
        open_store,
        serving_collector,
    )

    assert isinstance(study, Study)
    server = StudyServer(
        study,
        open_store(study),
        admin_token=os.environ.get(ADMIN_TOKEN_ENV),
        own_key=os.environ.get(OWN_KEY_ENV),
    )
    server.check()
    config = hypercorn_config(host, port, study.spec.chat.speed, errorlog=error_log(study))
    console = CliConsole(highlight=False)
    # What exists now (modules, the study's personas) lives as long as the server: it is
    # kept out of the collector's scans, which run on a timer (sdtt.serve.collector).
    with serving_collector():
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            await nursery.start(serve, build_app(server), config)
            nursery.start_soon(collect_periodically)
            base = shown(f"http://{host}:{port}")
            name = shown(study.name)
            console.print(f"Serving study '{name}' at {base}")
            console.print(f"  participant link: {base}/s/{name}?PROLIFIC_PID=...")
            console.print(f"  admin page:       {base}/admin/{name}?token={server.admin_token}")
            if study.spec.study.own_person:
                own = f"{base}/s/{name}?pid=own-person&key={server.own_key}"
                console.print(f"  own person's private link: {own}")
            console.print(f"  store:            {shown(describe_store(study))}")
            if study.spec.chat.speed != 1:
                console.print(f"  clock runs {study.spec.chat.speed:g}x faster than real time")


def error_log(study: object) -> Path:
    """The file beside the study spec where the web server logs its errors."""
    from sdtt.serve import Study

    assert isinstance(study, Study)
    return study.folder / f"{study.name}.errors.log"


def hypercorn_config(host: str, port: int, speed: float, *, errorlog: Path | None = None) -> Config:
    """Hypercorn's settings for a study whose trio clock runs ``speed`` times real time;
    its errors (a failed websocket, a bad request) go to ``errorlog``, else nowhere."""
    from hypercorn.config import Config

    from sdtt.serve import MAX_FRAME

    config = Config()
    config.bind = [f"{host}:{port}"]
    config.websocket_max_message_size = MAX_FRAME * 4
    config.errorlog = str(errorlog) if errorlog is not None else None
    # Hypercorn times these on trio's clock, which the study's speed runs faster; they are
    # meant as real seconds. Unscaled, the 5 s keep-alive (also the time a new connection
    # gets to send its first request) was 0.25 s at speed 20: on a loaded machine Chromium's
    # websocket or app.js request often came later and the socket was closed unanswered
    # ("closed before receiving a handshake response", ERR_CONNECTION_RESET).
    for name in (
        "keep_alive_timeout",
        "graceful_timeout",
        "ssl_handshake_timeout",
        "startup_timeout",
        "shutdown_timeout",
    ):
        setattr(config, name, getattr(config, name) * speed)
    return config
