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
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdtt.serve.spec import read_study
from sdtt.serve.store import SqliteStore
from tests.serve.pages import tools
from tests.serve.process import free_port, start_server, stop_server
from tests.serve.tell_audit import (
    ANSWER_DELAY,
    BURST,
    BURST_GAP,
    Audit,
    Seen,
    classify,
    features,
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
) -> BrowserAudit:
    """Serve the audit's study (``python -m MODULE serve``), let ``people`` participants
    arrive in Chromium, and classify the finished rooms."""
    found = tools()
    if isinstance(found, str):
        raise RuntimeError(found)
    node, chromium = found
    spec = write_audit_spec(folder, turns=turns, seed=seed, speed=speed)
    rng = random.Random(seed)
    config = {
        "study": "audit",
        "people": people,
        "seed": seed,
        "speed": speed,
        "turns": turns,
        "gaps": [rng.expovariate(1 / ARRIVAL_GAP) for _ in range(people)],
        "answerDelay": ANSWER_DELAY,
        "burst": BURST,
        "burstGap": BURST_GAP,
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
            timeout=300 + 3 * people * ARRIVAL_GAP / speed,
            env={**os.environ, "CHROMIUM": chromium},
        )
    finally:
        stop_server(process)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-6000:])
    # Kept beside the study, to look into a failed audit.
    (folder / "pages.json").write_text(result.stdout, encoding="utf-8")
    log: dict[str, Any] = json.loads(result.stdout)
    store = SqliteStore(read_study(spec).store_path)
    try:
        rooms = {room.interrogator: room for room in store.rooms()}
    finally:
        store.close()
    received: list[dict[str, float]] = []
    seen: list[dict[str, float]] = []
    bot: list[bool] = []
    refusals: tuple[dict[str, int], dict[str, int]] = ({}, {})
    for pid, record in sorted(log["participants"].items()):
        room = rooms.get(pid)
        if record["role"] != "interrogator" or room is None or room.end_reason != "finished":
            continue
        from_frames, from_screen = _observed(record, speed)
        received.append(features(from_frames, refusals[0]))
        seen.append(features(from_screen, refusals[1]))
        bot.append(room.witness == "bot")
    return BrowserAudit(
        received=Audit(rows=received, bot=bot, correct=classify(received, bot, seed=seed)),
        seen=Audit(rows=seen, bot=bot, correct=classify(seen, bot, seed=seed)),
        errors=[str(line).splitlines()[0] for line in log["errors"]],
    )


def _observed(record: dict[str, Any], speed: float) -> tuple[Seen, Seen]:
    """One interrogator page's record as what it received and what it showed, with its
    times (milliseconds of the page's clock) in seconds of the study's clock."""
    scale = speed / 1000
    sent = [(t * scale, json.loads(raw)) for t, raw in record["sent"]]
    consented = next(t for t, frame in sent if frame["type"] == "consent")
    # The questions, not the message sent after the last turn to see how it is refused.
    asked = [t for t, f in sent if f["type"] == "send" and f["text"].startswith("question")]
    frames = [(t * scale, json.loads(raw)) for t, raw in record["frames"]]
    refused = [frame["message"] for _, frame in frames if frame["type"] == "refused"]
    shown = [(t * scale, change) for t, change in record["seen"]]
    notices = [change["message"] for _, change in shown if change["type"] == "notice"]
    return (
        Seen(frames=frames, sent=asked, consented=consented, refusal=(refused or [""])[-1]),
        Seen(frames=shown, sent=asked, consented=consented, refusal=(notices or [""])[-1]),
    )
