"""A Turing Trade market game in a live room (``mode = "market"``).

Several bettors question one target (the persona bot, run by the engine as in any bot
room, or a person relayed as a human witness is) in one public chat, by the rules of the
Turing Trade paper: one question is *current* at a time, seen by every bettor and the
target; a bettor who asks while a question is current has theirs wait in a private
queue (only they see it, event ``question_queued``). Once the target has answered (sent
a message and then nothing and composed nothing for :data:`ANSWER_GRACE` seconds, the
same for a bot or a person), the next question comes from the queues round-robin,
starting with the bettor after the one just answered and skipping empty queues. The
bettor who asked sees each message of the answer at once, the others ``[market]
advantage`` seconds later (5 in the paper; meanwhile a frame ``answer_pending`` without
the text tells them an answer came), so a good question pays its asker.

Each bettor trades human/computer securities with the market maker of
:mod:`sdtt.beliefs.market` (Turing Trade's own, or LMSR with liquidity b); a trade
button first gets a ``quote`` (its cost, to confirm). Every trade is written to the store (an
event ``trade``) before the bettor is told, and the new price goes to all bettors with no
word on who traded. "Done buying" from every bettor ends the game early; otherwise it
ends when its clock runs out (``[market] seconds``, the paper's two minutes), or, with
``end_at_turns``, after X answered turns. The server then reveals the target and pays
out (events ``payout``; a person target earns ``target_points`` by the final price,
``target_reward``); points carry over a participant's games, summed from the events.

What a bettor's browser gets never says what the target is before the reveal: messages
are ``you`` (their own questions), ``other`` (another bettor's) or ``them`` (the
target's), prices are numbers, and accounts are their own. Each game is named to its
people by an opaque :func:`game_id` that their frames carry back, so a frame meant for a
game that has ended never lands in the next one.

On a shared database (PostgreSQL, several server processes) one process runs a game;
bettors connected to another have their frames passed on to it and its frames passed
back (:mod:`sdtt.serve.relay`). Each trade is stored only while the database still has
the game live (:func:`store_trade`), so a process taken for dead, whose games another
process ended and refunded, cannot charge a trade after the refund.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import trio

from sdtt.beliefs.market import (
    PAYOUT,
    Account,
    Kind,
    LmsrMaker,
    Maker,
    Market,
    Side,
    Trade,
    TradeRefused,
    TuringTradeMaker,
    ask_of,
)
from sdtt.beliefs.traces import BeliefPoint, BeliefTrace
from sdtt.dialogue.shown import Shown
from sdtt.engine.opening import BotSetup
from sdtt.engine.session import SessionClosedError
from sdtt.serve.room import Chat, LiveRoom, RoomHost
from sdtt.serve.spec import MarketSection, Study
from sdtt.serve.store import Room, Sender, StoredMessage, StudyStore

PAYING_EVENTS = ("trade", "payout")
NEVER = 2**31
"""Answered turns after which a game does not end (``end_at_turns`` off)."""
ANSWER_GRACE = 2.0
"""Seconds the target may add to an answer (after its last message, not composing)
before the next question is put to it."""


def game_id(room: str) -> str:
    """The name of the game in room ``room`` that its people's pages are told and send
    back: the same in every process, and not the room id (never sent to a browser)."""
    return hashlib.sha256(f"sdtt-game:{room}".encode()).hexdigest()[:12]


def store_trade(server: RoomHost, room: str, pid: str, data: dict[str, Any]) -> bool:
    """Store a trade event; False (nothing stored) if the store shares the study with
    other processes and no longer has ``room`` live (it was ended elsewhere: its trades
    were refunded, and this one must not be charged)."""
    guarded = getattr(server.store, "add_event_if_live", None)
    if guarded is None:
        server.records.record("trade", data, room=room, participant=pid)
        return True
    return bool(guarded("trade", data, server.records.wall_iso(), room=room, participant=pid))


def new_maker(spec: MarketSection) -> Maker:
    """The market maker the spec names."""
    if spec.maker == "lmsr":
        return LmsrMaker(b=spec.liquidity)
    return TuringTradeMaker()


def carried_points(store: StudyStore, pid: str, start: float) -> float:
    """A bettor's points: ``start`` less every trade's cost plus every payout, over all
    their games (read from the stored events, so they survive a restart)."""
    points = start
    for event in store.events():
        if event["participant"] != pid or event["kind"] not in PAYING_EVENTS:
            continue
        data = event["data"]
        points += data["paid"] if event["kind"] == "payout" else -data["cost"]
    return points


def games_played(store: StudyStore, pid: str) -> int:
    """How many market games ``pid`` has been a bettor in."""
    return sum(1 for e in store.events() if e["kind"] == "bettor" and e["participant"] == pid)


PRICE_COLUMNS = ("room", "event", "time_s", "turn", "message", "bid", "ask")
"""Columns of the export's ``prices.csv``."""


