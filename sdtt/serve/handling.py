"""What the server does with each frame a participant's browser sends: the join (new
participant, reconnect or refusal), consent, chat messages and typing, trades, belief
slider readings and the verdict. Whatever is not allowed now raises :class:`Refused`
with a message for the participant. Which phases accept which frame is one table,
:data:`FRAME_RULES` (as :mod:`sdtt.serve.phases` is for moves): a frame sent in another
phase is refused (or ignored) there, before any handler runs.

A message is checked (length, pace, the word list, then the moderation endpoint if the
study has one) before it is stored; the endpoint's answer is awaited, so the
participant's later frames wait for it and their messages stay in order."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, get_args

import trio

from sdtt.beliefs.market import TradeRefused
from sdtt.serve.market_room import MarketRoom, game_id
from sdtt.serve.moderation import blocked_word
from sdtt.serve.participants import OWN_PERSON, Participants
from sdtt.serve.phases import move_room
from sdtt.serve.protocol import (
    PID,
    BeliefFrame,
    Consent,
    Continue,
    Decline,
    DoneBuying,
    Join,
    MoveDevice,
    Quote,
    Refused,
    Report,
    Send,
    TradeFrame,
    Typing,
    VerdictFrame,
    new_token,
    stale_game,
)
from sdtt.serve.room import Chat, LiveRoom, RoomHost
from sdtt.serve.store import (
    Belief,
    Participant,
    ParticipantState,
    Sender,
    Verdict,
    off_loop,
)

MODERATED = "Please keep the chat friendly: that message was not sent."
"""The refusal of a message the word list or the moderation endpoint stopped."""
READING_INTERVAL = 1.0
"""Seconds in which one more belief slider reading of a participant is allowed..."""
READING_BURST = 5.0
"""...up to this many in a row."""


class FrameHandler:
    """Checks and acts on participants' frames (see :class:`~sdtt.serve.connections.Handler`)."""

    def __init__(
        self,
        host: RoomHost,
        rooms: Mapping[str, LiveRoom],
        participants: Participants,
        send_state: Callable[[str], None],
        own_key: str,
    ) -> None:
        self.host = host
        """The server's study, store, clock and event log."""
        self.rooms = rooms
        """The live rooms this process runs, by id."""
        self.participants = participants
        self.send_state = send_state
        self.own_key = own_key
        self._last_send: dict[str, float] = {}
        self._last_reading: dict[str, tuple[str, int, float, float]] = {}
        """A participant's last stored slider reading (room, value), their budget of
        readings left and when it was counted."""

    async def join(self, join: Join) -> str:
        """The participant a join frame lets in: new, or back with their token (or the
        own person's key); raises :class:`Refused` otherwise."""
        store = self.host.store
        if not PID.match(join.pid):
            raise Refused("This study link has no valid participant id.")
        for value in (join.study_id, join.session_id):
            if value is not None and not PID.match(value):
                raise Refused("This study link is malformed.")
        existing = await off_loop(store, partial(store.participant, join.pid))
        own = join.key is not None
        expected = self.host.study.spec.study.platform_study_id
        if expected is not None and not own and join.study_id != expected:
            raise Refused("This link belongs to another study. Please open the study's own link.")
        if own and not (
            self.host.study.spec.study.own_person
            and secrets.compare_digest(join.key or "", self.own_key)
        ):
            raise Refused("This private link is not valid.")
        if existing is None:
            store.add_participant(
                Participant(
                    pid=join.pid,
                    token=new_token(),
                    state="consent",
                    role=None,
                    room=None,
                    outcome=None,
                    joined=self.host.records.wall_iso(),
                    platform_study=OWN_PERSON if own else join.study_id,
                    platform_session=join.session_id,
                )
            )
            self.host.records.record("joined", {}, participant=join.pid)
            return join.pid
        if own and existing.platform_study == OWN_PERSON:
            # The link is bound to the device it was first opened on (its token); another
            # device takes over only once the person confirms there.
            same = join.token is not None and secrets.compare_digest(join.token, existing.token)
            if not same and not join.move:
                raise MoveDevice(
                    "Your private link is open on another device. Continue here only if "
                    "that device is yours: the chat moves here and the other one stops."
                )
            if not same:
                store.update_participant(join.pid, token=new_token())
                self.host.records.record("moved_device", {}, participant=join.pid)
            self.host.records.record("reconnected", {}, participant=join.pid)
            if existing.state == "done":  # left, and back for the next interrogator
                self.participants.enter_lobby(join.pid)
            return join.pid
        if join.token is not None and secrets.compare_digest(join.token, existing.token):
            self.host.records.record("reconnected", {}, participant=join.pid)
            return join.pid
        if existing.state == "done":
            # Back after finishing (the token is forgotten then): shown the completion
            # page again, which is the same for every participant; nothing else is allowed.
            self.host.records.record("reopened", {}, participant=join.pid)
            return join.pid
        raise Refused(
            "This participant id is already in use. Continue in the browser where you "
            "started the study."
        )

    async def handle(self, pid: str, frame: Any) -> None:
        """Act on one frame from ``pid`` (already joined); a frame the server fails on is
        recorded and refused, and the connection stays (it was dropped, unlogged)."""
        try:
            await self._handle(pid, frame)
        except Refused:
            raise
        except Exception as error:
            self.host.records.record(
                "frame_failed",
                {"error": type(error).__name__, "message": str(error)[:500]},
                participant=pid,
            )
            raise Refused("Something went wrong with that. Please try again.") from None

    async def _handle(self, pid: str, frame: Any) -> None:
        store = self.host.store
        participant = await off_loop(store, partial(store.participant, pid))
        assert participant is not None
        rule = FRAME_RULES[type(frame)]
        if participant.state in rule.phases and rule.act is not None:
            await rule.act(self, pid, participant, frame)
            return
        said = rule.refused
        if rule.of_a_game and self.host.study.spec.study.mode == "market":
            said = stale_game(frame.game or "")
        if said is not None:
            raise Refused(said)

    async def _consent(self, pid: str, participant: Participant, frame: Consent) -> None:
        self.participants.enter_lobby(pid)
        self.host.records.record("consented", {}, participant=pid)
        self.send_state(pid)

    async def _decline(self, pid: str, participant: Participant, frame: Decline) -> None:
        self.participants.finish(pid, "declined")

    async def _send(self, pid: str, participant: Participant, frame: Send) -> None:
        self._check_game(participant, frame.game)
        store = self.host.store
        live = self.rooms.get(participant.room or "")
        role: Sender = participant.role or "interrogator"
        if live is None:
            # The room runs in another process of the study: pass the message on.
            self._check_send(pid, frame.text, participant)
            if self.host.screener is not None:
                if role == "witness":  # a keystroke holds the chat's end meanwhile
                    store.publish({"room": participant.room, "pid": pid, "role": role})
                await self._screen(pid, frame.text, participant)
            store.publish(
                {
                    "room": participant.room,
                    "pid": pid,
                    "role": role,
                    "chat": frame.chat,
                    "text": frame.text,
                }
            )
            return
        self._check_send(pid, frame.text, participant)
        chat = live.chat_of(pid, frame.chat)
        if chat is None:
            raise Refused("There is no such chat.")
        _check_open(live, chat, role)
        if self.host.screener is not None:
            with chat.held():
                await self._screen(pid, frame.text, participant)
            _check_open(live, chat, role)  # (the chat may have ended meanwhile)
        await live.receive(pid, chat, role, frame.text)

    async def _typing(self, pid: str, participant: Participant, frame: Typing) -> None:
        live = self.rooms.get(participant.room or "")
        role: Sender = participant.role or "interrogator"
        if live is None:
            # The room runs in another process of the study: pass the keystroke on.
            self.host.store.publish(
                {"room": participant.room, "pid": pid, "role": role, "chat": 1, "text": None}
            )
            return
        chat = live.chat_of(pid, 1)
        if chat is not None:
            live.keystroke(chat, role)

    async def _trade(
        self, pid: str, participant: Participant, frame: TradeFrame | Quote | DoneBuying
    ) -> None:
        self._check_game(participant, frame.game)
        live = self.rooms.get(participant.room or "")
        if live is None:
            if participant.role != "interrogator":
                raise Refused(NO_MARKET)
            # The game runs in another process of the study: pass the frame on.
            self.host.store.publish(
                {"room": participant.room, "pid": pid, "market": frame.model_dump()}
            )
            return
        if not isinstance(live, MarketRoom) or pid not in live.bettors:
            raise Refused(NO_MARKET)
        try:
            live.act(pid, frame.model_dump())
        except TradeRefused as error:
            raise Refused(f"Trade refused: {error}") from None

    async def _belief(self, pid: str, participant: Participant, frame: BeliefFrame) -> None:
        store = self.host.store
        if participant.room is None:
            raise Refused(NO_BELIEF)
        if not self._shows_slider(participant):
            raise Refused("This chat has no belief slider.")
        if not self._new_reading(pid, participant.room, frame.value):
            return
        live = self.rooms.get(participant.room)
        seq = live.last_seq if live is not None else len(store.messages(participant.room))
        store.add_belief(
            Belief(
                participant=pid,
                room=participant.room,
                seq=seq,
                time=self.host.records.wall_iso(),
                value=frame.value,
            )
        )

    async def _verdict(self, pid: str, participant: Participant, frame: VerdictFrame) -> None:
        store = self.host.store
        if participant.room is None:
            raise Refused(NO_VERDICT)
        room = await off_loop(store, partial(store.room, participant.room))
        three = room is not None and room.witness == "both"
        if three != (frame.human in ("1", "2")):
            raise Refused(
                "Answer "
                + (
                    "which chat is the person (1 or 2)."
                    if three
                    else "whether your partner is a person (yes or no)."
                )
            )
        answers = self._answers(frame.answers)
        if answers:
            self.host.records.record("answers", answers, room=participant.room, participant=pid)
        store.add_verdict(
            Verdict(
                room=participant.room,
                participant=pid,
                human=frame.human,
                confidence=frame.confidence,
                reason=frame.reason,
                time=self.host.records.wall_iso(),
            )
        )
        move_room(
            store,
            participant.room,
            "done",
            end_reason="finished",
            ended=self.host.records.wall_iso(),
        )
        self.participants.round_done(pid)

    def _check_game(self, participant: Participant, game: str | None) -> None:
        """In a market study, refuse a frame not meant for the game its sender is in now
        (sent as their last game ended, it would land in the next one)."""
        if self.host.study.spec.study.mode != "market":
            return
        if participant.state != "chat" or participant.room is None:
            raise Refused(stale_game(game or ""))
        if game != game_id(participant.room):
            raise Refused(stale_game(game))

    async def _continue(self, pid: str, participant: Participant, frame: Continue) -> None:
        """A bettor has read a game's reveal: they wait for the next game from now
        (until then the lobby leaves them out; see :meth:`Rooms._end_market`)."""
        now = self.host.records.wall().timestamp()
        since = participant.waiting_since
        if since is None or since <= now:
            return
        if self.host.store.update_participant(pid, if_state=["lobby"], waiting_since=now):
            self.host.records.record("reveal_read", {}, participant=pid)
            self.participants.wake_lobby()
            self.host.store.publish({"lobby": True})

    def _answers(self, given: Mapping[str, str]) -> dict[str, str]:
        """The answers to the spec's questions (checked; raises :class:`Refused`)."""
        questions = {q.id: q for q in self.host.study.spec.study.questions}
        answers = {}
        for qid, question in questions.items():
            answer = given.get(qid, "").strip()[:2000]
            if question.options and answer and answer not in question.options:
                raise Refused(f"Choose one of the answers to: {question.text}")
            if question.required and not answer:
                raise Refused(f"Please answer: {question.text}")
            if answer:
                answers[qid] = answer
        return answers

    async def _report(self, pid: str, participant: Participant, frame: Report) -> None:
        """A participant reports their partner: recorded for the researcher, thanked."""
        if participant.room is None:
            raise Refused("There is no chat partner to report.")
        self.host.records.record(
            "partner_reported",
            {"chat": frame.chat, "reason": frame.reason},
            room=participant.room,
            participant=pid,
        )
        self.host.deliver(
            pid,
            {"type": "notice", "message": "Thank you: the researchers will look at this chat."},
        )

    def _shows_slider(self, participant: Participant) -> bool:
        """Whether ``participant``'s page has the belief slider: only a two-party
        interrogator's, and only in a study with ``belief_slider`` on (the page hides it
        from witnesses, three-party interrogators and market bettors)."""
        spec = self.host.study.spec.study
        if not spec.belief_slider or spec.mode != "two-party":
            return False
        return participant.role == "interrogator"

    def _new_reading(self, pid: str, room: str, value: int) -> bool:
        """Whether a slider reading is stored: not the same value again (a page that
        resent its reading stored duplicates), and within a budget of
        :data:`READING_BURST` readings refilled at one per :data:`READING_INTERVAL`
        seconds (a person's moves all count; a script stored 3,000 in 3 s)."""
        now = trio.current_time()
        last_room, last_value, budget, since = self._last_reading.get(
            pid, ("", -1, READING_BURST, now)
        )
        if last_room == room and last_value == value:
            return False
        budget = min(READING_BURST, budget + (now - since) / READING_INTERVAL)
        if budget < 1:
            return False
        self._last_reading[pid] = (room, value, budget - 1, now)
        return True

    async def _screen(self, pid: str, text: str, participant: Participant) -> None:
        """Ask the moderation endpoint; a flagged message is refused as a blocked word
        is (and recorded with its categories), one it could not check is delivered."""
        assert self.host.screener is not None
        result = await self.host.screener.screen(
            text, sender=participant.role or "interrogator", room=participant.room, participant=pid
        )
        if result.flagged:
            self.host.records.record(
                "message_moderated",
                {"categories": list(result.categories)},
                room=participant.room,
                participant=pid,
            )
            raise Refused(MODERATED)
        now = self.host.store.participant(pid)
        if now is None or now.state != "chat" or now.room != participant.room:
            raise Refused("This chat has ended.")

    def _check_send(self, pid: str, text: str, participant: Participant) -> None:
        if participant.state != "chat":
            raise Refused("The chat is not open.")
        if not text.strip():
            raise Refused("A message must not be empty.")
        limit = self.host.study.spec.chat.max_chars
        if len(text) > limit:
            raise Refused(f"That message is too long (at most {limit} characters).")
        word = blocked_word(text, self.host.study.spec.chat.blocked_words)
        if word is not None:
            self.host.records.record(
                "message_moderated", {"word": word}, room=participant.room, participant=pid
            )
            raise Refused(MODERATED)
        now = trio.current_time()
        last = self._last_send.get(pid)
        if last is not None and now - last < self.host.study.spec.chat.min_interval:
            raise Refused("You are sending messages too quickly; wait a moment.")
        self._last_send[pid] = now


