"""No participant can stop a study: a real ``sdtt serve`` on each store (SQLite and
PostgreSQL) is sent frames holding text no store can keep (a lone UTF-16 surrogate, which
once ended a PostgreSQL server and every room on it) and, property-based, arbitrary
Unicode and arbitrary JSON in every field of every frame type of the protocol. Each is
refused or taken, the connection stays, and the other rooms keep chatting."""

from __future__ import annotations

import contextlib
import json
import types
import typing
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from sdtt.commands.serve import error_log, logging_errors
from sdtt.serve.pgstore import PostgresStore
from sdtt.serve.protocol import ClientFrame
from sdtt.serve.server import StudyServer
from sdtt.serve.spec import read_study
from sdtt.serve.wsclient import WebSocketClient
from tests.serve.helpers import START, Browser, person_room, write_spec
from tests.serve.process import free_port, start_server, stop_server
from tests.serve.test_postgres import real_time_spec

WAIT = 60.0
"""Seconds a test waits at most for a frame it expects (a loaded machine is slow)."""
SURROGATE = "bad \ud800 surrogate"
EXAMPLES = 20
"""Frames tried per frame type (and store): 240 a store, in well under a minute."""


class Page:
    """A participant's page on a real websocket: every frame received is kept."""

    def __init__(self, client: WebSocketClient, pid: str) -> None:
        self.client = client
        self.pid = pid
        self.frames: list[dict[str, Any]] = []
        self._changed = trio.Event()

    async def read(self) -> None:
        """Keep what arrives, until the connection or the test ends (then closed)."""
        try:
            while (frame := await self.client.receive()) is not None:
                self.frames.append(frame)
                self._changed.set()
                self._changed = trio.Event()
            self._changed.set()
        finally:
            with trio.CancelScope(shield=True):
                await self.client.aclose()

    async def wait(self, found: Callable[[dict[str, Any]], bool], after: int = 0) -> dict[str, Any]:
        """The first frame from index ``after`` on that ``found`` matches (waited for)."""
        with trio.fail_after(WAIT):
            while True:
                for frame in self.frames[after:]:
                    if found(frame):
                        return frame
                assert not self.client.closed, f"{self.pid}: the server closed the connection"
                await self._changed.wait()

    async def say(self, frame: dict[str, Any]) -> None:
        await self.client.send(frame)

    def role(self) -> str | None:
        roles = [f.get("role") for f in self.frames if f.get("phase") == "chat"]
        return roles[-1] if roles else None


@contextlib.asynccontextmanager
async def study_server(spec: Path) -> AsyncIterator[tuple[int, Any]]:
    port = free_port()
    process = start_server(spec, port)
    try:
        yield port, process
    finally:
        stop_server(process)


async def enter(nursery: trio.Nursery, port: int, pid: str) -> Page:
    """``pid`` opens the study (the consent page)."""
    client = await WebSocketClient.connect("127.0.0.1", port, "/ws/pilot")
    page = Page(client, pid)
    nursery.start_soon(page.read)
    await page.say({"type": "join", "pid": pid})
    await page.wait(lambda f: f["type"] == "joined")
    return page


async def open_room(nursery: trio.Nursery, port: int, pids: tuple[str, str]) -> tuple[Page, Page]:
    """Two people enter the study; once their room opens, (interrogator, witness)."""
    pages = []
    for pid in pids:
        page = await enter(nursery, port, pid)
        await page.say({"type": "consent"})
        await page.wait(lambda f: f.get("phase") == "lobby")
        pages.append(page)
    for page in pages:
        await page.wait(lambda f: f.get("phase") == "chat")
    first, second = pages
    return (first, second) if first.role() == "interrogator" else (second, first)


