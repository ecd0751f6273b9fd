"""A Turing Trade market game in a live room (``mode = "market"``).

Several bettors question one target (the persona bot, run by the engine as in any bot
room, or a person relayed as a human witness is) in one public chat: every bettor sees
every question and every answer. Each bettor
trades human/computer securities with the market maker of :mod:`sdtt.beliefs.market`
(Turing Trade's own, or LMSR with liquidity b). Every trade is written to the store (an
event ``trade``) before the bettor is told, and the new price goes to all bettors with no
word on who traded. "Done buying" from every bettor ends the game early; otherwise it
ends after X answered turns. The server then reveals the target and pays out (events
``payout``); points carry over a participant's games, summed from the stored events.

What a bettor's browser gets never says what the target is before the reveal: messages
are ``you`` (their own questions), ``other`` (another bettor's) or ``them`` (the
target's), prices are numbers, and accounts are their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import trio

from sdtt.beliefs.market import (
    Account,
    Kind,
    LmsrMaker,
    Maker,
    Market,
    Side,
    Trade,
    TradeRefused,
    TuringTradeMaker,
)
from sdtt.beliefs.traces import BeliefPoint, BeliefTrace
from sdtt.serve.room import LiveRoom, RoomHost
from sdtt.serve.spec import MarketSection, Study
from sdtt.serve.store import Room, StoredMessage, StudyStore

PAYING_EVENTS = ("trade", "payout")


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


def price_points(events: list[dict[str, Any]], opening: float) -> list[BeliefPoint]:
    """A market room's price history from its stored events, as belief points (source
    'price'; ``turn`` = turns answered and ``message`` = target messages sent at the trade,
    ``time_s`` = seconds since the game started), closed by the price held at the end."""
    points = [BeliefPoint(turn=0, message=0, time_s=0.0, belief=opening, source="price")]
    for event in events:
        data = event["data"]
        if event["kind"] in ("trade", "market_settled"):
            price = data["price_after" if event["kind"] == "trade" else "price"]
            points.append(
                BeliefPoint(
                    turn=data["turn"],
                    message=data["message"],
                    time_s=data["time_s"],
                    belief=min(100.0, max(0.0, price)),
                    source="price",
                )
            )
    return points


def price_trace(
    study: Study, room: Room, events: list[dict[str, Any]], fields: dict[str, Any]
) -> BeliefTrace:
    """A market room's price history as the room's belief trace (item 'room', target
    'target', source 'price'); ``fields`` holds its X, N and condition."""
    ended_early = room.end_reason not in (None, "finished")
    pseudo = fields["pseudo_turns"]
    return BeliefTrace(
        study=study.name,
        judge_id=room.id,
        judge_type="human",
        item_id=room.id,
        item_kind="room",
        target="target",
        target_human=room.witness == "human",
        x_turns=fields["x_turns"],
        pseudo_turns=pseudo,
        total_turns=None if pseudo is None else pseudo + fields["x_turns"],
        points=price_points(events, new_maker(study.spec.market).price),
        excluded=ended_early,
        exclusion_reason=f"room ended early: {room.end_reason}" if ended_early else None,
        source=f"sdtt-serve:{study.name}",
        condition={**fields["condition"], "judge_kind": "market"},
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
            server.record("payout", {"paid": paid, "refund": True}, room=room, participant=pid)


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

    def __post_init__(self) -> None:
        super().__post_init__()
        self.market = Market(new_maker(self.spec))
        self.opened_at = trio.current_time()
        self.opening = self.market.maker.price
        for pid in self.bettors:
            points = carried_points(self.server.store, pid, self.spec.start_points)
            self.market.join(Account(pid, points=points))
            self.server.record("bettor", {"points": points}, room=self.id, participant=pid)

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

    def delivered(self, message: StoredMessage) -> None:
        """After a message was shown to the bettors: the target's answers mark the chart."""
        if message.sender == "witness":
            self.answers += 1
            self.answered_at.append(len(self.market.trades) + 1)
        super().delivered(message)

    def state_frame(self, pid: str) -> dict[str, Any]:
        """The market as ``pid`` sees it: the price history, answer markers, their account."""
        account = self.market.accounts[pid]
        return {
            "type": "market",
            "prices": [self.opening, *(t.price_after for t in self.market.trades)],
            "answers": list(self.answered_at),
            "points": round(account.points, 2),
            "kind": account.kind,
            "count": account.count,
            "done": pid in self.done_buying,
            "max_trade": self.spec.max_trade,
        }

    # ------------------------------------------------------------ bettors' actions

    async def ask(self, pid: str, text: str) -> None:
        """A bettor's question: stored with who asked, shown to all, given to the bot."""
        chat = self.chats[1]
        message = self.server.store.add_message(
            self.id, "interrogator", text, self.server.wall_iso()
        )
        self.askers[message.seq] = pid
        self.server.record("question", {"seq": message.seq}, room=self.id, participant=pid)
        self.deliver(message)
        if chat.witness is not None:
            return  # a person target reads it; nothing to pass on
        await chat.opened.wait()
        if chat.session is not None and not self.ended.is_set():
            await chat.session.send_user_message(text)

    def trade(self, pid: str, kind: Kind, side: Side, count: int) -> Trade:
        """Make a trade, store it, then tell its bettor and show all the new price;
        raises :class:`TradeRefused` saying why not."""
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
        made = self.market.trade(
            pid,
            kind,
            side,
            count,
            time_s=round(trio.current_time() - self.opened_at, 3),
            message=self.answers,
        )
        self.server.record(
            "trade",
            {
                "kind": made.kind,
                "side": made.side,
                "count": made.count,
                "cost": made.cost,
                "price_after": made.price_after,
                "message": made.message,
                "turn": self.answered(self.chats[1]),
                "time_s": made.time_s,
            },
            room=self.id,
            participant=pid,
        )
        self.server.deliver(pid, self.state_frame(pid))
        price = {"type": "price", "price": made.price_after}
        for other in self.bettors:
            if other != pid:
                self.server.deliver(other, price)
        return made

    def done(self, pid: str) -> None:
        """``pid`` will buy no more; when every bettor has said so, the game ends."""
        if pid in self.done_buying:
            return
        self.done_buying.add(pid)
        self.server.record("done_buying", {}, room=self.id, participant=pid)
        self.server.deliver(pid, self.state_frame(pid))
        if self.done_buying >= set(self.bettors):
            self.end("finished")

    # ------------------------------------------------------------ the end

    def settle(self, target_human: bool) -> dict[str, float]:
        """Reveal the target and pay out (each payout stored, then shown)."""
        payouts = self.market.settle(target_human)
        for pid, paid in payouts.items():
            self.server.record("payout", {"paid": paid}, room=self.id, participant=pid)
        self.server.record(
            "market_settled",
            {
                "target_human": target_human,
                "price": self.market.maker.price,
                "turn": self.answered(self.chats[1]),
                "message": self.answers,
                "time_s": round(trio.current_time() - self.opened_at, 3),
            },
            room=self.id,
        )
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
