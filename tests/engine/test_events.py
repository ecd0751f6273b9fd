"""Event logs: what a reader gets back, and what it refuses with a located message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
import trio.testing

from sdtt.engine.events import ListSink, read_event_log
from sdtt.engine.session import SessionSettings, open_session
from sdtt.errors import InputError
from tests.engine.helpers import START, reply, scripted_bot


async def _session_log(path: Path) -> ListSink:
    bot, _ = scripted_bot(reply("hi", "what's up"))
    sink = ListSink()
    async with open_session(
        bot, SessionSettings(seed=4), sink=sink, log_path=path, started=START, meta={"k": 1}
    ) as session:
        await session.send_user_message("hello")
        await session.wait_idle()
    return sink


@pytest.mark.trio
async def test_log_header_holds_settings_and_events_round_trip(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    path = tmp_path / "s.events.jsonl"
    sink = await _session_log(path)
    replay = read_event_log(path)
    assert replay.header.settings["seed"] == 4
    assert replay.header.meta == {"k": 1}
    assert replay.header.started == START
    assert replay.events == sink.events
    assert [e.seq for e in replay.events] == list(range(1, len(sink.events) + 1))


@pytest.mark.trio
async def test_a_log_cut_off_by_a_crash_still_replays_what_it_holds(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    path = tmp_path / "s.events.jsonl"
    await _session_log(path)
    lines = path.read_text().splitlines()
    cut = tmp_path / "cut.events.jsonl"
    cut.write_text("\n".join(lines[:-4]) + "\n" + lines[-4][:20])
    replay = read_event_log(cut)
    assert not replay.complete
    assert [m.text for m in replay.transcript.messages] == ["hello", "hi"]


def test_a_file_that_is_not_an_event_log_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"type": "transcript", "id": "a"}\n')
    with pytest.raises(InputError, match=r"x\.jsonl:1 field 'type'.*not an sdtt event log"):
        read_event_log(path)


def test_a_newer_log_version_asks_for_an_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"type": "session", "version": 99}) + "\n")
    with pytest.raises(InputError, match="Upgrade sdtt"):
        read_event_log(path)
    path.write_text(json.dumps({"type": "session"}) + "\n")
    with pytest.raises(InputError, match="needs an integer version"):
        read_event_log(path)


def test_a_bad_event_names_its_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    header = {"type": "session", "version": 1, "id": "a", "started": "2024-05-01T12:00:00Z"}
    header["settings"] = {}
    event = {"type": "message_sent", "seq": 1, "clock": "soon", "wall": "2024-05-01T12:00:00Z"}
    path.write_text(json.dumps(header) + "\n" + json.dumps(event) + "\n")
    with pytest.raises(InputError, match=r"x\.jsonl:2 field 'message_sent\.clock'"):
        read_event_log(path)
