"""Fixtures of the serve tests: a real PostgreSQL server for the store tests, started in a
temporary folder, and the local fake of Prolific's API."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.fakes.prolific_fake import TOKEN, ProlificFake, running

if TYPE_CHECKING:
    from sdtt.serve.pgstore import PostgresStore


def _pg_bin() -> Path:
    """PG_BIN, else the newest Debian PostgreSQL's binaries (15 on this project's machines)."""
    if "PG_BIN" in os.environ:
        return Path(os.environ["PG_BIN"])
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))
    return found[-1] if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = _pg_bin()


def _as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run its tools as the 'postgres' user then."""
    if os.geteuid() != 0:
        return command
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PostgresUnavailable(
            "running as root without runuser: cannot start PostgreSQL as 'postgres'"
        )
    return [runuser, "-u", "postgres", "--", *command]


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server can be started here (the reason says why)."""


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A fresh PostgreSQL server on a Unix socket (no TCP), stopped afterwards; yields its
    URL. Used by the tests' fixture and by benchmarks/serve_load.py."""
    if not (PG_BIN / "initdb").exists():
        raise PostgresUnavailable(
            f"PostgreSQL binaries not found in {PG_BIN}: install them with "
            "'apt-get install postgresql' (tests/serve/install_postgres.sh) or set PG_BIN"
        )
    # Not under pytest's temporary folder: its parent is private to this user, and the
    # server may run as 'postgres'.
    folder = Path(tempfile.mkdtemp(prefix="sdtt-pg-"))
    folder.chmod(0o777)
    data = folder / "data"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run = {"check": True, "capture_output": True, "timeout": 120}
    try:
        subprocess.run(
            _as_postgres([str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "sdtt"]),
            **run,  # type: ignore[call-overload]
        )
        options = f"-k {folder} -p {port} -c listen_addresses='' -c fsync=off"
        subprocess.run(
            _as_postgres(
                [
                    str(PG_BIN / "pg_ctl"),
                    "-D",
                    str(data),
                    "-o",
                    options,
                    "-l",
                    str(folder / "log"),
                    "-w",
                    "start",
                ]
            ),
            **run,  # type: ignore[call-overload]
        )
        yield f"postgresql://sdtt@/postgres?host={folder}&port={port}"
    finally:
        subprocess.run(
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A URL of a fresh PostgreSQL server for the session's tests (skipped without one)."""
    try:
        server = postgres_server()
        url = server.__enter__()
    except PostgresUnavailable as reason:
        pytest.skip(str(reason))
    try:
        yield url
    finally:
        server.__exit__(None, None, None)


@pytest.fixture
def pg_store(fresh_database: str) -> Iterator[Callable[[], PostgresStore]]:
    """Opens stores on the test's fresh database (as a server process would); each one is
    closed after the test, passed or failed, so no connection is left for the garbage
    collector to warn about in a later test."""
    from sdtt.serve.pgstore import PostgresStore

    opened: list[PostgresStore] = []

    def open_store() -> PostgresStore:
        opened.append(PostgresStore(fresh_database))
        return opened[-1]

    try:
        yield open_store
    finally:
        for store in opened:
            with contextlib.suppress(Exception):  # closed by the test already, or broken
                store.close()


@pytest.fixture
def fresh_database(postgres_url: str) -> Iterator[str]:
    """An empty database on the test server, for one test."""
    import uuid

    import psycopg

    name = "t" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield postgres_url.replace("/postgres?", f"/{name}?")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProlificFake]:
    """The local fake of Prolific's API, running, with the test token set and two attempts
    a call (so a refused call fails fast); every call it holds is let go at the end."""
    monkeypatch.setenv("SDTT_TEST_PROLIFIC", TOKEN)
    monkeypatch.setenv("SDTT_MAX_ATTEMPTS", "2")
    state = ProlificFake()
    with running(state):
        try:
            yield state
        finally:
            state.release_all()
