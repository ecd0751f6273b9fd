"""One name per idea, one home per concept: read from the source, so a second copy fails.

A "turn" is always a burst turn (method.md), so the model layer, which knows nothing of
chats' turns, does not use the word; the chat mode (burst or ping-pong) is one type with
one home, ``sdtt.dialogue.condition.ChatMode``.
"""

from __future__ import annotations

import re
from pathlib import Path

import sdtt

PACKAGE = Path(sdtt.__file__).parent


def sources(folder: Path = PACKAGE) -> dict[str, str]:
    """Every module's text under ``folder``, by its path relative to the package."""
    return {
        path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*.py"))
    }


def test_the_chat_mode_is_spelt_out_in_one_module() -> None:
    spelt = re.compile(
        r"""(?:Literal\[|\()\s*["'](?:burst["'],\s*["']pingpong|pingpong["'],\s*["']burst)["']"""
    )
    found = sorted(name for name, text in sources().items() if spelt.search(text))
    assert found == ["dialogue/condition.py"], (
        f"the modes are listed outside sdtt/dialogue/condition.py in {found}: "
        "use ChatMode or CHAT_MODES from there"
    )


def test_no_second_chat_mode_type() -> None:
    second = re.compile(r"^(\w*Mode)\s*(?::\s*\w+\s*)?=\s*Literal\[", re.M)
    found = {
        name: match.group(1)
        for name, text in sources().items()
        for match in second.finditer(text)
        if name != "dialogue/condition.py" and "burst" in text[match.end() : match.end() + 40]
    }
    assert found == {}, f"a second chat-mode type: {found}"


def test_the_model_layer_does_not_call_anything_a_turn() -> None:
    word = re.compile(r"\bturns?\b", re.I)
    hits = [
        f"{name}:{number}"
        for name, text in sources(PACKAGE / "models").items()
        for number, line in enumerate(text.splitlines(), 1)
        if word.search(line)
        # Words about the chat itself (the model's side of it) are burst turns.
        and not re.search(r"side's turn|model's turn|over the turn|turns of", line)
        and "in turn" not in line
    ]
    assert hits == [], f"'turn' names something else than a burst turn in {hits}"
