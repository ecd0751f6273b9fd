"""Events are committed in batches, yet never after a frame that shows them: what a
browser got is in the study file, read by another connection at that very moment. The
SQLite log is copied into the study file off the event loop, and a failed copy loses
nothing and stops no room."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

import sdtt.serve.event_log as records_module
from sdtt.serve.server import StudyServer
from sdtt.serve.spec import read_study
from sdtt.serve.store import SqliteStore
from tests.serve.helpers import START, Browser, make_server, write_spec

pytestmark = pytest.mark.trio


def committed_engine_events(path: Path) -> list[str]:
    """The engine event types another process would read from the file now."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT data FROM events WHERE kind = 'engine' ORDER BY id")
        return [json.loads(data)["type"] for (data,) in rows]


async def test_a_frame_leaves_only_after_the_events_behind_it_are_committed(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path, turns=3))
    path = server.study.store_path
    typing_on = replies = 0
    behind: list[str] = []

    def check(frame: dict[str, Any]) -> None:
        nonlocal typing_on, replies
        if frame["type"] == "typing" and frame["on"]:
            typing_on += 1
        elif frame["type"] == "message" and frame["from"] == "them":
            replies += 1
        else:
            return
        kinds = committed_engine_events(path)
        if kinds.count("typing_started") < typing_on or kinds.count("message_sent") < replies:
            behind.append(frame["type"])

    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        browser = Browser(server, "P1")
        browser.on_frame = check
        await browser.enter_chat(nursery)
        for turn in range(3):
            await browser.say({"type": "send", "text": f"question {turn}?"})
            await browser.wait(lambda t=turn: len(browser.texts("them")) > t)
            await trio.sleep(30)
        nursery.cancel_scope.cancel()
    assert replies >= 3 and typing_on >= 3
    assert behind == []


async def test_an_event_nobody_sees_is_committed_soon_all_the_same(
    tmp_path: Path, autojump_clock: object
) -> None:
    server = make_server(write_spec(tmp_path))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        server.records.record("note", {"text": "nothing follows this"})
        await trio.sleep(0.001)
        with sqlite3.connect(server.study.store_path) as db:
            assert [row[0] for row in db.execute("SELECT kind FROM events")] == ["note"]
        nursery.cancel_scope.cancel()


def messages_in_file_alone(path: Path, copy: Path) -> int:
    """Messages a copy of the study file holds without its write-ahead log (what a
    researcher who copies just that file gets)."""
    copy.write_bytes(path.read_bytes())
    with sqlite3.connect(copy) as db:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages'").fetchone():
            return 0  # even the tables are still only in the log
        return int(db.execute("SELECT COUNT(*) FROM messages").fetchone()[0])


async def test_checkpoints_taken_over_copy_the_log_only_when_asked(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "study.sqlite3")
    checkpoint = store.background_checkpoints()
    text = "x" * 4000
    for _ in range(1500):  # past the 1,000 pages after which SQLite would copy itself
        store.add_message("room", "witness", text, "2026-01-01T00:00:00")
    assert messages_in_file_alone(store.path, tmp_path / "before.sqlite3") == 0
    checkpoint()
    assert messages_in_file_alone(store.path, tmp_path / "after.sqlite3") == 1500
    store.close()


async def test_a_running_server_copies_the_log_into_the_study_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records_module, "CHECKPOINT_EVERY", 0.01)
    server = make_server(write_spec(tmp_path))
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        server.store.add_message("room", "witness", "hello", "2026-01-01T00:00:00")
        with trio.fail_after(10):  # real time: the copy runs in a worker thread
            while not messages_in_file_alone(server.study.store_path, tmp_path / "copy"):
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()


class FailingCheckpoints(SqliteStore):
    """A study file whose log cannot be copied (as on a disk that fails now and then)."""

    def background_checkpoints(self) -> Callable[[], None]:
        def checkpoint() -> None:
            raise sqlite3.OperationalError("disk I/O error")

        return checkpoint


async def test_a_failed_log_copy_is_recorded_and_the_study_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records_module, "CHECKPOINT_EVERY", 0.01)
    study = read_study(write_spec(tmp_path))
    server = StudyServer(study, FailingCheckpoints(study.store_path), started=START)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        with trio.fail_after(10):  # real time: the copy runs in a worker thread
            while not any(e["kind"] == "store_checkpoint_failed" for e in server.store.events()):
                await trio.sleep(0.01)
        browser = Browser(server, "P1")
        await browser.open(nursery)
        with trio.fail_after(10):
            await browser.wait_phase("consent")
        nursery.cancel_scope.cancel()
    failures = [e for e in server.store.events() if e["kind"] == "store_checkpoint_failed"]
    assert "disk I/O error" in failures[0]["data"]["error"]