def price_rows(room: str, events: list[dict[str, Any]], maker: Maker) -> list[dict[str, Any]]:
    """A market room's price series as rows of :data:`PRICE_COLUMNS`: the opening, each
    trade and the settlement, each with the bid (the price a human security sells for)
    and the ask (what one more costs: the bid plus the maker's spread; the paper's
    figures plot the ask). Games stored before the ask was recorded get it from the spread."""
    opening = maker.price
    rows: list[dict[str, Any]] = [
        {
            "room": room,
            "event": "open",
            "time_s": 0.0,
            "turn": 0,
            "message": 0,
            "bid": opening,
            "ask": ask_of(maker, opening),
        }
    ]
    for event in events:
        if event["kind"] not in ("trade", "market_settled"):
            continue
        data = event["data"]
        bid = data.get("bid", data["price_after" if event["kind"] == "trade" else "price"])
        rows.append(
            {
                "room": room,
                "event": "trade" if event["kind"] == "trade" else "end",
                "time_s": data["time_s"],
                "turn": data["turn"],
                "message": data["message"],
                "bid": bid,
                "ask": data.get("ask", ask_of(maker, bid)),
            }
        )
    return rows


def price_points(events: list[dict[str, Any]], maker: Maker) -> list[BeliefPoint]:
    """A market room's price history (:func:`price_rows`) as belief points (source
    'price'; ``belief`` = the bid, ``ask`` = what one more human security costs;
    ``turn`` = turns answered and ``message`` = target messages sent at the trade,
    ``time_s`` = seconds since the game started), closed by the price held at the end."""
    return [
        BeliefPoint(
            turn=row["turn"],
            message=row["message"],
            time_s=row["time_s"],
            belief=min(100.0, max(0.0, row["bid"])),
            ask=min(100.0, max(0.0, row["ask"])),
            source="price",
        )
        for row in price_rows("", events, maker)
    ]


def price_trace(
    study: Study, room: Room, events: list[dict[str, Any]], shown: Shown
) -> BeliefTrace:
    """A market room's price history as the room's belief trace (item 'room', target
    'target', source 'price'); ``shown`` is the room's (its live turns and bot)."""
    ended_early = room.end_reason not in (None, "finished")
    return BeliefTrace(
        study=study.name,
        judge_id=room.id,
        judge_type="human",
        item_id=room.id,
        item_kind="room",
        target="target",
        target_human=room.witness == "human",
        points=price_points(events, new_maker(study.spec.market)),
        excluded=ended_early,
        exclusion_reason=f"room ended early: {room.end_reason}" if ended_early else None,
        source=f"sdtt-serve:{study.name}",
        shown=shown.model_copy(update={"judge_kind": "market"}),
    )


