"""The fenced ``bash`` blocks of the documentation pages, and how they run in the suite.

A block runs unless the line before its fence (blank lines aside) is a skip marker naming
why, e.g. ``<!-- skip: needs a key -->``; docs/contributing-docs.md documents it. The
blocks of one page run in order in one temporary folder (a tutorial's steps build on each
other), with the mock models and no API key.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SKIP = re.compile(r"^<!--\s*skip:\s*(?P<reason>.+?)\s*-->$")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\s*$")
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    page: Path
    line: int
    lang: str
    code: str
    skip: str | None
    """Why it does not run, from its marker; ``None`` when it runs."""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order."""
    found = []
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening or not opening["lang"]:
            index += 1
            continue
        indent = opening["indent"]
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        code = "\n".join(line.removeprefix(indent) for line in lines[index + 1 : end])
        before = index - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        marker = SKIP.match(lines[before].strip()) if before >= 0 else None
        found.append(
            Block(page, index + 1, opening["lang"], code, marker["reason"] if marker else None)
        )
        index = end + 1
    return found


def pages() -> list[Path]:
    """The documentation pages written by hand (the CLI reference is generated), and the
    README, whose quick start must run as written too."""
    found = sorted(path for path in DOCS.rglob("*.md") if "hooks" not in path.parts)
    return [*found, ROOT / "README.md"]


def workspace(folder: Path) -> dict[str, str]:
    """Lay out ``folder`` as a user's checkout would look (examples, fixtures, questionnaire
    spec) and return the environment the blocks run in: this checkout's ``sdtt`` first on
    the path, no API keys."""
    for name in ("examples", "questionnaires", "topics"):
        shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("*.pyc"))
    (folder / "tests").symlink_to(ROOT / "tests")
    bin_dir = folder / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "sdtt"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m sdtt "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    env = {key: value for key, value in os.environ.items() if key not in KEYS}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    env["COLUMNS"] = "100"
    return env


def run(block: Block, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run one bash block in ``folder`` as a user's shell would, but stopping at the first
    command that fails (``-e``; no ``pipefail``: ``sdtt ... | head`` is fine pasted).
    The timeout only stops a hung block."""
    return subprocess.run(
        ["bash", "-eu", "-c", block.code],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
        check=False,
    )
