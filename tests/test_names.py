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


REPEATED_FILE_NAMES = frozenset(
    {
        "app.py",
        "build.py",
        "captions.py",
        "chat.py",
        "detectors.py",
        "drift.py",
        "export.py",
        "judge.py",
        "llm.py",
        "persona.py",
        "prolific.py",
        "prompts.py",
        "questionnaire.py",
        "report.py",
        "runner.py",
        "simulate.py",
        "spec.py",
        "store.py",
        "study.py",
        "topics.py",
        "wordassoc.py",
    }
)
"""File names that stand in more than one folder of ``sdtt/`` today. Most are a
command's module beside the library module it runs (``commands/simulate.py``,
``engine/simulate.py``); the list only shrinks."""


def repeated_file_names() -> dict[str, list[str]]:
    """Each module file name of ``sdtt/`` (``__init__.py`` aside) found in two or more
    folders, with those folders."""
    folders: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            folders.setdefault(path.name, set()).add(path.parent.relative_to(PACKAGE).as_posix())
    return {name: sorted(found) for name, found in folders.items() if len(found) > 1}


def test_no_new_file_name_is_repeated_across_packages() -> None:
    new = {
        name: found
        for name, found in repeated_file_names().items()
        if name not in REPEATED_FILE_NAMES
    }
    assert new == {}, (
        "a module is named like one in another package: name it after what it holds "
        f"in its own package ({new})"
    )
    gone = REPEATED_FILE_NAMES - set(repeated_file_names())
    assert not gone, f"no longer repeated, take them off REPEATED_FILE_NAMES: {sorted(gone)}"