def refund_game(server: RoomHost, room: str) -> None:
    """Pay back what each bettor spent in a game that ended before its reveal (stored as
    payouts, so carried points are as before the game); nothing once it was settled."""
    events = server.store.events(room)
    if any(e["kind"] in ("market_settled", "payout") for e in events):
        return
    spent: dict[str, float] = {}
    for event in events:
        if event["kind"] == "trade":
            pid = event["participant"]
            spent[pid] = spent.get(pid, 0.0) + event["data"]["cost"]
    for pid, paid in spent.items():
        if paid:
            server.records.record(
                "payout", {"paid": paid, "refund": True}, room=room, participant=pid
            )


@dataclass(eq=False)
class MarketRoom(LiveRoom):
    """A live room whose interrogators are a market's bettors."""

    bettors: tuple[str, ...] = ()
    spec: MarketSection = field(default_factory=MarketSection)
    market: Market = field(init=False)
    askers: dict[int, str] = field(default_factory=dict)
    done_buying: set[str] = field(default_factory=set)
    answers: int = 0
    """Messages the target has sent so far."""
    answered_at: list[int] = field(default_factory=list)
    """For each answer, the length of the price history when it came (chart markers)."""
    opened_at: float = 0.0
    opening: float = 50.0
    queues: dict[str, deque[str]] = field(default_factory=dict)
    """Each bettor's questions waiting to become current, oldest first (only they see)."""
    current: str | None = None
    """Who asked the current question (None: the target has no question to answer)."""
    answer_from: float | None = None
    """When the target last sent a message answering the current question."""
    asked_last: str | None = None
    """Who asked the question put to the target last (its answers go to them first)."""
    held_back: dict[int, tuple[float, str, StoredMessage]] = field(default_factory=dict)
    """Answers the other bettors do not see yet: seq → (when they do, asker, message)."""
    to_target: trio.MemorySendChannel[str] = field(init=False)
    from_room: trio.MemoryReceiveChannel[str] = field(init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.spec.end_at_turns:
            self.turns = NEVER  # the clock or "done buying" ends it, as in the paper
        self.market = Market(new_maker(self.spec))
        self.opened_at = trio.current_time()
        self.opening = self.market.maker.price
        self.to_target, self.from_room = trio.open_memory_channel[str](math.inf)
        for pid in self.bettors:
            self.queues[pid] = deque()
            points = carried_points(self.server.store, pid, self.spec.start_points)
            self.market.join(Account(pid, points=points))
            self.server.records.record("bettor", {"points": points}, room=self.id, participant=pid)

    # ------------------------------------------------------------ who sees what

    def members(self) -> dict[str, Any]:
        """Every bettor questions the target (a person target is the witness)."""
        people: dict[str, Any] = dict.fromkeys(self.bettors, "interrogator")
        if self.record.witness_pid is not None:
            people[self.record.witness_pid] = "witness"
        return people

    def chat_of(self, pid: str, chat: int) -> Any:
        """Bettors and the target share the one chat."""
        if pid in self.bettors or pid == self.record.witness_pid:
            return self.chats.get(1 if pid == self.record.witness_pid else chat)
        return None

    def interrogators(self) -> tuple[str, ...]:
        """Every bettor."""
        return self.bettors

    def frame_for(self, message: StoredMessage, pid: str) -> dict[str, Any]:
        """A message as ``pid`` sees it: 'you', 'other' (another bettor) or 'them' (the
        target; for a person target, every bettor)."""
        if pid == self.record.witness_pid:
            side = "you" if message.sender == "witness" else "them"
        elif message.sender == "witness":
            side = "them"
        else:
            side = "you" if self.askers.get(message.seq) == pid else "other"
        return {"type": "message", "id": message.seq, "chat": 1, "from": side, "text": message.text}

    def show(self, message: StoredMessage, pids: Iterable[str]) -> None:
        """Show a message the indicator policy let through: the target's answer goes to
        the bettor who asked, and to the others ``advantage`` seconds later (told
        meanwhile that an answer is on its way)."""
        asker = self.asked_last if self.spec.advantage > 0 else None
        if message.sender != "witness" or asker is None:
            super().show(message, pids)
            return
        others = [pid for pid in pids if pid != asker]
        super().show(message, [pid for pid in pids if pid == asker])
        for pid in others:
            self.server.deliver(pid, {"type": "answer_pending", "in": self.spec.advantage})
        show_at = trio.current_time() + self.spec.advantage
        self.held_back[message.seq] = (show_at, asker, message)

    def delivered(self, message: StoredMessage) -> None:
        """After a message was shown to the bettors: the target's answers mark the chart
        (and start the quiet that completes an answer)."""
        if message.sender == "witness":
            self.answers += 1
            self.answered_at.append(len(self.market.trades) + 1)
            if self.current is not None:
                self.answer_from = trio.current_time()
        super().delivered(message)

    def history_for(self, pid: str) -> list[dict[str, Any]]:
        """The room's messages as ``pid`` may see them now (no answer held back by the
        asker's head start or, from the bettors, by the typing indicator)."""
        unshown = self.unshown_seqs() if pid != self.record.witness_pid else set()
        return [
            self.frame_for(m, pid)
            for m in self.server.store.messages(self.id)
            if m.seq not in unshown
            and (m.seq not in self.held_back or self.held_back[m.seq][1] == pid)
        ]

    def _show_held_back(self, now: float) -> float:
        """Show the other bettors the answers whose head start is over; when next."""
        for seq, (show_at, asker, message) in list(self.held_back.items()):
            if now < show_at:
                continue
            del self.held_back[seq]
            for pid in self.bettors:
                if pid != asker:
                    self.server.deliver(pid, self.frame_for(message, pid))
        return min((at for at, _, _ in self.held_back.values()), default=math.inf)

    def state_frame(self, pid: str) -> dict[str, Any]:
        """The market as ``pid`` sees it: the price history, answer markers, their
        account, and the seconds left on the game's clock (None: it has none)."""
        account = self.market.accounts[pid]
        now = trio.current_time()
        return {
            "type": "market",
            "game": game_id(self.id),
            "prices": [self.opening, *(t.price_after for t in self.market.trades)],
            "ask": ask_of(self.market.maker, self.market.maker.price),
            "answers": list(self.answered_at),
            "points": round(account.points, 2),
            "kind": account.kind,
            "count": account.count,
            "done": pid in self.done_buying,
            "max_trade": self.spec.max_trade,
            "queued": list(self.queues[pid]),
            "ends_in": (
                None if math.isinf(self.closes_at) else max(0, round(self.closes_at - now))
            ),
        }

    # ------------------------------------------------------------ bettors' actions

    async def run(self, setup: BotSetup | None) -> None:
        """Run the game, passing each question to a bot target as it becomes current."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._feed_bot)
            await super().run(setup)
            nursery.cancel_scope.cancel()

    async def _feed_bot(self) -> None:
        """Give the bot each current question, in order (a person target reads them)."""
        chat = self.chats[1]
        async for text in self.from_room:
            if chat.witness is not None:
                continue
            await chat.opened.wait()
            if chat.session is None or self.ended.is_set():
                return
            with contextlib.suppress(SessionClosedError):
                await chat.session.send_user_message(text)

    async def receive(self, pid: str, chat: Chat, sender: Sender, text: str) -> None:
        """A message from ``pid``: a bettor's is a question (:meth:`ask`)."""
        if pid in self.bettors:
            await self.ask(pid, text)
        else:
            await super().receive(pid, chat, sender, text)

    def act(self, pid: str, frame: dict[str, Any]) -> None:
        """A bettor's quote, trade or "done buying" (a frame's fields, checked where it
        was received); raises :class:`TradeRefused`."""
        kind, side, count = frame.get("kind"), frame.get("side"), frame.get("count", 0)
        if frame["type"] == "done_buying":
            self.done(pid)
        elif frame["type"] == "quote":
            self.server.deliver(pid, self.quote(pid, kind, side, count))  # type: ignore[arg-type]
        else:
            self.trade(pid, kind, side, count, frame.get("quoted"))  # type: ignore[arg-type]

    def state_frames(self, pid: str) -> list[dict[str, Any]]:
        """What a bettor's page needs on (re)connecting, besides its phase: the chat so
        far, their market and the typing indicators on now."""
        return [
            {"type": "history", "messages": self.history_for(pid)},
            self.state_frame(pid),
            *self.indicator_frames(),
        ]

    async def ask(self, pid: str, text: str) -> None:
        """A bettor's question: current at once if the target has none, else queued."""
        if self.current is None:
            self._put(pid, text)
            return
        queue = self.queues[pid]
        queue.append(text)
        self.server.records.record(
            "question_queued", {"text": text, "waiting": len(queue)}, room=self.id, participant=pid
        )
        self.server.deliver(pid, self.state_frame(pid))

    def _put(self, pid: str, text: str) -> None:
        """Make ``pid``'s question the current one: stored with who asked, shown to all,
        passed to the target."""
        message = self.server.store.add_message(
            self.id, "interrogator", text, self.server.records.wall_iso()
        )
        self.askers[message.seq] = pid
        self.current, self.answer_from, self.asked_last = pid, None, pid
        self.server.records.record("question", {"seq": message.seq}, room=self.id, participant=pid)
        self.deliver(message)
        self.to_target.send_nowait(text)

    def _check_chats(self) -> float:
        """The room's checks, then the question queue: when the current question's
        answer is complete, the next bettor in line with a question has it put."""
        now = trio.current_time()
        wake_at = min(super()._check_chats(), self._show_held_back(now))
        if self.current is None or self.answer_from is None or self.ended.is_set():
            return wake_at
        if self.chats[1].composing(now):
            return wake_at  # the room wakes when that changes
        complete_at = self.answer_from + ANSWER_GRACE
        if now < complete_at:
            return min(wake_at, complete_at)
        answered, self.current = self.current, None
        self.server.records.record("answer_complete", {}, room=self.id, participant=answered)
        start = self.bettors.index(answered) + 1
        for step in range(len(self.bettors)):
            pid = self.bettors[(start + step) % len(self.bettors)]
            if self.queues[pid]:
                self._put(pid, self.queues[pid].popleft())
                self.server.deliver(pid, self.state_frame(pid))
                break
        return wake_at

    def _check(self, pid: str, kind: Kind, side: Side, count: int) -> None:
        """Refuse (:class:`TradeRefused`) what the room's rules do not allow."""
        if self.ended.is_set():
            raise TradeRefused("the game has ended.")
        if count > self.spec.max_trade:
            raise TradeRefused(f"trade at most {self.spec.max_trade} securities at once.")
        if side == "buy" and pid in self.done_buying:
            raise TradeRefused("you said you are done buying.")
        account = self.market.accounts[pid]
        held = account.count if account.kind == kind else 0
        if side == "sell" and held < count:
            raise TradeRefused(f"you hold {held} {kind} securities, so you cannot sell {count}.")

    def quote(self, pid: str, kind: Kind, side: Side, count: int) -> dict[str, Any]:
        """What a trade would cost now, to confirm before making it (a ``quote`` frame);
        nothing changes. Raises :class:`TradeRefused` for a trade that would be refused."""
        self._check(pid, kind, side, count)
        cost = self.market.maker.cost(kind, side, count)
        points = self.market.accounts[pid].points
        if cost > points + 1e-9:
            raise TradeRefused(f"that costs {cost:g} points; you have {points:g}.")
        amount = round(abs(cost), 2)
        return {
            "type": "quote",
            "kind": kind,
            "side": side,
            "count": count,
            "cost": round(cost, 2),
            "text": f"{side} {count} {kind} for {amount:g} points",
        }

    def trade(
        self, pid: str, kind: Kind, side: Side, count: int, quoted: float | None = None
    ) -> Trade:
        """Make a trade, store it, then tell its bettor and show all the new price;
        raises :class:`TradeRefused` saying why not (also when it would now cost more
        than ``quoted``, the cost the bettor confirmed: the price moved meanwhile)."""
        self._check(pid, kind, side, count)
        if quoted is not None:
            cost = self.market.maker.cost(kind, side, count)
            if cost > quoted + 0.005:
                raise TradeRefused(
                    f"the price moved: that now costs {cost:g} points, not {quoted:g}."
                )
        # Made on a copy, which becomes the market once the trade is stored.
        trial = copy.deepcopy(self.market)
        made = trial.trade(
            pid,
            kind,
            side,
            count,
            time_s=round(trio.current_time() - self.opened_at, 3),
            message=self.answers,
        )
        ask = ask_of(trial.maker, made.price_after)
        stored = store_trade(
            self.server,
            self.id,
            pid,
            {
                "kind": made.kind,
                "side": made.side,
                "count": made.count,
                "cost": made.cost,
                "price_after": made.price_after,
                "bid": made.price_after,
                "ask": ask,
                "message": made.message,
                "turn": self.answered(self.chats[1]),
                "time_s": made.time_s,
            },
        )
        if not stored:
            self.end("server_lost")  # (ended elsewhere: this process was taken for dead)
            raise TradeRefused("the game has ended.")
        self.market = trial
        self.server.deliver(pid, self.state_frame(pid))
        price = {"type": "price", "price": made.price_after, "ask": ask}
        for other in self.bettors:
            if other != pid:
                self.server.deliver(other, price)
        return made

    def done(self, pid: str) -> None:
        """``pid`` will buy no more; when every bettor has said so, the game ends."""
        if pid in self.done_buying:
            return
        self.done_buying.add(pid)
        self.server.records.record("done_buying", {}, room=self.id, participant=pid)
        self.server.deliver(pid, self.state_frame(pid))
        if self.done_buying >= set(self.bettors):
            self.end("finished")

    # ------------------------------------------------------------ the end

    def settle(self, target_human: bool) -> dict[str, float]:
        """Reveal the target and pay out (each payout stored, then shown)."""
        self._show_held_back(math.inf)  # every bettor sees the last answer before the reveal
        payouts = self.market.settle(target_human)
        for pid, paid in payouts.items():
            self.server.records.record("payout", {"paid": paid}, room=self.id, participant=pid)
        self.server.records.record(
            "market_settled",
            {
                "target_human": target_human,
                "price": self.market.maker.price,
                "bid": self.market.maker.price,
                "ask": ask_of(self.market.maker, self.market.maker.price),
                "turn": self.answered(self.chats[1]),
                "message": self.answers,
                "time_s": round(trio.current_time() - self.opened_at, 3),
            },
            room=self.id,
        )
        target = self.record.witness_pid
        if target is not None and self.spec.target_points:
            # The person target earns by how human the bettors priced them at the end.
            price = self.market.maker.price
            reward = round(self.spec.target_points * price / PAYOUT, 2)
            self.server.records.record(
                "target_reward", {"paid": reward, "price": price}, room=self.id, participant=target
            )
            frame = {"type": "reveal", "target": True, "paid": reward, "price": round(price, 2)}
            self.server.deliver(target, frame)
        for pid, paid in payouts.items():
            self.server.deliver(
                pid,
                {
                    "type": "reveal",
                    "human": target_human,
                    "paid": paid,
                    "points": round(self.market.accounts[pid].points, 2),
                },
            )
        return payouts

    def refund(self) -> None:
        """A game cut short pays back what each bettor spent in it."""
        refund_game(self.server, self.id)
        self.market.settled = True
