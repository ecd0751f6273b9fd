"""Every page of every mode of ``sdtt serve`` in one headless Chromium: five studies
(two-party with the bot and with a person, three-party, own person, market with a person
target) served side by side on localhost, walked by ``serve_pages.cjs``, which records at
phone, laptop and desktop size what a person can see and click (and can write
screenshots). Used by ``test_pages.py`` and ``python -m tests.serve.screenshots``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from tests.serve.helpers import MIN_INTERVAL, write_spec
from tests.serve.process import free_port, start_server, stop_server

HERE = Path(__file__).parent
NODE_MODULES = HERE.parent / "questionnaires" / "js" / "node_modules" / "playwright-core"
OWN_KEY = "own-key-for-the-page-tests"
CONSENT = (
    "You agree to chat for about five minutes.\\n\\n"
    "Read more on [our study page](https://example.org/info) or write to us. "
    "<b>Never bold</b>, [never a link](javascript:alert(1))."
)


def tools() -> tuple[str, str] | str:
    """Node and Chromium, or what is missing and how to get it."""
    node = shutil.which("node")
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if node is None or not NODE_MODULES.exists() or not Path(chromium).exists():
        return (
            "the browser tests need node, Chromium and playwright-core. "
            "Run: bash tests/questionnaires/js/install.sh"
        )
    return node, chromium


def _spec(folder: Path, game: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    turns = {"bot": 2, "human": 2, "three": 1, "own": 1, "market": 3}[game]
    share = 0.0 if game in ("bot", "three") else 1.0
    # Fast clocks, except where a person's grace period must outlast a probe; the lobby
    # waits a real minute whatever the speed (a loaded machine opens pages slowly).
    speed = {"human": 1, "three": 2}.get(game, 20)
    spec = write_spec(folder, turns=turns, share=share, timeout=60 * speed)
    lines = {
        "bot": [],
        "human": [],
        "three": ['mode = "three-party"'],
        "own": ["own_person = true"],
        "market": ['mode = "market"'],
    }[game]
    text = spec.read_text().replace("[chat]\n", f"[chat]\nspeed = {speed}\n")
    text = text.replace('title = "Chat study"', "\n".join(['title = "Chat study"', *lines]))
    text = text.replace('"You agree to chat for about five minutes."', f'"{CONSENT}"')
    if game == "bot":
        text = text.replace("[lobby]", BOT_EXTRAS + "\n[lobby]")
    if game == "human":
        text = text.replace("[lobby]", "[study.points]\nfinished = 1\n\n[lobby]")
    if game == "market":
        # (the game's clock is on the study's: two real minutes at speed 20)
        text += "\n[market]\nbettors = 1\nmax_trade = 100\nseconds = 2400\n"
    spec.write_text(text)
    return spec


BOT_EXTRAS = """feedback = true

[[study.questions]]
id = "ai_use"
text = "How often do you use AI chatbots?"
options = ["never", "monthly", "weekly", "daily"]

[[study.questions]]
id = "strategy"
text = "What did you ask to find out?"

[study.points]
finished = 1
correct_verdict = 2
"""
GAMES = ("bot", "human", "three", "own", "market")


@contextmanager
def serving_games(folder: Path) -> Iterator[dict[str, str]]:
    """One server per game (study folders under ``folder``): game -> base URL."""
    with ExitStack() as stack:
        bases = {}
        before = os.environ.get("SDTT_OWN_KEY")
        os.environ["SDTT_OWN_KEY"] = OWN_KEY
        try:
            for game in GAMES:
                port = free_port()
                process = start_server(_spec(folder / game, game), port)
                stack.callback(stop_server, process)
                bases[game] = f"http://127.0.0.1:{port}"
        finally:
            if before is None:
                del os.environ["SDTT_OWN_KEY"]
            else:
                os.environ["SDTT_OWN_KEY"] = before
        yield bases


def walk_pages(folder: Path, shots: Path | None = None) -> dict[str, Any]:
    """Serve the five games, walk their pages; the probes (see ``serve_pages.cjs``)."""
    found = tools()
    if isinstance(found, str):
        raise RuntimeError(found)
    node, chromium = found
    with serving_games(folder) as bases:
        config = {
            "games": bases,
            "study": "pilot",
            "ownKey": OWN_KEY,
            "minInterval": MIN_INTERVAL,
            "shots": str(shots) if shots else None,
        }
        result = subprocess.run(
            [node, str(HERE / "serve_pages.cjs"), json.dumps(config)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "CHROMIUM": chromium},
        )
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-6000:])
    log: dict[str, Any] = json.loads(result.stdout)
    return log