def _check_open(live: LiveRoom, chat: Chat, role: Sender) -> None:
    """Refuse a message to a chat that takes no more. The last-turn refusal comes first:
    a chat done already (a bot's, maybe) and one still in its grace period (a person's,
    maybe) refuse alike."""
    if role == "interrogator" and live.answered(chat) >= live.turns:
        raise Refused("That was the last turn: wait for your partner to finish.")
    if chat.done or live.ended.is_set():
        raise Refused("This chat has ended.")


NO_MARKET = "There is no market to trade in."
NO_BELIEF = "There is no chat to give a belief about."
NO_VERDICT = "A verdict can only be given when the chat has ended."
EVERY_PHASE: frozenset[ParticipantState] = frozenset(get_args(ParticipantState))
Act = Callable[[FrameHandler, str, Participant, Any], Awaitable[None]]


@dataclass(frozen=True)
class FrameRule:
    """Where a kind of frame is acted on, and what a participant elsewhere is told."""

    phases: frozenset[ParticipantState]
    """The participant phases in which :attr:`act` runs."""
    act: Act | None
    """What the handler does with the frame (None: nothing, in any phase)."""
    refused: str | None
    """Said in every other phase; None: the frame is ignored there (a repeated click or
    a keystroke after the chat ended)."""
    of_a_game: bool = False
    """A market study refuses it elsewhere as meant for a game that has ended."""