async def chats(interrogator: Page, witness: Page, text: str) -> None:
    """``text`` from the interrogator reaches the witness: the room works."""
    start = len(witness.frames)
    await interrogator.say({"type": "send", "text": text})
    await witness.wait(lambda f: f["type"] == "message" and f["text"] == text, after=start)


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A study of person rooms with many turns and no time limit, on each store."""
    path = write_spec(tmp_path, turns=1000, share=1.0, timeout=100_000)
    text = path.read_text().replace("min_interval = 0.5", "min_interval = 0")
    text = text.replace("[chat]\n", "[chat]\ntime_limit = 0\n")
    if request.param == "postgres":
        url = request.getfixturevalue("fresh_database")
        text += f'\n[storage]\nurl = "{url}"\nlease = 100000\n'
    path.write_text(text)
    return path


@pytest.mark.trio
async def test_a_lone_surrogate_is_refused_and_every_room_lives_on(spec: Path) -> None:
    async with study_server(spec) as (port, process), trio.open_nursery() as nursery:
        asker, answerer = await open_room(nursery, port, ("P1", "P2"))
        other = await open_room(nursery, port, ("P3", "P4"))
        start = len(asker.frames)
        await asker.say({"type": "send", "text": SURROGATE})
        refused = await asker.wait(lambda f: f["type"] == "refused", after=start)
        assert "lone surrogate" in refused["message"] and "'text'" in refused["message"]
        assert not refused.get("fatal")
        await chats(asker, answerer, "still here?")  # the same connection, the same room
        await chats(*other, "and the other room?")
        assert process.poll() is None
        assert SURROGATE not in json.dumps([f for f in answerer.frames], ensure_ascii=False)
        nursery.cancel_scope.cancel()


# ------------------------------------------------------------------ every field, fuzzed


def frame_models() -> list[type[BaseModel]]:
    """Every frame type a browser may send, from the protocol itself."""
    union = typing.get_args(ClientFrame)[0]
    return list(typing.get_args(union))


def _typed(annotation: Any, bounds: tuple[int, int] = (-1, 3)) -> st.SearchStrategy[Any]:
    """Values of a field's own type, mostly within its bounds (so a frame often gets past
    its checks and into the server), with any text at all, surrogates included."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(_typed(arg, bounds) for arg in args))
    if origin is dict:
        return st.dictionaries(_typed(args[0]), _typed(args[1]), max_size=3)
    if annotation is type(None):
        return st.none()
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return st.integers(*bounds)  # (any number at all comes as "any JSON")
    if annotation is float:
        return st.floats()  # NaN and infinities too (json.dumps writes NaN, Infinity)
    assert annotation is str, annotation
    return ANY_TEXT.filter(str.strip)


def _bounds(field: FieldInfo) -> tuple[int, int]:
    """The range a number field takes (ge, le), if it says."""
    low = next((m.ge for m in field.metadata if hasattr(m, "ge")), -1)
    high = next((m.le for m in field.metadata if hasattr(m, "le")), 3)
    return int(low), int(high)


TRICKY = [
    "\ud800",
    "\udfff",
    "\x00",
    "\ufffe",
    "\uffff",
    "\U0010ffff",
    "\u202e",
    "\u2028",
]
"""Characters a store or a browser may choke on."""
ANY_TEXT = st.lists(
    st.characters(codec=None, exclude_categories=()) | st.sampled_from(TRICKY), max_size=30
).map("".join)
# (Built from a list: st.text() leaves lone surrogates out, whatever its alphabet.)
"""Any code points: lone surrogates, U+0000, controls, unassigned ones."""
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=8,
)


def kind(model: type[BaseModel]) -> str:
    """The ``type`` a frame of ``model`` carries."""
    return str(typing.get_args(model.model_fields["type"].annotation)[0])


@st.composite
def frames(draw: st.DrawFn, model: type[BaseModel]) -> dict[str, Any]:
    """A frame of type ``model``. Mostly well-formed (each field of its own type, or left
    out where it may be, its text any text at all), so it gets into the server; else
    wild: any field left out or any JSON at all, another ``type``, a field the type does
    not have."""
    wild = draw(st.integers(0, 3)) == 3
    frame: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if name == "type":
            frame["type"] = draw(ANY_JSON) if wild and draw(st.booleans()) else kind(model)
        elif not wild:
            if field.is_required() or draw(st.booleans()):
                frame[name] = draw(_typed(field.annotation, _bounds(field)))
        else:
            choice = draw(st.sampled_from(["omit", "typed", "any"]))
            if choice == "typed":
                frame[name] = draw(_typed(field.annotation, _bounds(field)))
            elif choice == "any":
                frame[name] = draw(ANY_JSON)
    if wild and draw(st.booleans()):
        frame[draw(ANY_TEXT)] = draw(ANY_JSON)
    return frame


