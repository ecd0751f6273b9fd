"""Participants' websockets: the join, one bounded outbox per browser, and the frames
delivered to it.

The web layer hands each websocket over as two callables (receive a frame, send a frame),
so all of this runs and is tested without a network. A frame leaves only once every event
recorded before it is committed. A browser too slow to keep up is dropped; it can
reconnect and is sent its whole state again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import trio

from sdtt.serve.protocol import (
    FrameError,
    Join,
    MoveDevice,
    Refused,
    Tracked,
    parse_frame,
    refusal,
)
from sdtt.serve.spec import Study
from sdtt.serve.state import StateRows, state_rows
from sdtt.serve.store import StudyStore, last_event_off_loop, off_loop

Receive = Callable[[], Awaitable[str | bytes | None]]
"""Waits for the next frame of a connection; None when it closed."""
SendMessage = Callable[[dict[str, Any] | list[dict[str, Any]]], Awaitable[None]]
"""Sends one websocket message: a frame, or a list of frames that leave together."""

OUTBOX = 256
"""Frames that may wait for a slow browser before its connection is dropped (it can
reconnect and get everything again)."""
JOIN_TIMEOUT = 30.0
MOST_IN_ONE_MESSAGE = 64
"""Most frames sent together as one websocket message (see :func:`_pump`)."""
JOIN_EVENTS = ("joined", "reconnected", "reopened")
"""The events recorded when a join lets a participant in (one per connection)."""


class Handler(Protocol):
    """What a connection does with the frames it receives."""

    async def join(self, join: Join) -> str:
        """The participant id a join frame lets in; raises :class:`Refused`."""
        ...

    async def handle(self, pid: str, frame: Any) -> None:
        """Act on one of ``pid``'s frames; raises :class:`Refused`."""
        ...


class _ShowState:
    """An outbox's place for the participant's state frames (see :data:`SHOW_STATE`)."""


SHOW_STATE = _ShowState()
"""Queued instead of a participant's state frames, which their pump reads and sends in its
place: later than asked, so a message frame queued meanwhile may come again after the
history that already holds it (the page shows each message id once)."""
Outgoing = dict[str, Any] | _ShowState
"""What waits in an outbox: a frame, or :data:`SHOW_STATE`."""


@dataclass
class _Connection:
    send: trio.MemorySendChannel[Outgoing]
    cancel: trio.CancelScope = field(default_factory=trio.CancelScope)


