"""The tell audit (:mod:`tests.serve.tell_audit`) with the real study page in headless
Chromium.

A real ``sdtt serve`` process runs the audit's study with its clock ``speed`` times real
time; ``serve_audit.cjs`` opens the study page for each arriving participant, who plays
the role the server gives them with the same script as the virtual-clock audit
(interrogators ask and send one message too many, person witnesses answer, typing
meanwhile). Each finished room's interrogator page gives two rows of the same features,
in the study's seconds: from the websocket frames the page received (``received``), and
from what the page showed (``seen``: the section on screen, the typing indicator
appearing and disappearing, each answer appearing, the notice that refused the extra
message). Both are classified as in the virtual-clock audit; the witness (bot or person)
is read from the study's store afterwards.

In three-party rooms the interrogator's page has two chats, one with the bot and one with
a person; each chat gives its own row of the features (the lobby wait is the room's), and
the classifier is asked which of the two chats is the bot's, from both rows of a room.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdtt.serve.spec import read_study
from sdtt.serve.store import SqliteStore
from tests.serve.pages import tools
from tests.serve.process import free_port, start_server, stop_server
from tests.serve.tell_audit import (
    Audit,
    Seen,
    classify,
    classify_pairs,
    features,
    person_answer,
    write_audit_spec,
)

HERE = Path(__file__).parent
ARRIVAL_GAP = 15.0
"""Mean seconds (of the study's clock) between two participants' arrivals (half the
virtual-clock audit's: more rooms in a test's minutes)."""


@dataclass(frozen=True)
class BrowserAudit:
    """The audit of what interrogators' pages received and of what they showed."""

    received: Audit
    seen: Audit
    errors: list[str]
    """What went wrong in the pages (script errors, timeouts), one line each."""


def play_in_chromium(
    folder: Path,
    *,
    people: int,
    turns: int = 2,
    seed: int = 0,
    speed: float = 10.0,
    module: str = "sdtt.cli",
    mode: str = "two-party",
) -> BrowserAudit:
    """Serve the audit's study (``python -m MODULE serve``) in ``mode`` (two- or
    three-party), let ``people`` participants arrive in Chromium, and classify the
    finished rooms (in three-party: which of the interrogator's chats is the bot's)."""
    found = tools()
    if isinstance(found, str):
        raise RuntimeError(found)
    node, chromium = found
    spec = write_audit_spec(folder, turns=turns, seed=seed, speed=speed, mode=mode)
    rng = random.Random(seed)
    config = {
        "study": "audit",
        "people": people,
        "seed": seed,
        "speed": speed,
        "turns": turns,
        "gaps": [rng.expovariate(1 / ARRIVAL_GAP) for _ in range(people)],
        # How each participant, as a person witness, answers each question in turn.
        "plans": [
            [person_answer(random.Random(f"{seed}:{n}:{k}")) for k in range(turns + 2)]
            for n in range(people)
        ],
    }
    process = start_server(spec, port := free_port(), module=module)
    try:
        result = subprocess.run(
            [
                node,
                str(HERE / "serve_audit.cjs"),
                json.dumps(config | {"base": f"http://127.0.0.1:{port}"}),
            ],
            capture_output=True,
            text=True,
            timeout=900 + 3 * people * ARRIVAL_GAP / speed,  # (past the pages' own limit)
            env={**os.environ, "CHROMIUM": chromium},
        )
    finally:
        stop_server(process)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-6000:])
    # Kept beside the study, to look into a failed audit (audit_pages reads it again).
    (folder / "pages.json").write_text(result.stdout, encoding="utf-8")
    return audit_pages(folder, spec, speed=speed, seed=seed, mode=mode)


def audit_pages(
    folder: Path, spec: Path, *, speed: float, seed: int = 0, mode: str = "two-party"
) -> BrowserAudit:
    """The audit of a played study: its pages' ``pages.json`` in ``folder`` and the
    rooms of its store (``spec``'s)."""
    log: dict[str, Any] = json.loads((folder / "pages.json").read_text(encoding="utf-8"))
    store = SqliteStore(read_study(spec).store_path)
    try:
        rooms = {room.interrogator: room for room in store.rooms()}
    finally:
        store.close()
    three = mode == "three-party"
    received: list[dict[str, float]] = []
    seen: list[dict[str, float]] = []
    bot: list[bool] = []
    refusals: tuple[dict[str, int], dict[str, int]] = ({}, {})
    for pid, record in sorted(log["participants"].items()):
        room = rooms.get(pid)
        if record["role"] != "interrogator" or room is None or room.end_reason != "finished":
            continue
        if three != (room.witness == "both"):
            continue  # (three-party: a participant the lobby paired with no one)
        for chat in (1, 2) if three else (1,):
            from_frames, from_screen = _observed(record, speed, chat)
            received.append(features(from_frames, refusals[0]))
            seen.append(features(from_screen, refusals[1]))
            bot.append(room.witness == "bot" or room.bot_position == chat)
    return BrowserAudit(
        received=_classified(received, bot, three, seed),
        seen=_classified(seen, bot, three, seed),
        errors=[str(line).splitlines()[0] for line in log["errors"]],
    )


def _classified(rows: list[dict[str, float]], bot: list[bool], three: bool, seed: int) -> Audit:
    """The audit of ``rows`` (three-party: chat 1's and chat 2's of each room in turn)."""
    if not three:
        return Audit(rows=rows, bot=bot, correct=classify(rows, bot, seed=seed))
    pairs = list(zip(rows[::2], rows[1::2], strict=True))
    correct = classify_pairs(pairs, bot[::2], seed=seed)
    return Audit(rows=rows, bot=bot, correct=correct, cases=len(pairs))


def _observed(record: dict[str, Any], speed: float, chat: int) -> tuple[Seen, Seen]:
    """What one interrogator's page received and showed of chat ``chat``, with its times
    (milliseconds of the page's clock) in seconds of the study's clock."""
    scale = speed / 1000

    def of_chat(timed: list[list[Any]]) -> list[tuple[float, dict[str, Any]]]:
        frames = [(t * scale, json.loads(f) if isinstance(f, str) else f) for t, f in timed]
        return [
            (t, f)
            for t, f in frames
            if f["type"] not in ("message", "typing", "send") or f.get("chat", 1) == chat
        ]

    sent = of_chat(record["sent"])
    texts = iter(
        [
            f["text"]
            for _, f in of_chat(record["frames"])
            if f["type"] == "message" and f["from"] == "them"
        ]
    )
    shown = [(t, _named_as_received(f, texts)) for t, f in of_chat(record["seen"])]
    consented = next(t for t, frame in sent if frame["type"] == "consent")
    # The questions, not the message sent after the last turn to see how it is refused.
    asked = [t for t, f in sent if f["type"] == "send" and f["text"].startswith("question")]
    extras = [extra for _, extra in record["extras"] if extra["chat"] == chat]
    return (
        Seen(
            frames=of_chat(record["frames"]),
            sent=asked,
            consented=consented,
            refusal=extras[-1]["received"] if extras else "",
        ),
        Seen(
            frames=shown,
            sent=asked,
            consented=consented,
            refusal=extras[-1]["shown"] if extras else "",
        ),
    )


def _named_as_received(frame: dict[str, Any], texts: Iterator[str]) -> dict[str, Any]:
    """What the page showed, named as its frame is: an answer with its text (the page's
    record holds none: the one received in the same place) and the indicator as the other
    side's."""
    if frame["type"] == "message" and frame["from"] == "them":
        return frame | {"text": next(texts, "")}
    if frame["type"] == "typing":
        return {"from": "them", **frame}
    return frame