def test_the_fuzzed_frames_are_every_type_of_the_protocol() -> None:
    kinds = {kind(model) for model in frame_models()}
    assert {"join", "send", "verdict", "trade", "quote", "report", "belief"} <= kinds
    assert len(kinds) == len(frame_models())


@pytest.mark.trio
async def test_arbitrary_frames_leave_the_server_answering_and_the_other_rooms_alive(
    spec: Path,
) -> None:
    async with study_server(spec) as (port, process), trio.open_nursery() as nursery:
        fuzzer, partner = await open_room(nursery, port, ("P1", "P2"))
        # One who has not consented yet: the frames meet the consent page (and, as they
        # consent or decline, the lobby or the done page).
        newcomer = await enter(nursery, port, "P5")
        other = await open_room(nursery, port, ("P3", "P4"))
        token = trio.lowlevel.current_trio_token()
        sent: list[dict[str, Any]] = []

        async def one(frame: dict[str, Any]) -> None:
            sent.append(frame)
            for page in (fuzzer, partner, newcomer):
                start = len(page.frames)
                await page.say(frame)
                # A join is always refused to a page that has joined: it answers, and
                # says the connection is kept.
                await page.say({"type": "join", "pid": page.pid})
                await page.wait(
                    lambda f: f["type"] == "refused" and f["message"] == "Already joined.",
                    after=start,
                )
            if len(sent) % 10 == 0:
                await chats(*other, f"other room, after frame {len(sent)}")

        def fuzz(model: type[BaseModel]) -> None:
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(frames(model))
            def check(frame: dict[str, Any]) -> None:
                trio.from_thread.run(one, frame, trio_token=token)

            check()

        for model in frame_models():
            await trio.to_thread.run_sync(fuzz, model)
        assert process.poll() is None
        await chats(*other, "the other room, at the end")
        assert {kind(model) for model in frame_models()} <= {str(f.get("type")) for f in sent}
        nursery.cancel_scope.cancel()


# ------------------------------------------------------------------ a commit refused


@pytest.mark.trio
async def test_a_room_whose_rows_the_database_refuses_ends_alone_and_the_error_is_logged(
    fresh_database: str,
    pg_store: Callable[[], PostgresStore],
    tmp_path: Path,
) -> None:
    """A text the database refuses (one that came round the frame check: a model's
    reply, say) ends its own room, told as cut short on our side, and nothing else; the
    error and its traceback go to the study's errors log, as ``sdtt serve`` writes it."""
    spec = real_time_spec(tmp_path, fresh_database, turns=1000, share=1.0)
    study = read_study(spec)
    server = StudyServer(study, pg_store(), started=START)
    with logging_errors(error_log(study)), trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            asker, answerer = await person_room(server, nursery)
            other = Browser(server, "J2"), Browser(server, "W2")
            for browser in other:
                await browser.open(nursery)
                await browser.say({"type": "consent"})
            await other[0].wait_phase("chat")
            failed = server.store.participant("J1").room  # type: ignore[union-attr]
            assert failed is not None
            server.store.add_message(failed, "witness", SURROGATE, server.records.wall_iso())
            await asker.wait_phase("done")
            await answerer.wait_phase("done")
            await other[0].say({"type": "send", "text": "are you still there?"})
            await other[1].wait(lambda: other[1].texts("them") == ["are you still there?"])
            nursery.cancel_scope.cancel()
    assert "went wrong on our side" in asker.of("phase")[-1]["note"]
    assert "went wrong on our side" in answerer.of("phase")[-1]["note"]
    store = pg_store()
    rooms = {room.id: room for room in store.rooms()}
    assert (rooms[failed].state, rooms[failed].end_reason) == ("done", "server_error")
    assert [r.state for r in rooms.values() if r.id != failed] == ["live"]
    assert [m.text for m in store.messages(failed)] == ["bad \ufffd surrogate"]
    logged = (tmp_path / "pilot.errors.log").read_text(encoding="utf-8")
    assert "Traceback" in logged and "Unicode low surrogate must follow" in logged
    assert f"room {failed}: the database refused" in logged and "the room is ended" in logged
