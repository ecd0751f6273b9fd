"""Moving participants between the study's phases: into the lobby, and done (with the
outcome their completion page explains). The own person (the real person behind the
persona, in own-person studies) goes back to the lobby after each chat instead."""

from __future__ import annotations

from collections.abc import Callable

from sdtt.serve.phases import move_participant
from sdtt.serve.room import RoomHost
from sdtt.serve.store import StudyStore

OWN_PERSON = "own-person"
"""Marks the real person behind the persona (joined by the private link) in the store."""


def rounds_played(store: StudyStore, pid: str) -> int:
    """Rooms (chats) ``pid`` has been in, as interrogator or witness."""
    return sum(1 for room in store.rooms() if pid in (room.interrogator, room.witness_pid))


class Participants:
    """Changes participants' phases in the store and has their browsers shown it."""

    def __init__(
        self,
        host: RoomHost,
        send_state: Callable[[str], None],
        wake_lobby: Callable[[], None],
    ) -> None:
        self.host = host
        """The server's store, clock and event log."""
        self.send_state = send_state
        self.wake_lobby = wake_lobby

    def enter_lobby(self, pid: str, *, after: float = 0.0) -> None:
        """``pid`` waits for a room from now, or only ``after`` seconds from now (a market
        bettor reading a game's reveal, unless they say they are ready sooner); their
        browser is not told here."""
        store = self.host.store
        move_participant(
            store,
            pid,
            "lobby",
            room=None,
            outcome=None,
            waiting_since=self.host.records.wall().timestamp() + after,
        )
        self.wake_lobby()
        store.publish({"lobby": True})

    def finish(self, pid: str, outcome: str) -> None:
        """``pid`` is done with the study (``outcome`` says why), and is shown so."""
        move_participant(self.host.store, pid, "done", outcome=outcome)
        self.shown_done(pid, outcome)

    def shown_done(self, pid: str, outcome: str) -> None:
        """Record that ``pid`` (already moved so) is done, and show them so."""
        self.host.records.record("participant_done", {"outcome": outcome}, participant=pid)
        self.send_state(pid)

    def round_done(self, pid: str) -> None:
        """``pid`` finished a chat: back to the lobby for the next of the study's
        ``rounds``, or done (the own person's returns are :meth:`release_own_person`'s)."""
        rounds = self.host.study.spec.study.rounds
        played = rounds_played(self.host.store, pid) if rounds > 1 else 1  # (reads every room)
        if played < rounds and not self.is_own_person(pid):
            self.host.records.record("round_done", {"round": played}, participant=pid)
            self.enter_lobby(pid)
            self.send_state(pid)
            return
        self.finish(pid, "finished")

    def is_own_person(self, pid: str) -> bool:
        """Whether ``pid`` joined by the own person's private link."""
        participant = self.host.store.participant(pid)
        return participant is not None and participant.platform_study == OWN_PERSON

    def release_own_person(self, pid: str) -> None:
        """The own person goes back to the lobby for the next interrogator."""
        if not self.is_own_person(pid):
            return
        self.enter_lobby(pid)
        self.send_state(pid)