FRAME_RULES: dict[type[Any], FrameRule] = {
    Join: FrameRule(frozenset(), None, "Already joined."),
    Consent: FrameRule(frozenset({"consent"}), FrameHandler._consent, None),
    Decline: FrameRule(frozenset({"consent"}), FrameHandler._decline, None),
    Report: FrameRule(EVERY_PHASE, FrameHandler._report, None),
    Continue: FrameRule(frozenset({"lobby"}), FrameHandler._continue, None),
    Send: FrameRule(frozenset({"chat"}), FrameHandler._send, "The chat is not open.", True),
    Typing: FrameRule(frozenset({"chat"}), FrameHandler._typing, None),
    TradeFrame: FrameRule(frozenset({"chat"}), FrameHandler._trade, NO_MARKET, True),
    Quote: FrameRule(frozenset({"chat"}), FrameHandler._trade, NO_MARKET, True),
    DoneBuying: FrameRule(frozenset({"chat"}), FrameHandler._trade, NO_MARKET, True),
    BeliefFrame: FrameRule(frozenset({"chat", "verdict"}), FrameHandler._belief, NO_BELIEF),
    VerdictFrame: FrameRule(frozenset({"verdict"}), FrameHandler._verdict, NO_VERDICT),
}
"""Every frame a joined participant's page may send: the phases that accept it (as
:data:`~sdtt.serve.phases.PARTICIPANT_MOVES` lists the moves), so a frame sent in
another phase is refused here, before any handler runs."""