class Connections:
    """The browsers connected to this process, by participant id."""

    def __init__(
        self,
        study: Study,
        store: StudyStore,
        state_frames: Callable[[str, StateRows | None], list[dict[str, Any]]],
    ) -> None:
        self.study = study
        self.store = store
        self._state_frames = state_frames
        """The frames that show a participant where they are, given the rows they show
        or reading them (see :mod:`sdtt.serve.state`)."""
        self._open: dict[str, _Connection] = {}
        self._held: list[str] | None = None
        self.on_gone: Callable[[str, int], None] | None = None
        """Called with a participant id whose browser went away (not replaced by a new
        connection here) and the id of the event that let that connection in: the
        server waits a grace period for a reload, here or in another process."""

    def __contains__(self, pid: object) -> bool:
        return pid in self._open

    async def attend(self, receive: Receive, send: SendMessage, handler: Handler) -> None:
        """Serve one websocket until it closes (refusals are sent, never raised)."""
        try:
            with trio.fail_after(JOIN_TIMEOUT):
                first = await receive()
            join = parse_frame(first)
            if not isinstance(join, Join):
                raise Refused("Open the study from its link first.")
            pid = await handler.join(join)
        except trio.TooSlowError:
            return
        except (FrameError, Refused) as error:
            self.store.flush()
            frame = refusal(str(error)) | {"fatal": True}
            if isinstance(error, MoveDevice):
                frame["move"] = True  # the page offers "Continue on this device"
            await send(frame)
            return
        participant = await off_loop(self.store, partial(self.store.participant, pid))
        assert participant is not None
        joined = await last_event_off_loop(self.store, pid, JOIN_EVENTS)
        spec = self.study.spec.study
        await send(
            {
                "type": "joined",
                "token": participant.token,
                "title": spec.title,
                "consent": spec.consent,
                "slider": spec.belief_slider,
                "max_chars": self.study.spec.chat.max_chars,
                "block_paste": self.study.spec.chat.block_paste,
                # The page's clocks count real seconds: the server's run this much faster.
                "speed": self.study.spec.chat.speed,
                "questions": [q.model_dump() for q in spec.questions],
            }
        )
        outbox_send, outbox_recv = trio.open_memory_channel[Outgoing](OUTBOX)
        connection = _Connection(send=outbox_send)
        previous = self._open.get(pid)
        if previous is not None:
            # Told, then closed once the refusal has gone out (its page stops
            # reconnecting); cancelled at once, the refusal never left.
            with contextlib.suppress(trio.WouldBlock, trio.BrokenResourceError):
                previous.send.send_nowait(refusal(_replaced(join)) | {"fatal": True})
            previous.send.close()
        self._open[pid] = connection
        self.send_state(pid)
        try:
            with connection.cancel:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(
                        _pump,
                        outbox_recv,
                        send,
                        nursery.cancel_scope,
                        self.store.flushed,
                        partial(self._read_state, pid),
                    )
                    while True:
                        raw = await receive()
                        if raw is None:
                            break
                        try:
                            await handler.handle(pid, parse_frame(raw))
                        except (FrameError, Refused) as error:
                            _refuse(outbox_send, str(error))
                    nursery.cancel_scope.cancel()
        finally:
            if self._open.get(pid) is connection:
                del self._open[pid]
                if self.on_gone is not None:
                    self.on_gone(pid, joined)
            outbox_send.close()
            _left(_also_queued(outbox_recv, OUTBOX), sent=False)

    def deliver(self, pid: str, frame: Outgoing) -> None:
        """Queue a frame for ``pid``'s browser, if connected (the store has it anyway)."""
        connection = self._open.get(pid)
        if connection is None:
            plain = dict(frame) if isinstance(frame, Tracked) else frame
            self.store.publish({"to": pid, "frame": plain})
            _left([frame], sent=False)
            return
        try:
            connection.send.send_nowait(frame)
        except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
            # Too slow or gone: drop the connection; a reconnect shows everything again.
            connection.cancel.cancel()
            _left([frame], sent=False)

    def send_state(self, pid: str) -> None:
        """Show ``pid`` where they are now (see :mod:`sdtt.serve.state`)."""
        if self._held is not None:  # inside a transaction: sent once it is committed
            self._held.append(pid)
            return
        if pid not in self._open:
            self.store.publish({"state": pid})  # connected to another process, maybe
            return
        if getattr(self.store, "waits_off_loop", False):
            # Their pump reads the rows in a worker thread, once the frames before have
            # left: read here, they would hold up every room meanwhile.
            self.deliver(pid, SHOW_STATE)
            return
        for frame in self._state_frames(pid, None):
            self.deliver(pid, frame)

    async def _read_state(self, pid: str) -> list[dict[str, Any]]:
        """``pid``'s state frames, their rows read in a worker thread."""
        rows = await off_loop(self.store, partial(state_rows, self.store, pid))
        return self._state_frames(pid, rows)

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Hold back the state frames asked for in the block (a transaction whose
        changes they show) and send them once it ended without an error."""
        self._held = []
        try:
            yield
        finally:
            held, self._held = self._held, None
        for pid in dict.fromkeys(held):
            self.send_state(pid)


def _replaced(join: Join) -> str:
    """What a window replaced by ``join``'s connection is told: the own person who moved
    their link to another device (and confirmed there), or another window."""
    if join.move:
        return "Your private link moved to another device: the study goes on there."
    return "The study was opened in another window."


def _refuse(outbox: trio.MemorySendChannel[Outgoing], text: str) -> None:
    """Queue a refusal, unless the outbox is half full: a flood of bad frames is refused
    while the browser keeps up, and the rest are dropped rather than the connection."""
    if outbox.statistics().current_buffer_used < OUTBOX // 2:
        with contextlib.suppress(
            trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError
        ):
            outbox.send_nowait(refusal(text))


async def _pump(
    outbox: trio.MemoryReceiveChannel[Outgoing],
    send: SendMessage,
    scope: trio.CancelScope,
    flushed: Callable[[], Awaitable[None]],
    read_state: Callable[[], Awaitable[list[dict[str, Any]]]],
) -> None:
    """Send queued frames to the browser in order, each once every event recorded so
    far is committed (:data:`SHOW_STATE`: the state frames, read then); a failed send
    ends the connection.

    The frames queued by the time one is sent go with it, as one message (a list): each
    message costs the event loop a pass per await in the websocket layers, and the
    frames of one change (a message and the typing that ends with it, a phase and its
    history) are queued together."""
    queued: list[Outgoing] = []
    try:
        async for item in outbox:
            queued = [item, *_also_queued(outbox, MOST_IN_ONE_MESSAGE - 1)]
            await flushed()
            frames: list[dict[str, Any]] = []
            for one in queued:
                frames += await read_state() if isinstance(one, _ShowState) else [one]
            await send(frames[0] if len(frames) == 1 else frames)
            _left(queued, sent=True)
            queued = []
    except Exception:
        pass
    finally:
        _left(queued, sent=False)
    # Sent everything and the outbox was closed (another window took over), or a send
    # failed: the connection ends.
    scope.cancel()


def _left(items: list[Outgoing], *, sent: bool) -> None:
    """Tell the :class:`Tracked` frames of ``items`` they were sent (or never will be)."""
    for item in items:
        if isinstance(item, Tracked):
            item.left(sent)


def _also_queued(outbox: trio.MemoryReceiveChannel[Outgoing], most: int) -> list[Outgoing]:
    """Up to ``most`` more items already waiting in ``outbox``, without waiting."""
    items: list[Outgoing] = []
    while len(items) < most:
        try:
            items.append(outbox.receive_nowait())
        except (trio.WouldBlock, trio.EndOfChannel):
            break
    return items
